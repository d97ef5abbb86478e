#!/bin/sh
# A real one-host Grid Engine for the tests: Debian's sge_qmaster and sge_execd, run as
# this user's own processes from a folder of its own. Nothing outside that folder is
# read or written: its own SGE_ROOT (links to the installed binaries) and cell, its own
# configuration, spool, accounting file and ports. The installer (install_qmaster,
# inst_sge) is not used: it asks questions and writes to the system's cell; the cell is
# made here with the same tools Debian's package uses (spoolinit, spooldefaults).
#
#   gridengine-fixture.sh start DIR   writes everything into DIR, starts both daemons,
#                                     waits until the queue takes jobs; writes DIR/env
#                                     (SGE_ROOT, SGE_CELL, SGE_QMASTER_PORT,
#                                     SGE_EXECD_PORT: what a client needs) and prints it;
#                                     on failure says which daemon did not start and
#                                     prints its messages
#   gridengine-fixture.sh stop DIR    deletes every job, stops both daemons
#
# The host is known to the cell as "localhost" (its own name is an alias of it), so
# every client and daemon reaches the others on 127.0.0.1, whatever this machine's name
# resolves to. The queue is "test".
set -u

LIBEXEC=${SGE_LIBEXEC:-/usr/lib/gridengine}
SHARE=${SGE_SHARE:-/usr/share/gridengine}
CELL=ampbench

fail() {
    printf 'gridengine-fixture: %s\n' "$1" >&2
    for log in ${2:-}; do
        if [ -s "$log" ]; then
            printf -- '--- %s (last 40 lines) ---\n' "$log" >&2
            tail -n 40 "$log" >&2
            printf -- '--- end of %s ---\n' "$log" >&2
        fi
    done
    exit 1
}

absolute() {
    mkdir -p "$1" || fail "cannot create $1"
    (cd "$1" && pwd -P) || fail "cannot enter $1"
}

free_port() {
    # Two ports (qmaster, execd) that nothing listens on now.
    while :; do
        port=$(shuf -i 30000-39999 -n 1)
        if ! (ss -Hltn 2>/dev/null | awk '{print $4}' | grep -q ":$port\$") &&
            ! (ss -Hltn 2>/dev/null | awk '{print $4}' | grep -q ":$((port + 1))\$"); then
            echo "$port"
            return
        fi
    done
}

# Waits up to $2 tenths of a second for file $1 to hold a live pid.
wait_pid_file() {
    i=0
    while [ "$i" -lt "$2" ]; do
        if [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; then
            return 0
        fi
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

start() {
    dir=$(absolute "$1") || exit 1
    for tool in "$LIBEXEC/sge_qmaster" "$LIBEXEC/sge_execd" "$LIBEXEC/spoolinit" \
        "$LIBEXEC/spooldefaults"; do
        [ -x "$tool" ] || fail "$tool is missing: install gridengine-master and gridengine-exec (./workbench.sh installs them)"
    done
    for tool in qsub qstat qacct qdel qconf qmod; do
        command -v "$tool" >/dev/null || fail "$tool is missing: install gridengine-client"
    done
    user=$(id -un) || fail "this user has no name (id -un)"
    host=$(hostname) || fail "this machine has no host name (hostname)"
    # A cluster an earlier run left in this folder is stopped and made anew.
    stop "$dir"
    rm -rf "$dir/root" "$dir/spool" "$dir/log" "$dir/env"
    root="$dir/root"
    mkdir -p "$root/$CELL/common" "$dir/spool/qmaster" "$dir/spool/execd" "$dir/log" ||
        fail "cannot create folders in $dir"
    # SGE_ROOT: the installed architecture folders; the cell is this folder's own.
    for part in bin lib utilbin; do
        [ -e "$root/$part" ] || ln -s "/var/lib/gridengine/$part" "$root/$part" ||
            fail "cannot link $root/$part"
    done
    [ -e "$root/util" ] || ln -s "$SHARE/util" "$root/util" || fail "cannot link $root/util"
    common="$root/$CELL/common"
    cat >"$common/bootstrap" <<EOF
admin_user              $user
default_domain          none
ignore_fqdn             true
spooling_method         classic
spooling_lib            libspoolc
spooling_params         $common;$dir/spool/qmaster
binary_path             /usr/sbin
qmaster_spool_dir       $dir/spool/qmaster
security_mode           none
listener_threads        2
worker_threads          2
scheduler_threads       1
EOF
    echo localhost >"$common/act_qmaster"
    aliases=localhost
    for name in "$host" "$(hostname -s 2>/dev/null)" "$(hostname -f 2>/dev/null)"; do
        case " $aliases " in *" $name "*) ;; *) [ -n "$name" ] && aliases="$aliases $name" ;; esac
    done
    echo "$aliases" >"$common/host_aliases"

    port=$(free_port)
    export SGE_ROOT="$root" SGE_CELL="$CELL" SGE_QMASTER_PORT="$port" SGE_EXECD_PORT=$((port + 1))
    cat >"$dir/env" <<EOF
SGE_ROOT=$root
SGE_CELL=$CELL
SGE_QMASTER_PORT=$port
SGE_EXECD_PORT=$((port + 1))
EOF

    # The cluster's configuration, from Debian's default with what a test needs: jobs of
    # any uid, no mail, loads reported every 2 s, accounting written at once (qacct is
    # how a task's end is known), and a qdel'd task warned (SIGUSR2) 10 s before its kill.
    sed -e "s|^execd_spool_dir .*|execd_spool_dir $dir/spool/execd|" \
        -e 's|^min_uid .*|min_uid 0|' -e 's|^min_gid .*|min_gid 0|' \
        -e 's|^mailer .*|mailer /bin/true|' \
        -e 's|^load_report_time .*|load_report_time 00:00:02|' \
        -e 's|^max_unheard .*|max_unheard 00:01:00|' \
        -e 's|^reporting_params .*|reporting_params accounting=true reporting=false flush_time=00:00:01 joblog=false sharelog=00:00:00 accounting_flush_time=00:00:00|' \
        "$SHARE/default-configuration" >"$dir/configuration" ||
        fail "cannot read $SHARE/default-configuration"
    {
        "$LIBEXEC/spoolinit" classic libspoolc "$common;$dir/spool/qmaster" init &&
            "$LIBEXEC/spooldefaults" configuration "$dir/configuration" &&
            "$LIBEXEC/spooldefaults" complexes "$SHARE/util/resources/centry" &&
            "$LIBEXEC/spooldefaults" usersets "$SHARE/util/resources/usersets" &&
            "$LIBEXEC/spooldefaults" managers "$user" &&
            "$LIBEXEC/spooldefaults" adminhosts localhost
    } >"$dir/log/init.out" 2>&1 || fail "the cell could not be made" "$dir/log/init.out"

    "$LIBEXEC/sge_qmaster" >"$dir/log/qmaster.out" 2>&1 ||
        fail "sge_qmaster did not start" "$dir/log/qmaster.out $dir/spool/qmaster/messages"
    wait_pid_file "$dir/spool/qmaster/qmaster.pid" 600 ||
        fail "sge_qmaster wrote no pid file within 60 s" "$dir/log/qmaster.out $dir/spool/qmaster/messages"
    # Until the qmaster answers.
    i=0
    while ! qconf -sh >/dev/null 2>"$dir/log/qconf.err"; do
        i=$((i + 1))
        [ "$i" -lt 300 ] || fail "sge_qmaster did not answer within 30 s" \
            "$dir/log/qconf.err $dir/spool/qmaster/messages"
        sleep 0.1
    done

    if ! qconf -ss 2>/dev/null | grep -qx localhost; then
        qconf -as localhost >"$dir/log/qconf.out" 2>&1 ||
            fail "localhost was refused as a submit host" "$dir/log/qconf.out"
    fi
    # The scheduler every second, not every 15 s: the tests wait for it.
    qconf -ssconf | sed -e 's/^schedule_interval .*/schedule_interval 0:0:1/' \
        -e 's/^flush_submit_sec .*/flush_submit_sec 1/' \
        -e 's/^flush_finish_sec .*/flush_finish_sec 1/' \
        -e 's/^job_load_adjustments .*/job_load_adjustments NONE/' \
        -e 's/^load_adjustment_decay_time .*/load_adjustment_decay_time 0:0:0/' >"$dir/scheduler" &&
        qconf -Msconf "$dir/scheduler" >"$dir/log/qconf.out" 2>&1 ||
        fail "the scheduler's configuration was refused" "$dir/log/qconf.out"
    cat >"$dir/exechost" <<EOF
hostname              localhost
load_scaling          NONE
complex_values        NONE
user_lists            NONE
xuser_lists           NONE
projects              NONE
xprojects             NONE
usage_scaling         NONE
report_variables      NONE
EOF
    if ! qconf -se localhost >/dev/null 2>&1; then
        qconf -Ae "$dir/exechost" >"$dir/log/qconf.out" 2>&1 ||
            fail "the execution host was refused" "$dir/log/qconf.out"
    fi
    # Four slots whatever the cores (tasks oversubscribe, as the Slurm fixture's node),
    # any load, rerunnable (qmod -rj), sh for the scripts, 10 s between SIGUSR2 and SIGKILL.
    qconf -sq 2>/dev/null | sed -e 's/^qname .*/qname test/' -e 's/^hostlist .*/hostlist localhost/' \
        -e 's/^slots .*/slots 4/' -e 's/^pe_list .*/pe_list NONE/' -e 's/^qtype .*/qtype BATCH/' -e 's/^load_thresholds .*/load_thresholds NONE/' \
        -e 's/^rerun .*/rerun TRUE/' -e 's|^shell .*|shell /bin/sh|' \
        -e 's/^shell_start_mode .*/shell_start_mode unix_behavior/' \
        -e 's/^notify .*/notify 00:00:10/' -e 's|^tmpdir .*|tmpdir /tmp|' >"$dir/queue"
    if ! qconf -sq test >/dev/null 2>&1; then
        qconf -Aq "$dir/queue" >"$dir/log/qconf.out" 2>&1 ||
            fail "the queue was refused" "$dir/log/qconf.out $dir/queue"
    fi

    "$LIBEXEC/sge_execd" >"$dir/log/execd.out" 2>&1 ||
        fail "sge_execd did not start" "$dir/log/execd.out $dir/spool/execd/localhost/messages"
    wait_pid_file "$dir/spool/execd/localhost/execd.pid" 600 ||
        fail "sge_execd wrote no pid file within 60 s" \
            "$dir/log/execd.out $dir/spool/execd/localhost/messages"

    # Up once the queue instance is neither unknown nor in error: the qmaster heard the
    # execd's load report.
    i=0
    states=
    while [ "$i" -lt 1200 ]; do
        states=$(qstat -f -q test -xml 2>"$dir/log/qstat.err" | sed -n 's|.*<state>\(.*\)</state>.*|\1|p')
        if qstat -f -q test -xml 2>/dev/null | grep -q '<name>test@localhost</name>' &&
            [ -z "$states" ]; then
            cat "$dir/env"
            return 0
        fi
        sleep 0.1
        i=$((i + 1))
    done
    fail "the queue test@localhost did not take jobs within 120 s (its state: \"$states\")" \
        "$dir/log/qstat.err $dir/spool/qmaster/messages $dir/spool/execd/localhost/messages"
}

# Stops the daemon of pid file $1: SIGTERM, SIGKILL after $2 tenths of a second.
stop_pid_file() {
    [ -s "$1" ] || return 0
    pid=$(cat "$1")
    kill -TERM "$pid" 2>/dev/null
    i=0
    while [ "$i" -lt "$2" ] && kill -0 "$pid" 2>/dev/null &&
        [ "$(cut -d' ' -f3 /proc/"$pid"/stat 2>/dev/null)" != Z ]; do
        sleep 0.1
        i=$((i + 1))
    done
    kill -KILL "$pid" 2>/dev/null
    rm -f "$1"
}

stop() {
    dir=$1
    [ -d "$dir" ] || return 0
    if [ -s "$dir/env" ] && [ -s "$dir/spool/qmaster/qmaster.pid" ]; then
        set -a
        . "$dir/env"
        set +a
        # The jobs first, so that no task outlives the execd.
        qdel -f -u "$(id -un)" >/dev/null 2>&1
        i=0
        while [ "$i" -lt 600 ] && [ -n "$(qstat -u "$(id -un)" 2>/dev/null)" ]; do
            sleep 0.1
            i=$((i + 1))
        done
    fi
    # No job is left and the cell is made anew at each start: the qmaster's orderly
    # shutdown (some 8 s) is not waited for.
    stop_pid_file "$dir/spool/execd/localhost/execd.pid" 50
    stop_pid_file "$dir/spool/qmaster/qmaster.pid" 10
    return 0
}

case "${1:-}" in
start) [ $# -eq 2 ] || fail "usage: gridengine-fixture.sh start DIR"; start "$2" ;;
stop) [ $# -eq 2 ] || fail "usage: gridengine-fixture.sh stop DIR"; stop "$2" ;;
*) fail "usage: gridengine-fixture.sh start|stop DIR" ;;
esac
