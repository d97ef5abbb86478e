#!/usr/bin/env bash
# packaging/deb/check.sh: build the .deb from a built tree, then treat it as a user
# would on Debian 12, as root (CI, or a test machine):
#   1. cpack -G DEB  ->  $BUILD_DIR/ampbench_<version>_amd64.deb; its Depends,
#      Recommends and files checked;
#   2. the desktop entry and the metainfo validated (desktop-file-validate,
#      appstreamcli validate);
#   3. apt-get install ./ampbench_*.deb; the installed ampbench-cli --version,
#      run --preset smoke and report (HTML, PDF, CSV, JSON) in a fresh home; the
#      installed ampbench started under Xvfb, its window found and a screenshot taken;
#      the MIME type registered;
#   4. apt-get purge ampbench; every file it installed is gone and nothing new is
#      left in /usr, /etc, /opt or /var/lib.
# Usage: packaging/deb/check.sh      (BUILD_DIR, default build/cpu, configured with the GUI)
# Leaves the .deb in $BUILD_DIR and logs and the screenshot in $BUILD_DIR/deb-check/.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build/cpu}
[[ $(id -u) -eq 0 ]] || { echo "deb/check.sh: run as root (it installs and removes a package)" >&2; exit 2; }
[[ -f $BUILD_DIR/CMakeCache.txt ]] || { echo "deb/check.sh: $BUILD_DIR is not configured (./workbench.sh build)" >&2; exit 2; }
LOG=$PWD/$BUILD_DIR/deb-check
rm -rf "$LOG"; mkdir -p "$LOG"
step() { echo "== deb: $* ($(( $(date +%s) - T0 )) s)"; }
fail() { echo "deb/check.sh: FAILED: $*" >&2; exit 1; }
T0=$(date +%s)

step "tools"
TOOLS=(dpkg-dev help2man desktop-file-utils appstream xvfb xauth x11-utils imagemagick file)
missing=()
for p in "${TOOLS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if dpkg-query -W -f='${Status}' ampbench 2>/dev/null | grep -q "ok installed"; then
    fail "ampbench is installed already; apt-get purge ampbench first"
fi

step "build and package"
# Reconfigure so help2man, found now, writes the man pages.
cmake "$BUILD_DIR" >/dev/null
grep -q '^AMPBENCH_BUILD_GUI:BOOL=ON' "$BUILD_DIR/CMakeCache.txt" || fail "$BUILD_DIR has the GUI off"
cmake --build "$BUILD_DIR" -j"$(nproc)" --target ampbench ampbench-cli ampbench_manpages
rm -f "$BUILD_DIR"/ampbench_*.deb
(cd "$BUILD_DIR" && cpack -G DEB) > "$LOG/cpack.log" 2>&1 || { tail -30 "$LOG/cpack.log"; fail "cpack"; }
debs=("$BUILD_DIR"/ampbench_*_amd64.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "no single ampbench_*_amd64.deb in $BUILD_DIR"
DEB=$(cd "$(dirname "${debs[0]}")" && pwd)/$(basename "${debs[0]}")
echo "$(basename "$DEB"): $(du -k "$DEB" | cut -f1) KiB"

step "control fields and contents"
dpkg-deb -f "$DEB" Package Version Architecture Depends Recommends | tee "$LOG/control.txt"
depends=$(dpkg-deb -f "$DEB" Depends)
for lib in libtorch1.13 libqt6widgets6 libqt6gui6 libqt6core6 libqcustomplot2.1-qt6 libsqlite3-0 libc6; do
    [[ $depends =~ (^|, )$lib( |,|$) ]] || fail "Depends lacks $lib: $depends"
done
[[ $(dpkg-deb -f "$DEB" Recommends) == *dataset-fashion-mnist* ]] || fail "Recommends lacks dataset-fashion-mnist"
dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|' > "$LOG/contents.txt"
for f in /usr/bin/ampbench /usr/bin/ampbench-cli /usr/share/applications/ampbench.desktop \
         /usr/share/metainfo/io.ampbench.workbench.metainfo.xml \
         /usr/share/mime/packages/ampbench.xml /usr/share/icons/hicolor/scalable/apps/ampbench.svg \
         /usr/share/icons/hicolor/16x16/apps/ampbench.png /usr/share/icons/hicolor/256x256/apps/ampbench.png \
         /usr/share/man/man1/ampbench.1.gz /usr/share/man/man1/ampbench-cli.1.gz \
         /usr/share/doc/ampbench/README.md /usr/share/doc/ampbench/copyright \
         /usr/lib/python3/dist-packages/ampbench/__init__.py \
         /usr/lib/python3/dist-packages/ampbench/recorder.py; do
    grep -qx "$f" "$LOG/contents.txt" || fail "the package lacks $f"
done
x=$(mktemp -d); dpkg-deb -x "$DEB" "$x"
file "$x/usr/bin/ampbench-cli" | grep -q "stripped" && ! file "$x/usr/bin/ampbench-cli" | grep -q "not stripped" \
    || fail "ampbench-cli is not stripped"
zcat "$x/usr/share/man/man1/ampbench-cli.1.gz" | grep -q '^\.SH OPTIONS' || fail "ampbench-cli.1 has no OPTIONS"

step "desktop entry and metainfo"
desktop-file-validate "$x/usr/share/applications/ampbench.desktop" || fail "desktop-file-validate"
appstreamcli validate --no-net "$x/usr/share/metainfo/io.ampbench.workbench.metainfo.xml" || fail "appstreamcli validate"
rm -rf "$x"

step "install"
snapshot() {
    find /usr /etc /opt /var/lib -xdev \( -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/lib/ucf \
        -o -path /var/lib/systemd \) -prune -o -print 2>/dev/null | sort
}
snapshot > "$LOG/before.txt"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$DEB" > "$LOG/install.log" 2>&1 \
    || { tail -30 "$LOG/install.log"; fail "apt-get install"; }
grep -E "^(Setting up|Unpacking) " "$LOG/install.log" | sed 's/^/  /'
dpkg -L ampbench > "$LOG/installed.txt"
[[ $(command -v ampbench-cli) == /usr/bin/ampbench-cli ]] || fail "ampbench-cli is not /usr/bin/ampbench-cli"
[[ -f /usr/share/mime/application/x-ampbench-database.xml ]] || fail "the MIME type was not registered"

step "installed ampbench-cli: --version, run --preset smoke, report"
HOMEDIR=$(mktemp -d)
( cd "$HOMEDIR" && HOME=$HOMEDIR XDG_DATA_HOME= /usr/bin/ampbench-cli --version ) | tee "$LOG/version.txt"
grep -q "^LibTorch  1.13" "$LOG/version.txt" || fail "--version names no LibTorch"
( cd "$HOMEDIR" && HOME=$HOMEDIR XDG_DATA_HOME= /usr/bin/ampbench-cli run --preset smoke ) \
    > "$LOG/smoke.txt" 2>&1 || { cat "$LOG/smoke.txt"; fail "ampbench-cli run --preset smoke"; }
tail -6 "$LOG/smoke.txt"
db=$HOMEDIR/.local/share/ampbench/ampbench.db
[[ -f $db ]] || fail "the smoke run wrote no database at $db"
( cd "$HOMEDIR" && HOME=$HOMEDIR XDG_DATA_HOME= /usr/bin/ampbench-cli report 1 --html r.html \
    --pdf r.pdf --csv r.csv --json r.json ) || fail "ampbench-cli report"
for f in r.html r.pdf r.csv r.json; do [[ -s $HOMEDIR/$f ]] || fail "report wrote no $f"; done
file "$HOMEDIR/r.pdf" | grep -q "PDF document" || fail "r.pdf is no PDF"
# The recorder for the user's own scripts, for Debian's python3 (no PYTHONPATH).
( cd "$HOMEDIR" && env -u PYTHONPATH /usr/bin/python3 -c \
    'import ampbench; assert ampbench.__file__.startswith("/usr/lib/python3/dist-packages/")' ) \
    || fail "Debian's python3 does not import the installed ampbench package"

step "installed ampbench under Xvfb"
XVFB_DISPLAY=:97
Xvfb $XVFB_DISPLAY -screen 0 1600x1000x24 -nolisten tcp > "$LOG/xvfb.log" 2>&1 &
xvfb=$!
sleep 2
DISPLAY=$XVFB_DISPLAY HOME=$HOMEDIR XDG_DATA_HOME= /usr/bin/ampbench "$db" > "$LOG/gui.log" 2>&1 &
gui=$!
found=
for _ in $(seq 1 30); do
    sleep 1
    kill -0 $gui 2>/dev/null || break
    if DISPLAY=$XVFB_DISPLAY xwininfo -root -tree | grep -q '"AMP Workbench'; then found=1; break; fi
done
sleep 2
DISPLAY=$XVFB_DISPLAY import -window root "$LOG/gui.png" || true
alive=0; kill -0 $gui 2>/dev/null && alive=1
kill $gui 2>/dev/null || true; wait $gui 2>/dev/null || true
kill $xvfb 2>/dev/null || true; wait $xvfb 2>/dev/null || true
[[ $alive == 1 && -n $found ]] || { cat "$LOG/gui.log"; fail "the installed ampbench showed no window"; }
echo "window shown; screenshot $LOG/gui.png"
rm -rf "$HOMEDIR"

step "purge"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q ampbench > "$LOG/purge.log" 2>&1 \
    || { tail -20 "$LOG/purge.log"; fail "apt-get purge"; }
left=()
while read -r f; do
    [[ -e $f && ! -d $f ]] && left+=("$f")
done < "$LOG/installed.txt"
((${#left[@]} == 0)) || fail "files of the package left behind: ${left[*]}"
snapshot > "$LOG/after.txt"
new=$(comm -13 "$LOG/before.txt" "$LOG/after.txt")
if [[ -n $new ]]; then
    # Caches that the triggers (re)build are the system's; they must not name us.
    while read -r f; do
        case "$f" in
            */mimeinfo.cache | */icon-theme.cache | /usr/share/mime/*) ;;
            *) fail "left behind after purge: $f" ;;
        esac
        [[ -d $f ]] || ! grep -qi ampbench "$f" || fail "$f still names ampbench after purge"
    done <<< "$new"
fi
[[ ! -e /usr/share/mime/application/x-ampbench-database.xml ]] || fail "the MIME type is still registered"
grep -rqs ampbench /usr/share/applications/mimeinfo.cache && fail "mimeinfo.cache still names ampbench"
step "done: $(basename "$DEB") built, installed, run, removed"
