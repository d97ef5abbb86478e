#!/usr/bin/env bash
# bench/device.sh: build, test and benchmark AMP Workbench on the CUDA host.
#
# Configures build/cuda (Release, Ninja, no GUI, CUDA for sm_90: H100/H200) against
# the LibTorch inside the host's PyTorch, builds core, ampbench-cli, the tests and
# the benchmark programs, then does what MODE asks. Results and logs go to $OUT.
#
# Usage: bash bench/device.sh [MODE]        (or: MODE=... bash bench/device.sh)
#
# Modes, each a file bench/device/MODE.sh that this script sources after the build
# (its header, printed below, says what the mode does and the settings it alone reads):
#   bench (the default), tests, overhead, capacity, advise, fidelity, recipe, calibration,
#   determinism, rerun, profile, bundle, numerics, fp8, multigpu, verdict, prove;
#   help prints this text.
# Shell functions that several modes use (run_suite, run_checks) are in
# bench/device/lib.sh; the Python programs the modes run are bench/device/*.py, each
# saying in its docstring what it does and how it is called.
#
# Environment (every mode):
#   SKIP_BUILD=1                  configure and build nothing: for the parts that run
#                                 PyTorch alone (prove's reference and recipe).
#   CUDA_FLAGS=-Xptxas=-v         more nvcc flags (this one: each kernel's registers and
#                                 spills, in $OUT/build.log).
#   BUILD_ERROR_LINES=60          the lines of a failed build's errors printed.
#   OUT=build/cuda/results        where logs and results are written.
#   AMPBENCH_FASHION_MNIST        Fashion-MNIST's folder; default .deps/data.
#
# Needs on the CUDA host: one CUDA GPU, python3 with PyTorch 2.x built for CUDA
# (its LibTorch is used), nvcc at /usr/local/cuda/bin, CMake and Ninja. No Qt,
# Debian packages or network: what the build needs besides LibTorch comes in .deps/.
#
# Prepare .deps/ (git-ignored) on a Debian 12 machine with network and the
# dataset-fashion-mnist package installed:
#   bash bench/fetch-deps.sh
# It unpacks the SQLite, zlib, nlohmann-json and CLI11 headers and GoogleTest's
# source into .deps/root and copies Fashion-MNIST's four files into .deps/data.
# Then copy the checkout, .deps/ included, to the CUDA host and run there:
#   bash bench/device.sh MODE
# The script writes only under build/cuda and $OUT.
set -euo pipefail
cd "$(dirname "$0")/.."

# The modes, in the order help prints them: bench/device/MODE.sh each.
MODES=(bench tests overhead capacity advise fidelity recipe calibration determinism rerun profile bundle
       numerics fp8 multigpu verdict prove)
# This header, then each mode file's (its leading comment).
usage() {
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' bench/device.sh
    local m
    for m in "${MODES[@]}"; do
        echo
        sed -n '/^#/!q;s/^# \{0,1\}//;p' "bench/device/$m.sh"
    done
}
is_mode() { local m; for m in "${MODES[@]}"; do [[ $1 == "$m" ]] && return 0; done; return 1; }

MODE=${1:-${MODE:-bench}}
case "$MODE" in
    help | -h | --help) usage; exit 0 ;;
esac
if ! is_mode "$MODE"; then
    echo "device.sh: unknown mode '$MODE'" >&2; echo >&2; usage >&2; exit 2
fi

DEPS=$PWD/.deps/root/usr
if [[ ! -d $DEPS/include ]]; then
    echo "device.sh: .deps/ is missing: run bash bench/fetch-deps.sh on a Debian 12 machine" \
         "and copy .deps/ along with the checkout" >&2
    exit 1
fi
OUT=${OUT:-build/cuda/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# Fashion-MNIST for the tests, the presets and the reference (core/config/DataPaths.cpp).
export AMPBENCH_FASHION_MNIST=${AMPBENCH_FASHION_MNIST:-$PWD/.deps/data}
[[ -e $AMPBENCH_FASHION_MNIST/train-images-idx3-ubyte.gz ]] \
    || echo "warning: no Fashion-MNIST in $AMPBENCH_FASHION_MNIST: the tests that need it skip" >&2
# NVLink multicast off (it matters only on hosts of several GPUs).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
CLI=./build/cuda/app/ampbench-cli

echo "== host (mode $MODE, results in $OUT)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'

echo "== configure + build"
TORCH_PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
export CUDACXX=/usr/local/cuda/bin/nvcc TORCH_CUDA_ARCH_LIST=9.0
t0=$(date +%s)
configure() {  # source folder, build folder, log
    cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMPBENCH_BUILD_GUI=OFF \
        -DCMAKE_PREFIX_PATH="$TORCH_PREFIX;$DEPS" -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DSQLite3_INCLUDE_DIR="$DEPS/include" -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 \
        -DZLIB_INCLUDE_DIR="$DEPS/include" -DZLIB_LIBRARY=/usr/lib/x86_64-linux-gnu/libz.so.1 \
        -DAMPBENCH_GTEST_SOURCE="$DEPS/src/googletest" -DCMAKE_INSTALL_RPATH='$ORIGIN/../lib' \
        -DCMAKE_CUDA_FLAGS="${CUDA_FLAGS:-}" \
        > "$3" 2>&1 \
        || { tail -40 "$3"; exit 1; }
}
if [[ ${SKIP_BUILD:-0} == 1 ]]; then
    echo "(SKIP_BUILD=1: nothing built; only the parts that run PyTorch alone can go on)"
else
    configure . build/cuda "$OUT/configure.log"
    grep -E "ampbench:" "$OUT/configure.log" || true
    TARGETS=()
    [[ $MODE == calibration || $MODE == bundle || $MODE == rerun || $MODE == advise ]] && TARGETS=(--target ampbench-cli)
    [[ $MODE == determinism || $MODE == verdict ]] && TARGETS=(--target ampbench-cli test_engine)
    [[ $MODE == fp8 || $MODE == prove ]] && TARGETS=(--target ampbench-cli test_engine bench_profile_step)
    # prove without its tests part: test_engine (the longest build) is not needed.
    [[ $MODE == prove && " ${PROVE_PARTS:-tests} " != *" tests "* ]] && TARGETS=(--target ampbench-cli bench_profile_step)
    [[ $MODE == multigpu ]] && TARGETS=(--target ampbench-cli test_data_parallel test_engine)
    [[ $MODE == profile ]] && TARGETS=(--target bench_profile_step)
    [[ $MODE == numerics ]] && TARGETS=(--target ampbench-cli test_numerics test_engine bench_profile_step)
    # -k 0: every unit that fails is named in one call, not only the first.
    cmake --build build/cuda -j"$(nproc)" "${TARGETS[@]}" -- -k 0 > "$OUT/build.log" 2>&1 \
        || { grep -E "error|Error" -A3 "$OUT/build.log" | head -${BUILD_ERROR_LINES:-60}; exit 1; }
    echo "built in $(( $(date +%s) - t0 )) s"
fi

# Functions that several modes use: run_suite (the whole suite) and run_checks.
source bench/device/lib.sh

# The mode itself.
source "bench/device/$MODE.sh"
