#!/bin/sh
# A stand-in for ssh in the tests: takes ssh's options and the destination like ssh
# does, then runs the remote command line here through sh -c, as sshd would.
# FAKE_SSH_EXIT=N with FAKE_SSH_STDERR=TEXT: fail as ssh would (e.g. 255, unreachable).
# FAKE_SSH_LOG=FILE: append each remote command line to FILE.
while [ $# -gt 0 ]; do
    case "$1" in
    --) shift; break ;;
    -o | -p | -i | -l | -F | -J) shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: fake-ssh [options] destination command" >&2; exit 255; }
shift  # the destination
if [ -n "$FAKE_SSH_EXIT" ]; then
    [ -n "$FAKE_SSH_STDERR" ] && printf '%s\n' "$FAKE_SSH_STDERR" >&2
    exit "$FAKE_SSH_EXIT"
fi
[ -n "$FAKE_SSH_LOG" ] && printf '%s\n' "$*" >>"$FAKE_SSH_LOG"
exec sh -c "$*"
