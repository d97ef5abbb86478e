#!/usr/bin/env bash
# bench/cuda-check.sh: compile the CUDA code on a machine without a GPU, before any
# time on the CUDA host is spent on it.
#
#   1. every .cu under core/ with nvcc for sm_90 (H100/H200), as the CUDA build does
#      (-std=c++17, warnings are errors);
#   2. every C++ translation unit with a CUDA-only branch (AMPBENCH_WITH_CUDA) syntax-
#      checked with that branch on, against the installed LibTorch's headers (Debian's
#      1.13: its c10/cuda and ATen/cuda headers are there even though it runs on the
#      CPU) and the CUDA toolkit's. Branches for LibTorch 2.x (TORCH_VERSION_MAJOR >= 2)
#      are not seen by 1.13's headers: only the CUDA host's build checks those.
#
# Usage: bash bench/cuda-check.sh          (CUDA at /usr/local/cuda, or set CUDA_HOME)
# Exits 0 when everything compiles, 1 when something does not, 77 when no nvcc or no
# LibTorch headers are found (nothing was checked). Takes a few minutes on 2 cores.
set -uo pipefail
cd "$(dirname "$0")/.."
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA_HOME/bin/nvcc
TORCH_INC=${TORCH_INC:-/usr/include}
JOBS=${JOBS:-$(nproc)}
if [[ ! -x $NVCC ]]; then
    echo "cuda-check: no nvcc at $NVCC (set CUDA_HOME): nothing checked" >&2
    exit 77
fi
if [[ ! -e $TORCH_INC/ATen/cuda/CUDAContext.h || ! -e $TORCH_INC/torch/csrc/api/include/torch/version.h ]]; then
    echo "cuda-check: no LibTorch headers with ATen/cuda in $TORCH_INC (apt-get install libtorch-dev): nothing checked" >&2
    exit 77
fi
LOG=$(mktemp -d /tmp/ampbench-cuda-check.XXXXXX)
trap 'rm -rf "$LOG"' EXIT
# The one header a LibTorch build generates for c10/cuda, which a CPU-only package
# leaves out: what it holds in every CUDA build (shared libraries).
if [[ ! -e $TORCH_INC/c10/cuda/impl/cuda_cmake_macros.h ]]; then
    mkdir -p "$LOG/shim/c10/cuda/impl"
    printf '#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n' > "$LOG/shim/c10/cuda/impl/cuda_cmake_macros.h"
fi

# The flags every C++ unit is checked with, and the engine's precompiled header made
# once with them (core's and the tests' units are compiled with it, as in the build).
CXXFLAGS_CHECK="-std=c++17 -Wall -Wextra -DAMPBENCH_WITH_CUDA=1 -I. -Icore -Iapp -isystem $LOG/shim
                -isystem $TORCH_INC/torch/csrc/api/include -isystem $CUDA_HOME/include"
mkdir -p "$LOG/pch"
cp core/engine_pch.h "$LOG/pch/engine_pch.h"
# shellcheck disable=SC2086
if ! g++ $CXXFLAGS_CHECK -x c++-header core/engine_pch.h -o "$LOG/pch/engine_pch.h.gch" > "$LOG/pch.log" 2>&1; then
    echo "cuda-check: the engine's precompiled header does not compile:" >&2
    head -20 "$LOG/pch.log" >&2
    exit 1
fi

# One file, compiled; its messages are kept in $LOG under the file's name.
check_one() {
    local f=$1 log=$LOG/$(tr / _ <<< "$1").log pch="-include $LOG/pch/engine_pch.h"
    [[ $f == core/parallel/Communicator.cpp || $f == app/* ]] && pch=
    case $f in
        *.cu)
            "$NVCC" -std=c++17 -arch=sm_90 -I. -Xcompiler=-Wall -Werror=all-warnings \
                -c "$f" -o /dev/null > "$log" 2>&1 ;;
        *)
            # shellcheck disable=SC2086
            g++ $CXXFLAGS_CHECK -fsyntax-only $pch "$f" > "$log" 2>&1 ;;
    esac
    local rc=$?
    if ((rc)); then echo "FAIL $f"; else echo "ok   $f"; fi
    return $rc
}
export -f check_one
export NVCC TORCH_INC CUDA_HOME LOG CXXFLAGS_CHECK

mapfile -t cu < <(git ls-files 'core/*.cu')
# The C++ units with a CUDA-only branch; the GUI's (ui/) need Qt and hold only a label.
mapfile -t cpp < <(git grep -l AMPBENCH_WITH_CUDA -- 'core/*.cpp' 'app/*.cpp' 'tests/*.cpp' 'bench/*.cpp')
t0=$(date +%s)
printf '%s\n' "${cu[@]}" "${cpp[@]}" | xargs -P "$JOBS" -I{} bash -c 'check_one "$@"' _ {} | sort -k2 > "$LOG/summary"
cat "$LOG/summary"
failed=$(grep -c '^FAIL' "$LOG/summary" || true)
for f in $(awk '/^FAIL/ {print $2}' "$LOG/summary"); do
    echo "== $f"
    grep -E "error|warning" -A3 "$LOG/$(tr / _ <<< "$f").log" | head -40
done
echo "cuda-check: ${#cu[@]} .cu files (nvcc sm_90), ${#cpp[@]} CUDA-branch C++ files (syntax, LibTorch" \
     "$(sed -n 's/#define TORCH_VERSION_MAJOR \([0-9]*\)/\1/p' "$TORCH_INC/torch/csrc/api/include/torch/version.h").$(sed -n 's/#define TORCH_VERSION_MINOR \([0-9]*\)/\1/p' "$TORCH_INC/torch/csrc/api/include/torch/version.h") headers)," \
     "$failed failed, $(( $(date +%s) - t0 )) s"
((failed == 0))
