#!/usr/bin/env bash
# AMP Workbench: set-up, build and run on Debian 12.
#
#   ./workbench.sh compare [ampbench-cli run flags]   install what is missing, build, run the comparison (preset compare)
#   ./workbench.sh test                               install what is missing, build, run every test
#   ./workbench.sh gui [ampbench flags]               install what is missing, build, start the desktop workbench
#   ./workbench.sh build                              install what is missing and build only
#   ./workbench.sh package                            build, then the .deb (build/cpu/ampbench_<version>_amd64.deb)
#
# Environment: BUILD_DIR (default build/cpu), AMPBENCH_GUI=OFF to skip the Qt GUI,
# AMPBENCH_TEST_JOBS (default 3) tests at a time: most of the suite waits on daemons,
# child processes and conditions, so three at once fill two cores.
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${BUILD_DIR:-build/cpu}
GUI=${AMPBENCH_GUI:-ON}
PACKAGES=(build-essential cmake ninja-build ccache pkg-config
          libtorch-dev libsqlite3-dev nlohmann-json3-dev libcli11-dev libgtest-dev zlib1g-dev
          libstb-dev libminizip-dev libcsv-dev libgloo-dev dataset-fashion-mnist help2man
          openssh-server openssh-client slurm-wlm munge python3-torch
          gridengine-master gridengine-exec gridengine-client)
if [[ "$GUI" == ON ]]; then
    PACKAGES+=(qt6-base-dev qt6-svg-dev libqcustomplot-dev xvfb xauth imagemagick poppler-utils)
fi

install_missing() {
    local missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if ((${#missing[@]})); then
        echo "workbench: installing ${missing[*]}" >&2
        local sudo=()
        [[ $(id -u) -eq 0 ]] || sudo=(sudo)
        "${sudo[@]}" apt-get update -q
        # The tests start sshd, munged, Slurm's and Grid Engine's daemons themselves, on
        # 127.0.0.1 with configs of their own: installing them must not leave the
        # system's daemons running (nor the mail server Grid Engine's packages pull in),
        # so Debian's policy-rc.d says no to starting services during this install.
        local policy=/usr/sbin/policy-rc.d made_policy=0
        if [[ ! -e $policy ]]; then
            printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" > /dev/null
            "${sudo[@]}" chmod 755 "$policy"
            made_policy=1
        fi
        local rc=0
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" || rc=$?
        ((made_policy)) && "${sudo[@]}" rm -f "$policy"
        return $rc
    fi
}

build() {
    export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
    export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    # Paths inside the checkout hash as relative ones, and the build folder's own path not
    # at all, so a clone in another folder (CI's) reuses what an earlier build compiled
    # (its debug information then names the earlier build's folder).
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
    export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAMPBENCH_BUILD_GUI="$GUI" >/dev/null
    cmake --build "$BUILD_DIR" -j"$(nproc)"
}

cmd=${1:-compare}
shift || true
case "$cmd" in
    compare)
        install_missing && build
        # The comparison whose verdict has a noise band (the preset "compare"), unless
        # a preset or a spec file is named.
        preset=(--preset compare)
        for a in "$@"; do
            case "$a" in --preset | --preset=* | --config | --config=* | --config-stdin) preset=() ;; esac
        done
        exec "$BUILD_DIR/app/ampbench-cli" run "${preset[@]}" "$@"
        ;;
    test)
        install_missing && build
        cd "$BUILD_DIR"
        exec ctest --output-on-failure -j"${AMPBENCH_TEST_JOBS:-3}" "$@"
        ;;
    gui)
        install_missing && build
        exec "$BUILD_DIR/app/ampbench" "$@"
        ;;
    build)
        install_missing && build
        ;;
    package)
        [[ "$GUI" == ON ]] || { echo "workbench: the .deb holds the GUI: unset AMPBENCH_GUI" >&2; exit 2; }
        PACKAGES+=(dpkg-dev)
        install_missing && build
        cd "$BUILD_DIR" && cpack -G DEB
        ;;
    *)
        sed -n '2,10p' "$0" >&2
        exit 2
        ;;
esac
