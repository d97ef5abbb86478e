#!/bin/sh
# A real one-node Slurm for the tests: Debian's munged, slurmctld and slurmd, run as
# this user's own processes from a folder of its own. Nothing outside that folder is
# read or written: its own munge key and socket, its own slurm.conf (CPU only, this
# machine as the one node), state, spool, logs and pid files.
#
#   slurm-fixture.sh start DIR   writes everything into DIR, starts the three daemons,
#                                waits until the node takes jobs; prints the slurm.conf
#                                path (give it to clients as SLURM_CONF); on failure
#                                says which daemon did not start and prints its log
#   slurm-fixture.sh stop DIR    stops every daemon it started (and their jobs)
#
# Clients: SLURM_CONF=DIR/slurm.conf sbatch|squeue|scancel ...; the partition is "test".
set -u

MUNGED=${MUNGED:-/usr/sbin/munged}
SLURMCTLD=${SLURMCTLD:-/usr/sbin/slurmctld}
SLURMD=${SLURMD:-/usr/sbin/slurmd}

fail() {
    printf 'slurm-fixture: %s\n' "$1" >&2
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
    # Two ports (controller, node daemon) that nothing listens on now.
    while :; do
        port=$(shuf -i 20000-29999 -n 1)
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
    for tool in "$MUNGED" "$SLURMCTLD" "$SLURMD"; do
        [ -x "$tool" ] || fail "$tool is missing: install munge and slurm-wlm (./workbench.sh installs them)"
    done
    for tool in sbatch squeue scancel sinfo scontrol; do
        command -v "$tool" >/dev/null || fail "$tool is missing: install slurm-client (slurm-wlm)"
    done
    user=$(id -un) || fail "this user has no name (id -un)"
    host=$(hostname -s) || fail "this machine has no host name (hostname -s)"
    mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" || fail "cannot create folders in $dir"
    chmod 0700 "$dir/munge" "$dir/state" "$dir/spool"

    # munged refuses a key that others can read and a socket folder others can write.
    if [ ! -s "$dir/munge/munge.key" ]; then
        dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null ||
            fail "cannot write the munge key $dir/munge/munge.key"
    fi
    chmod 0400 "$dir/munge/munge.key"
    # A socket's path holds at most 107 bytes: a long DIR gets its socket in a short
    # folder of its own, removed by stop.
    socket="$dir/munge/munge.socket"
    if [ ${#socket} -gt 100 ]; then
        short=$(mktemp -d /tmp/ampbench-munge.XXXXXX) || fail "cannot create a folder for munged's socket"
        echo "$short" >"$dir/munge/socket-dir"
        socket="$short/munge.socket"
    fi
    "$MUNGED" --force --key-file="$dir/munge/munge.key" --socket="$socket" \
        --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/munge/munged.seed" >"$dir/log/munged.out" 2>&1 ||
        fail "munged did not start" "$dir/log/munged.out $dir/log/munged.log"
    wait_pid_file "$dir/munge/munged.pid" 600 ||
        fail "munged wrote no pid file within 60 s" "$dir/log/munged.out $dir/log/munged.log"

    port=$(free_port)
    cpus=$(nproc)
    memory=$(awk '/^MemTotal:/ {print int($2 / 1024 / 2)}' /proc/meminfo)
    cat >"$dir/slurm.conf" <<EOF
ClusterName=ampbench-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
# cred_expire: how long a requeued task waits before it may start again (120 s by default)
AuthInfo=socket=$socket,cred_expire=10
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
# Pending tasks (a requeued one once its BeginTime has passed) are looked at every
# second, not every 30-60 s: the tests wait for them.
SchedulerParameters=bf_interval=1,sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MinJobAge=600
KillWait=5
OverTimeLimit=0
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
MessageTimeout=20
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
    export SLURM_CONF="$dir/slurm.conf"

    : >"$dir/log/slurmctld.log"
    "$SLURMCTLD" -i -f "$dir/slurm.conf" >"$dir/log/slurmctld.out" 2>&1 ||
        fail "slurmctld did not start" "$dir/log/slurmctld.out $dir/log/slurmctld.log"
    wait_pid_file "$dir/slurmctld.pid" 600 ||
        fail "slurmctld wrote no pid file within 60 s" "$dir/log/slurmctld.out $dir/log/slurmctld.log"
    : >"$dir/log/slurmd.log"
    "$SLURMD" -f "$dir/slurm.conf" -N "$host" >"$dir/log/slurmd.out" 2>&1 ||
        fail "slurmd did not start" "$dir/log/slurmd.out $dir/log/slurmd.log"
    wait_pid_file "$dir/slurmd.pid" 600 ||
        fail "slurmd wrote no pid file within 60 s" "$dir/log/slurmd.out $dir/log/slurmd.log"

    # Up once the node is idle: the controller hears the node daemon.
    i=0
    state=
    while [ "$i" -lt 1200 ]; do
        state=$(sinfo -h -n "$host" -o %T 2>"$dir/log/sinfo.err")
        case "$state" in
        idle* | mixed* | allocated*) echo "$dir/slurm.conf"; return 0 ;;
        esac
        sleep 0.1
        i=$((i + 1))
    done
    fail "the node $host did not become idle within 120 s (sinfo says \"$state\")" \
        "$dir/log/sinfo.err $dir/log/slurmctld.log $dir/log/slurmd.log"
}

stop_pid_file() {
    [ -s "$1" ] || return 0
    pid=$(cat "$1")
    kill -TERM "$pid" 2>/dev/null
    i=0
    while [ "$i" -lt 100 ] && kill -0 "$pid" 2>/dev/null &&
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
    if [ -s "$dir/slurm.conf" ] && [ -s "$dir/slurmctld.pid" ]; then
        # The jobs first, so that no task outlives the node daemon.
        SLURM_CONF="$dir/slurm.conf" scancel --quiet --user="$(id -un)" 2>/dev/null
        # Until the controller lists none of them (a minute at most).
        i=0
        while [ "$i" -lt 600 ] &&
            [ -n "$(SLURM_CONF="$dir/slurm.conf" squeue -h -u "$(id -un)" 2>/dev/null)" ]; do
            sleep 0.1
            i=$((i + 1))
        done
    fi
    stop_pid_file "$dir/slurmd.pid"
    stop_pid_file "$dir/slurmctld.pid"
    stop_pid_file "$dir/munge/munged.pid"
    if [ -s "$dir/munge/socket-dir" ]; then
        rm -rf "$(cat "$dir/munge/socket-dir")"
        rm -f "$dir/munge/socket-dir"
    fi
    return 0
}

case "${1:-}" in
start) [ $# -eq 2 ] || fail "usage: slurm-fixture.sh start DIR"; start "$2" ;;
stop) [ $# -eq 2 ] || fail "usage: slurm-fixture.sh stop DIR"; stop "$2" ;;
*) fail "usage: slurm-fixture.sh start|stop DIR" ;;
esac
