#!/bin/sh
# A real OpenSSH server for the tests, on 127.0.0.1, run as this user's own process
# from a folder of its own. Nothing outside that folder is read or written (no system
# configuration, no ~/.ssh), apart from creating sshd's privilege-separation
# directory /run/sshd when it is missing.
#
#   sshd-fixture.sh prepare DIR PORT  keys, authorized_keys and both configs in DIR
#   sshd-fixture.sh serve DIR         becomes the server (exec sshd -D), log in DIR/sshd.log
#   sshd-fixture.sh start DIR [PORT]  prepare, serve in the background, check a login;
#                                     prints the port; fails printing sshd's log
#   sshd-fixture.sh stop DIR          ends every connection it serves, then the server
#
# In DIR: client_key (authorized), refused_key (not authorized), ssh_config (the
# client's: this server as the only known host, no agent, BatchMode). A client is
#   ssh -F DIR/ssh_config -i DIR/client_key -p PORT USER@127.0.0.1
set -u

SSHD=${SSHD:-/usr/sbin/sshd}

fail() {
    printf 'sshd-fixture: %s\n' "$1" >&2
    if [ -n "${2:-}" ] && [ -s "$2" ]; then
        printf -- '--- %s ---\n' "$2" >&2
        cat "$2" >&2
        printf -- '--- end of %s ---\n' "$2" >&2
    fi
    exit 1
}

absolute() {
    mkdir -p "$1" || fail "cannot create $1"
    (cd "$1" && pwd -P) || fail "cannot enter $1"
}

prepare() {
    dir=$(absolute "$1") || exit 1
    port=$2
    case "$port" in
    '' | *[!0-9]*) fail "the port \"$port\" is not a number" ;;
    esac
    [ -x "$SSHD" ] || fail "$SSHD is missing: install openssh-server (./workbench.sh installs it)"
    command -v ssh-keygen >/dev/null || fail "ssh-keygen is missing: install openssh-client"
    command -v ssh >/dev/null || fail "ssh is missing: install openssh-client"
    user=$(id -un) || fail "this user has no name (id -un)"

    # sshd will not start without its privilege-separation directory.
    if [ ! -d /run/sshd ]; then
        mkdir -m 0755 /run/sshd 2>/dev/null ||
            fail "/run/sshd (sshd's privilege-separation directory) is missing and $user cannot create it"
    fi

    for key in host_key client_key refused_key; do
        if [ ! -s "$dir/$key" ]; then
            ssh-keygen -q -t ed25519 -N '' -C "ampbench-test-$key" -f "$dir/$key" \
                >"$dir/keygen.log" 2>&1 || fail "ssh-keygen could not make $dir/$key" "$dir/keygen.log"
        fi
    done
    if ! cp "$dir/client_key.pub" "$dir/authorized_keys" || ! chmod 600 "$dir/authorized_keys"; then
        fail "cannot write $dir/authorized_keys"
    fi

    cat >"$dir/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
HostbasedAuthentication no
PermitRootLogin prohibit-password
AllowUsers $user
PermitUserEnvironment no
AllowTcpForwarding no
AllowAgentForwarding no
X11Forwarding no
PermitTunnel no
PrintMotd no
PrintLastLog no
UseDNS no
MaxStartups 64
MaxSessions 64
LogLevel VERBOSE
EOF
    "$SSHD" -t -f "$dir/sshd_config" >"$dir/sshd-check.log" 2>&1 ||
        fail "sshd refused its configuration $dir/sshd_config" "$dir/sshd-check.log"

    printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$dir/host_key.pub")" >"$dir/known_hosts"
    cat >"$dir/ssh_config" <<EOF
Host *
    UserKnownHostsFile $dir/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    CheckHostIP no
    UpdateHostKeys no
    IdentitiesOnly yes
    IdentityAgent none
    PasswordAuthentication no
    KbdInteractiveAuthentication no
    BatchMode yes
    LogLevel ERROR
EOF
    echo "$port" >"$dir/port"
    rm -f "$dir/sshd.pid"
}

serve() {
    dir=$(absolute "$1") || exit 1
    [ -s "$dir/sshd_config" ] || fail "no $dir/sshd_config: run prepare first"
    exec "$SSHD" -D -e -f "$dir/sshd_config" </dev/null >>"$dir/sshd.log" 2>&1
}

start() {
    dir=$(absolute "$1") || exit 1
    tries=0
    while :; do
        tries=$((tries + 1))
        port=${2:-$(shuf -i 30000-60999 -n 1)}
        prepare "$dir" "$port"
        : >"$dir/sshd.log"
        "$SSHD" -D -e -f "$dir/sshd_config" </dev/null >>"$dir/sshd.log" 2>&1 &
        pid=$!
        echo "$pid" >"$dir/sshd.bgpid"
        # Up once the pid file is written (after the bind); gone when the port was taken.
        i=0
        while [ "$i" -lt 2400 ] && [ ! -s "$dir/sshd.pid" ] && kill -0 "$pid" 2>/dev/null; do
            sleep 0.05
            i=$((i + 1))
        done
        [ -s "$dir/sshd.pid" ] && kill -0 "$pid" 2>/dev/null && break
        if kill -0 "$pid" 2>/dev/null; then
            stop "$dir"
            fail "sshd (pid $pid) did not come up within 120 s" "$dir/sshd.log"
        fi
        rm -f "$dir/sshd.bgpid"
        if [ -n "${2:-}" ] || [ "$tries" -ge 10 ] || ! grep -q "Address already in use" "$dir/sshd.log"; then
            fail "sshd exited at once" "$dir/sshd.log"
        fi
    done
    user=$(id -un)
    if ! out=$(ssh -F "$dir/ssh_config" -i "$dir/client_key" -p "$port" -- "$user@127.0.0.1" \
        'echo fixture-ok' </dev/null 2>&1) || [ "$out" != fixture-ok ]; then
        printf 'ssh said: %s\n' "$out" >>"$dir/sshd.log"
        stop "$dir"
        fail "sshd on 127.0.0.1:$port did not accept the fixture's own key" "$dir/sshd.log"
    fi
    echo "$port"
}

stop() {
    dir=$1
    [ -s "$dir/sshd.bgpid" ] || return 0
    pid=$(cat "$dir/sshd.bgpid")
    # The connections first (each served by a child of the listener), then the listener.
    for child in $(pgrep -P "$pid"); do
        kill -KILL "$child" 2>/dev/null
    done
    kill -TERM "$pid" 2>/dev/null
    i=0
    while [ "$i" -lt 100 ] && kill -0 "$pid" 2>/dev/null &&
        [ "$(cut -d' ' -f3 /proc/"$pid"/stat 2>/dev/null)" != Z ]; do
        sleep 0.05
        i=$((i + 1))
    done
    kill -KILL "$pid" 2>/dev/null
    rm -f "$dir/sshd.bgpid"
    return 0
}

case "${1:-}" in
prepare) [ $# -eq 3 ] || fail "usage: sshd-fixture.sh prepare DIR PORT"; prepare "$2" "$3" ;;
serve) [ $# -eq 2 ] || fail "usage: sshd-fixture.sh serve DIR"; serve "$2" ;;
start)
    if [ $# -lt 2 ] || [ $# -gt 3 ]; then fail "usage: sshd-fixture.sh start DIR [PORT]"; fi
    start "$2" "${3:-}"
    ;;
stop) [ $# -eq 2 ] || fail "usage: sshd-fixture.sh stop DIR"; stop "$2" ;;
*) fail "usage: sshd-fixture.sh prepare|serve|start|stop DIR" ;;
esac
