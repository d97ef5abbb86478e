#!/usr/bin/env bash
# packaging/container/build.sh: the container image of the headless CLI, and its test.
#
#   packaging/container/build.sh [DEB]     (as root; DEB default: build/cpu/ampbench_*_amd64.deb)
#
# 1. mmdebstrap makes a minimal Debian 12 root filesystem from Debian's mirror
#    (bookworm, -updates, -security) and podman imports it as
#    localhost/ampbench-debian:bookworm; no image registry is used.
# 2. podman builds packaging/container/Containerfile on it: the .deb and
#    dataset-fashion-mnist installed with apt-get -> localhost/ampbench-cli:<version>.
# 3. The test, inside the image: --version, run --preset smoke into a database on a
#    mounted folder, report --json/--csv/--html/--pdf from it; the files checked here.
#
# Exit status: 0 built and tested; 77 the image could not be tested because this
# machine cannot run containers or reach Debian's mirror (said on stderr); anything
# else a failure.
# Environment: CONTAINER_RUNTIME (default runc when installed: crun refuses hosts
# whose cgroups are in hybrid mode), KEEP_IMAGES=1 to keep the images afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $(id -u) -eq 0 ]] || { echo "container/build.sh: run as root (mmdebstrap, podman)" >&2; exit 2; }
fail() { echo "container/build.sh: FAILED: $*" >&2; exit 1; }
T0=$(date +%s)
step() { echo "== container: $* ($(( $(date +%s) - T0 )) s)"; }

DEB=${1:-}
if [[ -z $DEB ]]; then
    debs=(build/cpu/ampbench_*_amd64.deb)
    [[ -f ${debs[0]} ]] || fail "no .deb in build/cpu: run packaging/deb/check.sh (or cpack) first"
    DEB=${debs[0]}
fi
[[ -f $DEB ]] || fail "$DEB does not exist"
VERSION=$(dpkg-deb -f "$DEB" Version)

step "tools"
missing=()
for p in mmdebstrap podman runc uidmap; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
RUNTIME=${CONTAINER_RUNTIME:-}
[[ -z $RUNTIME ]] && command -v runc >/dev/null && RUNTIME=runc
PODMAN=(podman)
[[ -n $RUNTIME ]] && PODMAN+=(--runtime "$RUNTIME")
# Limits no higher than this shell's: raising them needs a capability a sandboxed
# root may not have.
LIMITS=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit "nproc=4096:4096")

WORK=$(mktemp -d /var/tmp/ampbench-container.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

step "base: mmdebstrap bookworm (minbase)"
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
mmdebstrap --variant=minbase --quiet bookworm "$WORK/rootfs.tar" \
    "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" \
    "deb $SECURITY bookworm-security main" > "$WORK/mmdebstrap.log" 2>&1 || {
    # Without Debian's mirror (a machine with no route to it) there is nothing to build
    # the image from: that is not a fault of the recipe, so say so like a machine that
    # cannot run containers. Other failures of mmdebstrap still fail.
    if grep -qiE "could not resolve|failed to fetch|temporary failure|connection (refused|timed out)|unable to connect" "$WORK/mmdebstrap.log"; then
        echo "container/build.sh: NOT RUN: Debian's mirror ($MIRROR) cannot be reached from this machine:" >&2
        grep -iE "could not resolve|failed to fetch|temporary failure|connection|unable to connect" "$WORK/mmdebstrap.log" | head -3 >&2
        exit 77
    fi
    tail -20 "$WORK/mmdebstrap.log" >&2
    fail "mmdebstrap"
}
echo "root filesystem: $(du -m "$WORK/rootfs.tar" | cut -f1) MiB"
"${PODMAN[@]}" import --change 'CMD ["/bin/bash"]' "$WORK/rootfs.tar" localhost/ampbench-debian:bookworm \
    >/dev/null || fail "podman import"

# Can this machine run a container at all? A sandbox may forbid it (namespaces,
# cgroups): then say so and exit 77, which .ci/run reports as not run.
if ! probe=$("${PODMAN[@]}" run --rm --network none "${LIMITS[@]}" localhost/ampbench-debian:bookworm \
        /bin/true 2>&1); then
    echo "container/build.sh: NOT RUN: podman cannot start a container on this machine:" >&2
    echo "$probe" | tail -3 >&2
    "${PODMAN[@]}" rmi localhost/ampbench-debian:bookworm >/dev/null 2>&1 || true
    exit 77
fi

step "image: podman build"
mkdir "$WORK/context"
cp packaging/container/Containerfile "$WORK/context/"
cp "$DEB" "$WORK/context/ampbench.deb"
IMAGE=localhost/ampbench-cli:$VERSION
"${PODMAN[@]}" build --network host "${LIMITS[@]}" -t "$IMAGE" -f "$WORK/context/Containerfile" \
    "$WORK/context" > "$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; fail "podman build"; }
"${PODMAN[@]}" image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' "$IMAGE"

step "test: --version, run --preset smoke, report, inside the image"
DATA=$WORK/data
mkdir "$DATA"
RUN=("${PODMAN[@]}" run --rm --network none "${LIMITS[@]}" -v "$DATA:/data" "$IMAGE")
"${RUN[@]}" --version | tee "$WORK/version.txt"
grep -q "^LibTorch  1.13" "$WORK/version.txt" || fail "--version names no LibTorch"
grep -q "^reports   JSON, CSV, HTML, PDF" "$WORK/version.txt" || fail "--version lists no report formats"
"${RUN[@]}" run --preset smoke -q > "$WORK/smoke.txt" 2>&1 || { cat "$WORK/smoke.txt"; fail "run --preset smoke"; }
cat "$WORK/smoke.txt"
[[ -f $DATA/ampbench/ampbench.db ]] || fail "the smoke run wrote no database on the mounted folder"
"${RUN[@]}" report 1 --json /data/r.json --csv /data/r.csv --html /data/r.html --pdf /data/r.pdf \
    || fail "report"
for f in r.json r.csv r.html r.pdf; do [[ -s $DATA/$f ]] || fail "report wrote no $f"; done
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert len(j['verdicts'])==3, j['verdicts']" \
    "$DATA/r.json" || fail "r.json has not three verdicts"
"${RUN[@]}" list | grep -q "fashion-mnist-smoke" || fail "list does not show the smoke experiment"

if [[ ${KEEP_IMAGES:-0} != 1 ]]; then
    "${PODMAN[@]}" rmi "$IMAGE" localhost/ampbench-debian:bookworm >/dev/null
fi
step "done: $IMAGE built from Debian's packages and tested"
