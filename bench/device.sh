#!/usr/bin/env bash
# bench/device.sh: build, test and benchmark AMP Workbench on the CUDA host.
#
# Configures build/cuda (Release, Ninja, no GUI, CUDA for sm_90: H100/H200) against
# the LibTorch inside the host's PyTorch, builds core, ampbench-cli, the tests and
# the benchmark programs, then does what MODE asks. Results and logs go to $OUT.
#
# Usage: bash bench/device.sh [MODE]        (or: MODE=... bash bench/device.sh)
#
# Modes:
#   bench     (default) the whole test suite, then bench_workloads and the PyTorch
#             reference (bench/reference.py) on the same cells, eager, then again with
#             every cell's model through torch.compile (--compile; BENCH_COMPILE=0
#             skips it), then the comparison table (bench/compare.py): ours / eager
#             PyTorch and ours / compiled PyTorch side by side.
#   tests     the whole test suite (ctest), GPU-only tests included; nothing else.
#             Exits non-zero when a test fails.
#   overhead  the GPU and trainer tests (Cuda.*, Trainer.*), then the recording-
#             overhead benchmark (bench_recording_overhead: recorded and bare rounds
#             alternating on the default comparison's arms).
#   capacity  the GPU, checkpointing, data and batch-finder tests, then the largest
#             batch per arm (ampbench-cli find-batch) and the step-time cost of
#             gradient checkpointing at the presets' batch.
#   advise    ampbench-cli advise on the GPU for the GPT-2-sized decoder and the recipe
#             CNN (ADVISE=gpt2,cnn; ADVISE_BUDGET=10m each): the candidates, their
#             passes, the quality check and the recommendation; the database in $OUT.
#   fidelity  a model file trained by the workbench and by PyTorch (bench/fidelity.py):
#             the same scripted CNN, initial weights and batches (.npz of
#             Fashion-MNIST), fp32, deterministic; the largest relative difference
#             of the per-step loss over the first 100 steps.
#   recipe    the fashion-mnist-recipe preset (10 epochs, OneCycle, three seeds; its
#             database is written to $OUT for `ampbench-cli report` on a machine with
#             the GUI build), then the same recipe in PyTorch (bench/recipe.py).
#   calibration  the verdict's calibration: the aa-check preset once, alone (the A/A
#             timing check), then CAL_REPS repetitions of the recipe-controls preset
#             (an A/A arm, accumulation under the linear rule and the three negative
#             controls), CAL_PARALLEL at a time on the one GPU, repetition r on seeds
#             3r-2..3r (its A/A arm on those + 1000), so no two repetitions share a
#             seed; each repetition's analysis (show -e 1 --json) goes to $OUT and
#             bench/calibration.py counts the verdicts. Builds only ampbench-cli.
#   determinism  the determinism tests (Cuda.Deterministic*, Trainer.Deterministic*), then
#             the cost of deterministic mode: the default CNN comparison and
#             ResNet-50 (fp32 and amp-fp16) with and without --deterministic, each
#             arm's median step time from `show -e ID --json`.
#   rerun     reruns on the GPU: the default CNN comparison (fp32, amp-fp16) without
#             deterministic mode on three seeds and with it on two, and ResNet-50
#             (60 steps, two seeds) without it; `ampbench-cli rerun` of two runs of
#             each, printing what it says of every rerun. Builds only ampbench-cli.
#   profile   each cell of PROFILE under the PyTorch profiler, ours
#             (bench_profile_step) and the reference (bench/kernels.py profile),
#             compared kernel by kernel (bench/kernels.py compare).
#   bundle    the relocatable bundle (packaging/cuda/bundle.sh: ampbench-cli and the
#             libraries it needs, RUNPATH $ORIGIN/../lib, a README, as a tarball in
#             $OUT), unpacked into a fresh folder and run from there alone, with an
#             empty environment: --version, the smoke preset on cuda, and a GPU test
#             (fp32, amp-fp16 and amp-bf16 on cuda, the runs' recorded device read
#             back); every library the runs loaded is checked to come from the bundle,
#             glibc or the driver. Prints the bundle's size. Builds only ampbench-cli.
#   numerics  per-layer numerics on real cases (builds ampbench-cli and test_numerics;
#             runs the numerics tests first): the GPT-2-small-shaped decoder under
#             fp16 with numerics every NUMERICS_EVERY optimizer steps, (1) underflow:
#             the loss scaler as PyTorch sets it, held at 1 (init_scale=1, no growth)
#             and off (noscale), each run's worst layers (show RUN --numerics);
#             (2) overflow: an initial scale of 2^40 that overflows the first steps,
#             the locator's events and the verdict's overflow_origin findings;
#             and the same scale with the located module (head), then head and every
#             block, as FP32 islands (their skipped steps); (3) FP32 islands: the head,
#             the LayerNorms and whole blocks in fp32 against the plain fp16 arm (step
#             time, peak memory: show -e); (4) the cost of the records on the decoder
#             and ResNet-50: off and every 100 steps over 300 steps, every step over
#             100; (5) attention: scores without the 1/sqrt(d) and weights at
#             N(0, 1.5), which overflow fp16 in the forward: fp32, fp16 and fp16 with
#             the attention as an FP32 island (status, skipped steps, final loss, the
#             locator's event). NUMERICS_PARTS picks some of "underflow overflow
#             attention islands cost", and "profile" (a recording step and the step
#             after it under the profiler, the kernels the record adds). Also runs the
#             GPU checks of the fused statistics kernel and the attention.
#             Databases and the analyses' JSON go to $OUT.
#   fp8       FP8 arms (compute capability 8.9+): the Fp8 tests, then bf16 against fp8 on
#             the GPT-2-sized decoder (d 768, 12 layers, B16, T1024) and a wide one (d 2048,
#             4 layers, B8): each arm alone for FP8_SPEED_STEPS (80) steps (median step
#             time, peak memory), the PyTorch reference on the same cells
#             (bench/fp8_reference.py: torch._scaled_mm with the same recipe, eager casts;
#             FP8_COMPILE=1 adds torch.compile), and FP8_STEPS (1000) steps on three seeds in
#             fast-verdict mode with the verdict. FP8_PARTS picks some of "checks speed
#             reference loss recipes profile"; FP8_RECIPE delayed|current; FP8_LOSS_CELLS "gpt2 wide".
#             profile (not in the default): each cell's two arms under the profiler, their
#             kernel time per step by kind and the most fp8 could gain with free casts
#             (and kernel by kernel in $OUT/kernels-CELL.txt). FP8_CHECKS: the GPU tests
#             of part checks (default 'Fp8*').
#             recipes (not in the default): bf16, fp8 delayed and fp8 current scaling in
#             one experiment on the GPT-2-sized cell, FP8_STEPS steps, seeds 1-3.
#   multigpu  data-parallel arms and runs spread over GPUs (two GPUs or more): the
#             data-parallel and trainer tests, then (1) ResNet-50 amp-fp16 channels-last
#             on 1 GPU and data-parallel on 2 at the same per-GPU batch (each arm's
#             median step time and every rank's summary); (2) the 2-rank vs 1-rank
#             equivalence on CUDA: the MLP on Fashion-MNIST, fp32, deterministic, 2 ranks
#             of micro-batch 32 against 1 rank of 64, the largest relative loss
#             difference over the steps; (3) the noise-band preset's time to a verdict
#             with its runs spread over 2 GPUs (gpus 2) against 1 (gpus 1), wall clock.
#             Builds ampbench-cli, test_data_parallel and test_engine.
#   verdict   the time to a verdict on the GPU (builds ampbench-cli and test_engine; runs
#             the GPU tests first): the fashion-mnist-recipe preset (3 arms x 3 seeds)
#             trained (1) one run at a time, eager, (2) its 9 runs packed on the GPU
#             (runs_per_gpu 9, a stream per run), eager, (3) packed with every arm a
#             CUDA graph, (4) --fast-verdict (each arm timed alone, then packed graphs),
#             each from the command to the verdict, wall clock; then
#             (with VERDICT_REFERENCE=1) the PyTorch script bench/recipe.py (its 9 runs
#             one after another). Prints the table of wall times, ratios and each
#             database's verdict lines (show -e 1) and where each run's wall time went
#             (bench/step_gaps.py); the databases go to $OUT.
#             VERDICT_PARTS picks some of "checks sequential packed graphs fast packing
#             ceiling" (ceiling, not in the default: bench/pack_ceiling.py, the most that
#             streams give this CNN with nothing of the workbench in the way)
#             (packing, not in the default: one fp32 graph run alone against nine packed,
#             and the nine graph runs three at a time and without their evaluations)
#             (host, not in the default: the fast verdict in each of HOST_ROUNDS and nine
#             fp32 graph runs packed, with VERDICT_BASE's build alternating; with
#             HOST_CONN32=1 then with 32 hardware work queues,
#             CUDA_DEVICE_MAX_CONNECTIONS=32, and the ceiling so). Each cell prints its
#             CPU seconds and its threads by name, sampled 10 s in.
#             (nobench, not in the default: the fast verdict as it runs by default,
#             cuDNN's heuristics (cudnn_benchmark auto), and with its autotuning,
#             cudnn_benchmark true, alternating, in each of NOBENCH_ROUNDS)
#             (fused, not in the default: the fast verdict as it runs by default, each
#             arm's seeds fused into one model, and with --no-fuse-seeds, nine runs
#             packed, alternating, in each of FUSED_ROUNDS)
#             (fusedref, not in the default: bench/fused_reference.py, fused seeds in
#             PyTorch with nothing of the workbench in the way: the recipe's CNN alone,
#             eager and as a CUDA graph, 3 and 9 seeds fused into one model (grouped
#             convolutions, a batched head), eager and as a graph, and pack_ceiling.py's
#             streams, fp32 and fp16, each against one eager run; then each member of a
#             fused model against its separate run, test accuracy after one epoch;
#             $OUT/fusedref.txt)
#   help      print this text.
#
# Environment:
#   WORKLOADS=cnn,resnet50,gpt2   bench: the workloads benchmarked.
#   BENCH_ARGS=--quick            bench: passed to bench_workloads and reference.py
#                                 (--quick: fewer steps per cell).
#   SKIP_TESTS=1                  bench: skip the test suite (code whose tests
#                                 already passed on this host).
#   BENCH_COMPILE=1               bench: 0 skips the reference under torch.compile
#                                 ($OUT/reference-compiled.txt; it compiles each cell
#                                 afresh, minutes in all).
#   OVERHEAD_ARGS="600 7"         overhead: bench_recording_overhead's STEPS ROUNDS.
#   CAPACITY=resnet50,gpt2        capacity: the models searched (either or both).
#   PROFILE="gpt2:amp-bf16"       profile: WORKLOAD:ARM cells, space-separated, e.g.
#                                 PROFILE="gpt2:amp-bf16 gpt2:fp32".
#   PROFILE_UNFUSED=0             profile: 1 also profiles ours on the unfused path
#                                 (AMPBENCH_UNFUSED=1) and compares the two.
#   PROFILE_COMPILE=0             profile: 1 also profiles the reference under
#                                 torch.compile and compares ours with it.
#   CAL_FIRST=1 CAL_REPS=5        calibration: the first repetition and how many.
#   CAL_PARALLEL=5                calibration: repetitions at a time.
#   CAL_PRESET=recipe-controls    calibration: the preset repeated (adamw-controls: the
#                                 second recipe, where fp16 loses quality).
#   CAL_FLAGS=                    calibration: more run flags (e.g. --fast-verdict).
#   CAL_AA_TIMING=1               calibration: 0 leaves the A/A timing check out.
#   CAL_KEEP_DBS=1                calibration: the repetitions' databases go into the
#                                 results' archive too.
#   CAL_DEADLINE=480              calibration: seconds after the start of the
#                                 script by which no repetition is started and any
#                                 still running is stopped (its rows kept).
#   VERDICT_BASE=.deps/base       verdict: an earlier commit's source tree (git archive
#                                 COMMIT | tar -x -C .deps/base), built beside this one;
#                                 the host part times its CLI on the same cells.
#   VERDICT_CHECKS='Cuda.*:FastVerdict.*'  verdict: the GPU tests of its checks part.
#   HOST_ROUNDS="1 2" NOBENCH_ROUNDS="1 2"  verdict: the rounds of the host and nobench parts.
#   NUMERICS_EVERY=10             numerics: optimizer steps between records.
#   NUMERICS_STEPS=120            numerics: micro-steps per run.
#   NUMERICS_PARTS="underflow overflow attention islands cost"   numerics: the cases to run
#                                 (also: profile, a recording step under the profiler).
#   CUDA_FLAGS=-Xptxas=-v         more nvcc flags (this one: each kernel's registers and
#                                 spills, in $OUT/build.log).
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

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' bench/device.sh; }

MODE=${1:-${MODE:-bench}}
case "$MODE" in
    help | -h | --help) usage; exit 0 ;;
    bench | tests | overhead | capacity | advise | profile | fidelity | recipe | calibration | determinism | bundle | rerun | numerics | multigpu | verdict | fp8 | prove) ;;
    *) echo "device.sh: unknown mode '$MODE'" >&2; echo >&2; usage >&2; exit 2 ;;
esac

DEPS=$PWD/.deps/root/usr
if [[ ! -d $DEPS/include ]]; then
    echo "device.sh: .deps/ is missing: run bash bench/fetch-deps.sh on a Debian 12 machine" \
         "and copy .deps/ along with the checkout" >&2
    exit 1
fi
OUT=${OUT:-build/cuda/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORKLOADS=${WORKLOADS:-cnn,resnet50,gpt2}
BENCH_ARGS=${BENCH_ARGS:-}
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
configure . build/cuda "$OUT/configure.log"
grep -E "ampbench:" "$OUT/configure.log" || true
TARGETS=()
[[ $MODE == calibration || $MODE == bundle || $MODE == rerun ]] && TARGETS=(--target ampbench-cli)
[[ $MODE == determinism || $MODE == verdict ]] && TARGETS=(--target ampbench-cli test_engine)
[[ $MODE == fp8 || $MODE == prove ]] && TARGETS=(--target ampbench-cli test_engine bench_profile_step)
[[ $MODE == multigpu ]] && TARGETS=(--target ampbench-cli test_data_parallel test_engine)
[[ $MODE == profile ]] && TARGETS=(--target bench_profile_step)
[[ $MODE == numerics ]] && TARGETS=(--target ampbench-cli test_numerics test_engine bench_profile_step)
# -k 0: every unit that fails is named in one call, not only the first.
cmake --build build/cuda -j"$(nproc)" "${TARGETS[@]}" -- -k 0 > "$OUT/build.log" 2>&1 \
    || { grep -E "error|Error" -A3 "$OUT/build.log" | head -${BUILD_ERROR_LINES:-60}; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
BASE_CLI=
if [[ $MODE == verdict && -n ${VERDICT_BASE:-} ]]; then
    # An earlier commit's source tree, built beside this one: its CLI times the same
    # cells in the same call, alternating with this one's.
    t0=$(date +%s)
    configure "$VERDICT_BASE" build/cuda-base "$OUT/configure-base.log"
    cmake --build build/cuda-base -j"$(nproc)" --target ampbench-cli > "$OUT/build-base.log" 2>&1 \
        || { grep -E "error|Error" -A3 "$OUT/build-base.log" | head -40; exit 1; }
    BASE_CLI=./build/cuda-base/app/ampbench-cli
    echo "built the base ($VERDICT_BASE) in $(( $(date +%s) - t0 )) s"
fi

# The whole suite through ctest; prints failures, the summary and the skipped tests.
run_suite() {
    echo "== tests (ctest, the whole suite)"
    local rc=0
    (cd build/cuda && ctest --output-on-failure -j4) > "$OUT/tests.log" 2>&1 || rc=$?
    if (( rc )); then
        grep -E "\*\*\*(Failed|Exception|Timeout)|: Failure$|^\[  FAILED" -A8 "$OUT/tests.log" | head -80 || true
    fi
    if grep -q 'tests passed, ' "$OUT/tests.log"; then
        sed -n '/tests passed, /,$p' "$OUT/tests.log"
    else
        tail -20 "$OUT/tests.log"
    fi
    echo "GPU tests (Cuda.*): $(grep -cE 'Test +#[0-9]+: Cuda\..*[ *]Passed' "$OUT/tests.log" || true) passed," \
         "$(grep -cE 'Test +#[0-9]+: Cuda\..*[ *]Skipped' "$OUT/tests.log" || true) skipped"
    return $rc
}

# A few test_engine groups ahead of a measurement, to see the GPU paths still work.
run_checks() {
    echo "== tests ($1)"
    ./build/cuda/tests/test_engine --gtest_filter="$1" > "$OUT/tests.log" 2>&1 || true
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests? ran" "$OUT/tests.log" | head -30 || true
    grep -E ": Failure$" -A4 "$OUT/tests.log" | head -40 || true
    # What the GPU tests print of their measurements.
    grep -E "^(device busy share|graph run [0-9]|largest relative|graph vs eager|fast verdict on the GPU|fused )" "$OUT/tests.log" || true
}

case "$MODE" in
bundle)
    echo "== bundle (packaging/cuda/bundle.sh)"
    rm -rf build/cuda/bundle
    bash packaging/cuda/bundle.sh build/cuda build/cuda/bundle | tee "$OUT/bundle.txt"
    tarball=$(ls build/cuda/bundle/ampbench-cli-*.tar.*)
    FRESH=$(mktemp -d /tmp/ampbench-fresh.XXXXXX)
    case $tarball in
        *.zst) zstd -dc "$tarball" | tar -C "$FRESH" -xf - ;;
        *) tar -C "$FRESH" -xzf "$tarball" ;;
    esac
    B=$(realpath "$(ls -d "$FRESH"/ampbench-cli-*)")
    echo "== from the bundle alone, unpacked in $FRESH (empty environment, fresh home)"
    mkdir -p "$FRESH/home" "$FRESH/ld"
    cp -r "$AMPBENCH_FASHION_MNIST" "$FRESH/fashion-mnist"
    alone() {
        env -i PATH=/usr/bin:/bin HOME="$FRESH/home" NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
            NVSHMEM_DISABLE_NVLS=1 LD_DEBUG=libs LD_DEBUG_OUTPUT="$FRESH/ld/trace" "$B/bin/ampbench-cli" "$@"
    }
    rc=0
    alone --version || rc=1
    alone run --preset smoke --device cuda --data "$FRESH/fashion-mnist" -q || rc=1
    echo "== GPU test: fp32, amp-fp16, amp-bf16 on cuda, read back"
    alone run --preset smoke --device cuda --data "$FRESH/fashion-mnist" --micro-steps 96 -q \
        --name bundle-gpu --arm fp32=fp32 --arm fp16=amp-fp16 --arm bf16=amp-bf16 || rc=1
    alone list | tail -4
    for id in 4 5 6; do
        alone show "$id" > "$FRESH/show-$id.txt" || rc=1
        grep -q "^environment .*NVIDIA" "$FRESH/show-$id.txt" && grep -q "^status  *finished" "$FRESH/show-$id.txt" \
            || { echo "run $id: not a finished run on an NVIDIA GPU:"; head -12 "$FRESH/show-$id.txt"; rc=1; }
    done
    grep -h -m1 "^environment" "$FRESH"/show-*.txt | head -1
    # The loader names a bundled library through the RUNPATH ($B/bin/../lib/...).
    loaded=$(grep -h "calling init: " "$FRESH"/ld/trace* | sed 's/.*calling init: //' | sort -u \
        | while read -r p; do realpath -m "$p"; done | sort -u)
    outside=$(grep -v "^$B/lib/" <<< "$loaded" | grep -vE '^/(usr/)?lib(64|32)?/(x86_64-linux-gnu/)?(ld-linux|libc|libm|libdl|librt|libpthread|libresolv|libutil|libmvec|libcuda|libnvidia-)[^/]*$|^/usr/local/nvidia/' || true)
    echo "libraries loaded: $(wc -l <<< "$loaded"), from the bundle: $(grep -c "^$B/lib/" <<< "$loaded")"
    if [[ -n $outside ]]; then
        echo "loaded from outside the bundle (neither glibc nor the driver):"; echo "$outside"; rc=1
    fi
    du -b "$tarball" | awk '{printf "bundle: %s, %.1f MiB\n", $2, $1 / 1048576}'
    du -sb "$B" | awk '{printf "unpacked: %.1f MiB\n", $1 / 1048576}'
    cp "$B/README" "$OUT/bundle-README.txt"
    rm -rf "$FRESH"
    exit $rc
    ;;

tests)
    run_suite
    ;;

prove)
    source bench/device/prove.sh
    ;;

verdict)
    PARTS=" ${VERDICT_PARTS:-checks sequential packed graphs fast} "
    [[ $PARTS == *" checks "* ]] && run_checks "${VERDICT_CHECKS:-Cuda.*:FastVerdict.*}"
    $CLI --db "$OUT/spec.db" run --preset fashion-mnist-recipe --device cuda --dry-run > "$OUT/recipe.json"
    rm -f "$OUT"/spec.db*
    python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
spec = json.load(open(f"{out}/recipe.json"))
spec["runs_per_gpu"] = 9
json.dump(spec, open(f"{out}/recipe-packed.json", "w"), indent=1)
for arm in spec["arms"]:
    arm["cuda_graph"] = True
json.dump(spec, open(f"{out}/recipe-packed-graphs.json", "w"), indent=1)
PY
    timed() {  # label, database, ampbench-cli run arguments (CLI=... picks the program)
        local label=$1 db=$2; shift 2
        rm -f "$db"*
        local t=$(date +%s.%N) cpu
        # The run prints the verdict: its wall time is the time to the verdict. Its
        # threads, busiest first, are sampled 10 s in; bash's time gives its CPU seconds.
        ( sleep 10; ps -L -o tid=,pcpu=,comm= -p "$(pgrep -n -f "ampbench-cli --db $db")" 2>/dev/null \
            | sort -k2 -nr > "$OUT/$label.threads" ) &
        local sampler=$!
        { TIMEFORMAT='%U %S'; time $CLI --db "$db" run "$@" --device cuda -q > "$OUT/$label.txt" 2>&1 \
            || echo "($label: exit $?)"; } 2> "$OUT/$label.cpu"
        local w=$(python3 -c "import time; print(f'{time.time() - $t:.1f}')")
        wait $sampler 2>/dev/null || true
        cpu=$(awk '{printf "%.1f", $1 + $2}' "$OUT/$label.cpu")
        $CLI --db "$db" show -e 1 >> "$OUT/$label.txt" 2>&1 || true
        echo "$label $w $cpu" >> "$OUT/verdict-times.txt"
        echo "== $label: $w s, CPU $cpu s"
        grep -E "^ *(fp32|amp|GPU|AMP)|verdict|busy|faster|shared" "$OUT/$label.txt" | head -24
        # Where each run's wall time went: its steps, its waits for data, its evaluations.
        python3 bench/step_gaps.py "$db" > "$OUT/$label.gaps" 2>&1 && sed 's/^/  /' "$OUT/$label.gaps"
        if [[ -s $OUT/$label.threads ]]; then
            awk '{n[$3]++; c[$3] += $2} END {for (k in n) printf "  threads %-16s %3d, %6.0f%% CPU\n", k, n[k], c[k]}' \
                "$OUT/$label.threads" | sort
        fi
    }
    rm -f "$OUT/verdict-times.txt"
    [[ $PARTS == *" sequential "* ]] && timed sequential "$OUT/sequential.db" --preset fashion-mnist-recipe
    [[ $PARTS == *" packed "* ]] && timed packed "$OUT/packed.db" --config "$OUT/recipe-packed.json"
    [[ $PARTS == *" graphs "* ]] && timed packed-graphs "$OUT/packed-graphs.db" --config "$OUT/recipe-packed-graphs.json"
    [[ $PARTS == *" fast "* ]] && timed fast-verdict "$OUT/fast.db" --preset fashion-mnist-recipe --fast-verdict
    if [[ $PARTS == *" packing "* ]]; then
        # How far packing pays for this model: one fp32 graph run alone against nine
        # packed, and the recipe's nine graph runs three and nine at a time, with and
        # without their evaluations.
        python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
spec = json.load(open(f"{out}/recipe-packed-graphs.json"))
one = dict(spec, seeds=[1], arms=[spec["arms"][0]], runs_per_gpu=1)
json.dump(one, open(f"{out}/fp32-alone.json", "w"))
json.dump(dict(one, seeds=list(range(1, 10)), runs_per_gpu=9), open(f"{out}/fp32-x9.json", "w"))
json.dump(dict(spec, runs_per_gpu=3), open(f"{out}/graphs-3.json", "w"))
json.dump(dict(spec, eval_interval=0), open(f"{out}/graphs-9-noeval.json", "w"))
PY
        for cell in fp32-alone fp32-x9 graphs-3 graphs-9-noeval; do
            timed "$cell" "$OUT/$cell.db" --config "$OUT/$cell.json"
        done
    fi
    if [[ $PARTS == *" host "* ]]; then
        # Where packed runs lose time on the host: the fast verdict and nine fp32 graph
        # runs packed, with this build and (VERDICT_BASE) the base's, alternating, then
        # with 32 hardware work queues instead of CUDA's 8 (CUDA_DEVICE_MAX_CONNECTIONS).
        [[ -e $OUT/fp32-x9.json ]] || python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
spec = json.load(open(f"{out}/recipe-packed-graphs.json"))
json.dump(dict(spec, seeds=list(range(1, 10)), arms=[spec["arms"][0]], runs_per_gpu=9),
          open(f"{out}/fp32-x9.json", "w"))
PY
        for round in ${HOST_ROUNDS:-1 2}; do
            if [[ -n $BASE_CLI ]]; then
                CLI=$BASE_CLI timed "base-fast-$round" "$OUT/base-fast.db" --preset fashion-mnist-recipe --fast-verdict
            fi
            timed "fast-$round" "$OUT/fast.db" --preset fashion-mnist-recipe --fast-verdict
        done
        if [[ -n $BASE_CLI ]]; then
            CLI=$BASE_CLI timed base-fp32-x9 "$OUT/base-fp32-x9.db" --config "$OUT/fp32-x9.json"
        fi
        timed fp32-x9 "$OUT/fp32-x9.db" --config "$OUT/fp32-x9.json"
        if [[ ${HOST_CONN32:-0} == 1 ]]; then
            CUDA_DEVICE_MAX_CONNECTIONS=32 timed fast-conn32 "$OUT/fast-c.db" --preset fashion-mnist-recipe --fast-verdict
            CUDA_DEVICE_MAX_CONNECTIONS=32 timed fp32-x9-conn32 "$OUT/fp32-x9-c.db" --config "$OUT/fp32-x9.json"
            echo "== packing ceiling with 32 hardware queues"
            CUDA_DEVICE_MAX_CONNECTIONS=32 python3 bench/pack_ceiling.py 2>&1 | tee "$OUT/ceiling-conn32.txt"
        fi
    fi
    if [[ $PARTS == *" nobench "* ]]; then
        # cuDNN's heuristics (the fast verdict's default, cudnn_benchmark auto) against
        # its autotuning, where the alone passes tune each convolution in each dtype first.
        for round in ${NOBENCH_ROUNDS:-1 2}; do
            timed "fast-$round" "$OUT/fast.db" --preset fashion-mnist-recipe --fast-verdict
            timed "fast-tuned-$round" "$OUT/fast-tuned.db" --preset fashion-mnist-recipe --fast-verdict --cudnn-benchmark true
        done
    fi
    if [[ $PARTS == *" fused "* ]]; then
        # Each arm's seeds fused into one model (the fast verdict's default) against the
        # nine runs packed on streams.
        for round in ${FUSED_ROUNDS:-1 2}; do
            timed "fused-$round" "$OUT/fused.db" --preset fashion-mnist-recipe --fast-verdict
            timed "unfused-$round" "$OUT/unfused.db" --preset fashion-mnist-recipe --fast-verdict --no-fuse-seeds
        done
    fi
    if [[ $PARTS == *" ceiling "* ]]; then
        # The most that streams can give this CNN, without the workbench: graphs
        # replayed round-robin from one thread, and one model at the packed batch.
        echo "== packing ceiling (bench/pack_ceiling.py)"
        python3 bench/pack_ceiling.py 2>&1 | tee "$OUT/ceiling.txt"
    fi
    if [[ $PARTS == *" fusedref "* ]]; then
        # What fusing an arm's seeds into one model gives this CNN in PyTorch, beside
        # graphs and streams, all in one process so the numbers compare.
        echo "== fused seeds in PyTorch (bench/fused_reference.py)"
        python3 bench/fused_reference.py --data "$AMPBENCH_FASHION_MNIST" 2>&1 | tee "$OUT/fusedref.txt" \
            || echo "(fusedref: exit $?)"
    fi
    if [[ ${VERDICT_REFERENCE:-0} == 1 ]]; then
        t=$(date +%s.%N)
        python3 bench/recipe.py --data "$AMPBENCH_FASHION_MNIST" > "$OUT/reference.txt" 2>&1 || echo "(reference: exit $?)"
        echo "pytorch-script $(python3 -c "import time; print(f'{time.time() - $t:.1f}')")" >> "$OUT/verdict-times.txt"
    fi
    echo "== time to the verdict (wall clock, s; ratio to the first line)"
    [[ -s $OUT/verdict-times.txt ]] && awk 'NR == 1 {base = $2} {printf "%-16s %7.1f s  %5.2fx  CPU %s s\n", $1, $2, base / $2, $3}' "$OUT/verdict-times.txt"
    ;;

fp8)
    PARTS=" ${FP8_PARTS:-checks speed reference loss} "
    [[ $PARTS == *" checks "* ]] && run_checks "${FP8_CHECKS:-Fp8*}"
    # The cells: the GPT-2-sized decoder (d 768, 12 layers, B16, T1024) and a wide one
    # (d 2048, 4 layers, 16 heads, B8, T1024), bf16 against fp8, from the preset's spec.
    $CLI --db "$OUT/spec.db" run --preset gpt2-small-synthetic --device cuda --dry-run > "$OUT/gpt2.json"
    rm -f "$OUT"/spec.db*
    python3 bench/device/decoder_cells.py "$OUT" "${FP8_RECIPE:-delayed}"
    mv "$OUT/cell-gpt2.json" "$OUT/fp8-gpt2.json"; mv "$OUT/cell-wide.json" "$OUT/fp8-wide.json"
    if [[ $PARTS == *" speed "* ]]; then
        for cell in gpt2 wide; do
            echo "== fp8 speed, $cell: each arm alone, ${FP8_SPEED_STEPS:-80} steps"
            rm -f "$OUT/speed-$cell.db"*
            $CLI --db "$OUT/speed-$cell.db" run --config "$OUT/fp8-$cell.json" --seeds 1 \
                --micro-steps "${FP8_SPEED_STEPS:-80}" --device cuda -q > "$OUT/speed-$cell.txt" 2>&1 \
                || echo "(speed $cell: exit $?)"
            grep -E "^ *(bf16|fp8)|fp8:|faster|verdict|rror|failed" "$OUT/speed-$cell.txt" | head -14
            $CLI --db "$OUT/speed-$cell.db" show 2 2>/dev/null | grep -E "fp8:" | head -2 || true
        done
    fi
    if [[ $PARTS == *" profile "* ]]; then
        # Each cell's bf16 and fp8 arm under the profiler (steps 12-16), their kernel
        # time by kind, and the most fp8 could gain with its casts free.
        mkdir -p build/cuda/profile
        for cell in gpt2 wide; do
            echo "== fp8 profile, $cell: kernel time per step by kind, bf16 against fp8"
            for arm in bf16 fp8; do
                timeout 150 ./build/cuda/bench/bench_profile_step "$OUT/fp8-$cell.json" "$arm" \
                    "build/cuda/profile/$cell-$arm.json" 12 5 > /dev/null || echo "(profile $cell $arm: exit $?)"
            done
            python3 bench/kernels.py categories "build/cuda/profile/$cell-bf16.json" \
                "build/cuda/profile/$cell-fp8.json" 5 | tee "$OUT/kinds-$cell.txt" || true
            # Kernel by kernel, the largest differences first (to $OUT only).
            python3 bench/kernels.py compare "build/cuda/profile/$cell-fp8.json" \
                "build/cuda/profile/$cell-bf16.json" 5 > "$OUT/kernels-$cell.txt" || true
        done
    fi
    if [[ $PARTS == *" reference "* ]]; then
        echo "== PyTorch reference (bench/fp8_reference.py, eager casts)"
        python3 bench/fp8_reference.py --label gpt2 --steps 60 2>&1 | tee "$OUT/reference-gpt2.txt" | grep pytorch || true
        python3 bench/fp8_reference.py --label wide --width 2048 --depth 4 --heads 16 --batch 8 --steps 60 2>&1 \
            | tee "$OUT/reference-wide.txt" | grep pytorch || true
        if [[ ${FP8_COMPILE:-0} == 1 ]]; then
            python3 bench/fp8_reference.py --label gpt2 --steps 60 --compile 2>&1 | tee "$OUT/reference-gpt2-compiled.txt" | grep pytorch || true
            python3 bench/fp8_reference.py --label wide --width 2048 --depth 4 --heads 16 --batch 8 --steps 60 \
                --compile 2>&1 | tee "$OUT/reference-wide-compiled.txt" | grep pytorch || true
        fi
    fi
    fp8_loss() {  # label, spec: FP8_STEPS steps on seeds 1-3 in fast-verdict mode, the verdict
        echo "== fp8 $1: ${FP8_STEPS:-1000} steps on seeds 1 2 3, fast verdict"
        rm -f "$OUT/$1.db"*
        local t=$(date +%s)
        $CLI --db "$OUT/$1.db" run --config "$2" --seeds 1 2 3 \
            --micro-steps "${FP8_STEPS:-1000}" --fast-verdict --device cuda > "$OUT/$1.txt" 2>&1 \
            || echo "($1: exit $?)"
        echo "($(( $(date +%s) - t )) s)"
        grep -vE "^\s*$" "$OUT/$1.txt" | tail -30
    }
    if [[ $PARTS == *" recipes "* ]]; then
        # Delayed and current scaling beside bf16 in one experiment: the same seeds,
        # packed as the fast verdict packs them, judged against bf16's seed band.
        python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
spec = json.load(open(f"{out}/fp8-gpt2.json"))
spec["arms"] = [{"name": "bf16", "precision": "amp-bf16"},
                {"name": "fp8-delayed", "precision": "fp8", "fp8_recipe": "delayed"},
                {"name": "fp8-current", "precision": "fp8", "fp8_recipe": "current"}]
json.dump(spec, open(f"{out}/fp8-recipes.json", "w"), indent=1)
PY
        fp8_loss recipes "$OUT/fp8-recipes.json"
    fi
    if [[ $PARTS == *" loss "* ]]; then
        for cell in ${FP8_LOSS_CELLS:-gpt2 wide}; do
            fp8_loss "loss-$cell" "$OUT/fp8-$cell.json"
        done
    fi
    ;;

overhead)
    run_checks 'Cuda.*:Trainer.*'
    echo "== recording overhead"
    ./build/cuda/bench/bench_recording_overhead ${OVERHEAD_ARGS:-600 7} | tee "$OUT/overhead.txt"
    ;;

capacity)
    run_checks 'Cuda.*:Checkpoint*:FashionMnist.*:BatchFinder.*'
    FB="find-batch --trial-steps 1 --resolution 0.05 --max-trials 10 -q"
    ARMS="--arm fp32=fp32 --arm amp-fp16=amp-fp16 --arm amp-bf16=amp-bf16 --arm fp16-ckpt=amp-fp16,checkpoint"
    CAPACITY=${CAPACITY:-resnet50,gpt2}
    presets=
    if [[ ,$CAPACITY, == *,resnet50,* ]]; then
        echo "== max batch: ResNet-50 224x224 (SGD momentum)"
        timeout 240 $CLI --db "$OUT/capacity.db" $FB --preset resnet50-synthetic --start 256 $ARMS \
            | tee "$OUT/capacity-resnet50.txt" || echo "(stopped: time limit)"
        presets="$presets resnet50-synthetic"
    fi
    if [[ ,$CAPACITY, == *,gpt2,* ]]; then
        echo "== max batch: GPT-2-small-shaped decoder, sequence 1024 (AdamW)"
        timeout 200 $CLI --db "$OUT/capacity.db" $FB --preset gpt2-small-synthetic --start 32 $ARMS \
            | tee "$OUT/capacity-gpt2.txt" || echo "(stopped: time limit)"
        presets="$presets gpt2-small-synthetic"
    fi
    echo "== step-time cost of checkpointing at the presets' batch"
    for p in $presets; do
        timeout 90 $CLI --db "$OUT/ckpt.db" run --preset "$p" --steps 25 --warmup 5 --eval-batches 1 -q \
            --arm amp-fp16=amp-fp16 --arm fp16-ckpt=amp-fp16,checkpoint || echo "(stopped)"
    done
    ;;

advise)
    if [[ ,${ADVISE:-gpt2,cnn}, == *,gpt2,* ]]; then
        echo "== advise: GPT-2-sized decoder, batch 16"
        timeout 1200 $CLI --db "$OUT/advise.db" advise --preset gpt2-small-synthetic --device cuda \
            --budget "${ADVISE_BUDGET:-10m}" | tee "$OUT/advise-gpt2.txt" || echo "(exit $?)"
    fi
    if [[ ,${ADVISE:-gpt2,cnn}, == *,cnn,* ]]; then
        echo "== advise: the recipe CNN, batch 128"
        timeout 1200 $CLI --db "$OUT/advise.db" advise --preset fashion-mnist-recipe --device cuda \
            --data "$AMPBENCH_FASHION_MNIST" --budget "${ADVISE_BUDGET:-10m}" \
            | tee "$OUT/advise-cnn.txt" || echo "(exit $?)"
    fi
    ;;

fidelity)
    run_checks 'Cuda.*:Scripted.*:FileData.*'
    F=build/cuda/fidelity
    mkdir -p "$F"
    echo "== model file and data (bench/fidelity.py make)"
    python3 bench/fidelity.py make "$F" --data "$AMPBENCH_FASHION_MNIST"
    echo "== the workbench: 100 steps, fp32, deterministic"
    rm -f "$F/fidelity.db"
    $CLI --db "$F/fidelity.db" run --name fidelity --model "$F/model.pt" --data "$F/train.npz" \
        --val-data "$F/val.npz" --micro-steps 100 --micro-batch 128 --lr 0.05 --weight-decay 0 --seeds 1 \
        --arm fp32=fp32 --device cuda --deterministic --warmup 0 --eval-interval 0 --eval-batches 4 -q \
        | tee "$OUT/fidelity-ours.txt"
    echo "== PyTorch reference"
    python3 bench/fidelity.py reference "$F" --steps 100 --seed 1 --micro-batch 128 --lr 0.05 \
        > "$OUT/fidelity-reference.json"
    python3 bench/fidelity.py compare "$F/fidelity.db" "$OUT/fidelity-reference.json" --steps 100 \
        | tee "$OUT/fidelity.txt"
    echo "== the same model under AMP (fp16, bf16), for the record"
    $CLI --db "$F/fidelity.db" run --name fidelity-amp --model "$F/model.pt" --data "$F/train.npz" \
        --val-data "$F/val.npz" --epochs 2 --micro-batch 128 --lr 0.05 --seeds 1 2 \
        --arm fp32=fp32 --arm amp-fp16=amp-fp16 --arm amp-bf16=amp-bf16 --device cuda -q \
        | tee "$OUT/fidelity-amp.txt"
    ;;

recipe)
    echo "== the workbench: preset fashion-mnist-recipe"
    rm -f "$OUT/recipe.db"
    $CLI --db "$OUT/recipe.db" run --preset fashion-mnist-recipe --device cuda -q \
        | tee "$OUT/recipe-ours.txt"
    echo "== PyTorch reference (bench/recipe.py)"
    python3 bench/recipe.py --data "$AMPBENCH_FASHION_MNIST" | tee "$OUT/recipe-reference.txt"
    ;;

calibration)
    START=$t0
    DEADLINE=$(( START + ${CAL_DEADLINE:-480} ))
    if [[ ${CAL_AA_TIMING:-1} == 1 ]]; then
        echo "== A/A timing check: preset aa-check, alone on the GPU"
        rm -f "$OUT/aa-timing.db"
        $CLI --db "$OUT/aa-timing.db" run --preset aa-check --device cuda -q | tee "$OUT/aa-timing.txt"
        $CLI --db "$OUT/aa-timing.db" show -e 1 --json > "$OUT/aa-timing.json"
        rm -f "$OUT"/aa-timing.db*
    fi
    first=${CAL_FIRST:-1} reps=${CAL_REPS:-5}
    export CAL_PRESET=${CAL_PRESET:-recipe-controls} CAL_FLAGS=${CAL_FLAGS:-}
    echo "== calibration: repetitions $first..$(( first + reps - 1 )) of $CAL_PRESET" \
         "${CAL_FLAGS:+($CAL_FLAGS) }${CAL_PARALLEL:-5} at a time"
    WORK=build/cuda/calibration
    mkdir -p "$WORK"
    one_rep() {
        local r=$1 left=$(( DEADLINE - $(date +%s) ))
        if (( left < 30 )); then echo "rep $r: not started (deadline)"; return 0; fi
        rm -f "$WORK/rep$r.db"*
        local rc=0 json="$WORK/rep$r.json"
        local t=$(date +%s)
        timeout -s INT "$left" $CLI --db "$WORK/rep$r.db" run --preset "$CAL_PRESET" $CAL_FLAGS \
            --device cuda --threads 2 --seeds $(( 3 * r - 2 )) $(( 3 * r - 1 )) $(( 3 * r )) -q \
            > "$WORK/rep$r.txt" 2>&1 || rc=$?
        # A repetition stopped at the deadline is kept apart: its arms have fewer seeds.
        # (Exit 1 is a run that failed, e.g. a control's loss turning NaN: complete.)
        (( rc == 124 )) && json="$WORK/partial-rep$r.json"
        $CLI --db "$WORK/rep$r.db" show -e 1 --json > "$json" || true
        echo "rep $r: exit $rc after $(( $(date +%s) - START )) s ($(( $(date +%s) - t )) s its own)"
    }
    export -f one_rep
    export CLI WORK DEADLINE START
    seq "$first" $(( first + reps - 1 )) | xargs -P "${CAL_PARALLEL:-5}" -I{} bash -c 'one_rep {}'
    # With CAL_KEEP_DBS=1 the repetitions' databases travel too (for a report).
    keep=(); [[ ${CAL_KEEP_DBS:-0} == 1 ]] && keep=($(cd "$WORK" && ls ./*.db))
    tar czf "$OUT/calibration-$first.tar.gz" -C "$WORK" $(cd "$WORK" && ls ./*.json ./*.txt) \
        "${keep[@]}"
    python3 bench/calibration.py "$WORK"/rep*.json | tee "$OUT/calibration.txt"
    ;;

determinism)
    echo "== tests (determinism)"
    ./build/cuda/tests/test_engine --gtest_filter='Cuda.Deterministic*:Trainer.Deterministic*' \
        2>&1 | grep -E '^\[ *(OK|FAILED|SKIPPED|PASSED) ' || true
    rm -f "$OUT/determinism.db"*
    db="$OUT/determinism.db"
    for det in off on; do
        flag=(); [[ $det == on ]] && flag=(--deterministic)
        $CLI --db "$db" run --preset default --arm fp32=fp32 --arm amp=amp-fp16 --seeds 1 2 \
            --device cuda --name "cnn-deterministic-$det" "${flag[@]}" -q > /dev/null 2>&1 \
            || echo "cnn, deterministic $det: exit $?"
        $CLI --db "$db" run --preset resnet50-synthetic --arm fp32=fp32 --arm amp=amp-fp16 \
            --steps 60 --warmup 10 --eval-interval 0 --device cuda \
            --name "resnet50-deterministic-$det" "${flag[@]}" -q > "$OUT/resnet-$det.txt" 2>&1 \
            || { echo "resnet50, deterministic $det: exit $?"; grep -iE "error|determin" "$OUT/resnet-$det.txt" | head -5; }
    done
    for id in 1 2 3 4; do
        $CLI --db "$db" show -e "$id" --json > "$OUT/determinism-$id.json" 2>/dev/null || true
    done
    python3 - "$OUT"/determinism-*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    try:
        j = json.load(open(path))
    except ValueError:
        continue
    for a in j["summary"]["arms"]:
        ms = a.get("median_step_ms")
        print("%-28s %-5s runs %d  median step %s ms" % (j["experiment"]["name"], a["arm"],
              a["runs"], "%.3f" % ms if ms is not None else "-"))
PY
    rm -f "$db"*
    ;;

rerun)
    db="$OUT/rerun.db"
    rm -f "$db"*
    t1=$(date +%s)
    $CLI --db "$db" run --preset default --arm fp32=fp32 --arm amp=amp-fp16 --seeds 1 2 3 \
        --device cuda --name cnn-nondeterministic -q > /dev/null 2>&1 || echo "cnn: exit $?"
    $CLI --db "$db" run --preset default --arm fp32=fp32 --arm amp=amp-fp16 --seeds 1 2 \
        --device cuda --name cnn-deterministic --deterministic -q > /dev/null 2>&1 \
        || echo "cnn deterministic: exit $?"
    $CLI --db "$db" run --preset resnet50-synthetic --arm fp32=fp32 --arm amp=amp-fp16 \
        --seeds 1 2 --steps 60 --warmup 10 --eval-interval 0 --device cuda \
        --name resnet50-nondeterministic -q > /dev/null 2>&1 || echo "resnet50: exit $?"
    echo "trained 14 runs in $(( $(date +%s) - t1 )) s"
    # Runs 1-6: CNN, not deterministic (fp32 and amp interleaved); 7-10: deterministic;
    # 11-14: ResNet-50, not deterministic.
    for id in 1 2 7 8 11 12; do
        echo "== rerun $id"
        $CLI --db "$db" rerun "$id" -q 2>&1 | grep -E "^Run |ran under|^  |exit" || echo "exit $?"
    done
    rm -f "$db"*
    ;;

numerics)
    echo "== tests (numerics)"
    ./build/cuda/tests/test_numerics > "$OUT/tests.log" 2>&1 || true
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure" "$OUT/tests.log" | head -30 || true
    run_checks 'Cuda.*Numerics*:Cuda.*Attention*:Cuda.HostReadback*'
    db="$OUT/numerics.db"
    rm -f "$db"*
    every=${NUMERICS_EVERY:-10} steps=${NUMERICS_STEPS:-120}
    # The preset's spec with numerics on (no CLI flag for it: the spec file carries it).
    spec() {  # NAME EVERY ARM...
        local name=$1 n=$2; shift 2
        local arms=(); for a in "$@"; do arms+=(--arm "$a"); done
        $CLI run --preset "${PRESET:-gpt2-small-synthetic}" --name "$name" --steps "$steps" --warmup 10 \
            --eval-interval 0 --eval-batches 1 --device cuda "${arms[@]}" --dry-run \
            --save-spec "$OUT/$name.json" > /dev/null
        python3 - "$OUT/$name.json" "$n" "${MODEL:-}" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["numerics_every"] = int(sys.argv[2])
spec["model"].update(json.loads(sys.argv[3] or "{}"))  # MODEL='{"attention": ...}'
json.dump(spec, open(sys.argv[1], "w"), indent=2)
PY
    }
    train() {  # NAME: trains $OUT/NAME.json, prints the table and verdicts
        echo "== $1"
        timeout 300 $CLI --db "$db" run --config "$OUT/$1.json" -q 2>&1 | tee "$OUT/$1.txt" | tail -12 \
            || echo "($1: exit $?)"
    }
    exp=0
    show_all() {  # the experiment just trained: the verdicts' overflow_origin reasons
        exp=$((exp + 1))
        $CLI --db "$db" show -e "$exp" --json > "$OUT/numerics-exp$exp.json" || return 0
        python3 - "$OUT/numerics-exp$exp.json" <<'PY'
import json, sys
for v in json.load(open(sys.argv[1]))["verdicts"]:
    for text in v["reasons"]:
        if text.startswith("overflow first"):
            print("verdict, %s: %s" % (v["arm"], text))
PY
    }
    parts=" ${NUMERICS_PARTS:-underflow overflow attention islands cost} "
    if [[ $parts == *" underflow "* ]]; then
        spec numerics-underflow "$every" fp16=amp-fp16 fp16-scale1=amp-fp16,init_scale=1,growth_interval=1000000000 \
            fp16-noscale=amp-fp16,noscale bf16=amp-bf16
        train numerics-underflow; show_all
    fi
    if [[ $parts == *" overflow "* ]]; then
        # A scale of 2^40 held (no growth): the located module as an FP32 island, then
        # every block too; the skipped steps of each arm say whether the island helps.
        big="init_scale=1099511627776,growth_interval=1000000000"
        spec numerics-overflow "$every" "fp16-2e40=amp-fp16,$big" "head-fp32=amp-fp16,$big,fp32_modules=head" \
            "head-blocks-fp32=amp-fp16,$big,fp32_modules=head;ln_f;blocks.*"
        train numerics-overflow; show_all
    fi
    if [[ $parts == *" attention "* ]]; then
        # Attention scores without the 1/sqrt(d), weights at N(0, 1.5): the scores overflow
        # fp16 in the forward, every step. The locator names the attention; the same
        # arm with the attention as an FP32 island trains, as FP32 does.
        MODEL='{"attention": "unscaled", "init_std": 1.5}' spec numerics-attention "$every" \
            fp32=fp32 fp16=amp-fp16 "fp16-attn-fp32=amp-fp16,fp32_modules=blocks.*.attn"
        train numerics-attention; show_all
        # The same weights with the scores scaled: the skips left with the island are
        # the scaler's search for these large gradients, not the attention.
        MODEL='{"attention": "scaled", "init_std": 1.5}' spec numerics-attention-scaled "$every" \
            fp16=amp-fp16
        train numerics-attention-scaled; show_all
        python3 - "$db" <<'PY'
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
for run_id, arm, status in db.execute("SELECT r.id, e.name || '/' || r.arm, r.status FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name LIKE 'numerics-attention%' ORDER BY r.id"):
    rows = db.execute("SELECT step, loss, skipped, step_ms, timed, mem_peak FROM steps WHERE run_id = ? ORDER BY step", (run_id,)).fetchall()
    timed = [r[3] for r in rows if r[4]]
    last = [r[1] for r in rows[-10:] if r[1] is not None]
    print("attention, %s: %s, %d steps, %d skipped, loss at the end %s, median step %s ms, peak %.2f GiB" % (
        arm, status, len(rows), sum(1 for r in rows if r[2]),
        "%.3f" % statistics.mean(last) if last else "-",
        "%.1f" % statistics.median(timed) if timed else "-",
        max((r[5] or 0) for r in rows) / 2**30 if rows else 0))
    for (text,) in db.execute("SELECT message FROM events WHERE run_id = ? AND message LIKE 'overflow first%' LIMIT 2", (run_id,)):
        print("   event: " + text)
PY
    fi
    if [[ $parts == *" profile "* ]]; then
        # Numerics every 40: step 40 records and flushes the step rows, step 20 only
        # flushes (every 20 steps), step 21 does neither. Each under the profiler alone:
        # the kernels the record adds, and where the device waited for the host.
        mkdir -p build/cuda/profile
        for w in gpt2 resnet50; do
            echo "== profile $w/amp-fp16: step 40 (record, flush), 20 (flush), 21 (neither)"
            for s in 40 20 21; do
                NUMERICS_EVERY=40 timeout 150 ./build/cuda/bench/bench_profile_step "$w" amp-fp16 \
                    build/cuda/profile/step$s-$w.json $s 1 | tail -1 || true
                python3 bench/kernels.py gaps build/cuda/profile/step$s-$w.json 4 || true
            done
            python3 bench/kernels.py compare build/cuda/profile/step40-$w.json build/cuda/profile/step20-$w.json 1 \
                2>/dev/null | head -8 || true
        done
    fi
    if [[ $parts == *" islands "* ]]; then
        spec numerics-islands 0 fp16=amp-fp16 head=amp-fp16,fp32_modules=head \
            "norms=amp-fp16,fp32_modules=blocks.*.ln1;blocks.*.ln2;ln_f" "qkv=amp-fp16,fp32_modules=blocks.*.qkv" \
            "blocks=amp-fp16,fp32_modules=blocks.*"
        train numerics-islands; show_all
    fi
    if [[ $parts == *" cost "* ]]; then
        # The records' cost: off and every 100 optimizer steps over 300 steps (three
        # records), every step over 100, on the decoder and on ResNet-50.
        for p in gpt2-small-synthetic resnet50-synthetic; do
            for n in 0 100 1; do
                PRESET=$p steps=$(( n == 1 ? 100 : 300 )) spec "numerics-cost-${p%%-*}-$n" "$n" fp16=amp-fp16
                train "numerics-cost-${p%%-*}-$n"; show_all
            done
        done
        # What a record costs in device time. The step rows are flushed every 20 steps
        # (a wait for the device), so a recording step (a multiple of 100) is compared
        # with the median of the same run's other flushing steps, and the sum of the
        # extra with the steps' time after warm-up. Also the whole: all steps' time
        # with records every 100 against the run without.
        python3 - "$db" <<'PY'
import json, sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
total_off = {}
for exp_id, name, spec in db.execute("SELECT id, name, spec_json FROM experiments WHERE name LIKE 'numerics-cost-%' ORDER BY id"):
    every = json.loads(spec).get("numerics_every", 0)
    base = name.rsplit("-", 1)[0]
    for (run_id,) in db.execute("SELECT id FROM runs WHERE experiment_id = ?", (exp_id,)):
        rows = db.execute("SELECT step, step_ms, timed, mem_peak FROM steps WHERE run_id = ? AND step > 10", (run_id,)).fetchall()
        med = statistics.median([r[1] for r in rows if r[2]] or [r[1] for r in rows])
        flushing = [r[1] for r in rows if r[0] % 20 == 0 and not (every and r[0] % every == 0)]
        rec = [r[1] for r in rows if every and r[0] % every == 0]
        total = sum(r[1] for r in rows)
        peak = max(r[3] for r in rows) / 2**30
        if not every:
            total_off[base] = (total, len(rows), med)
        line = "record cost, %s: median step %.1f ms, peak %.2f GiB" % (name, med, peak)
        if flushing:
            line += ", flushing steps %.1f ms (median of %d)" % (statistics.median(flushing), len(flushing))
        if rec and flushing and every > 1:
            ref = statistics.median(flushing)
            extra = sum(x - ref for x in rec)
            line += "; recording steps %s ms: extra %.1f ms = %.2f%% of %.0f ms of steps" % (
                "/".join("%.1f" % x for x in rec[:4]), extra, 100 * extra / total, total)
            if base in total_off and total_off[base][1] == len(rows):
                line += "; all steps %.0f ms vs %.0f ms without (%+.2f%%)" % (
                    total, total_off[base][0], 100 * (total / total_off[base][0] - 1))
        elif every == 1:
            line += "; every step records: median %.1f ms" % med
            if base in total_off:
                line += " (%+.1f%% on the run without)" % (100 * (med / total_off[base][2] - 1))
        print(line)
PY
    fi
    echo "== worst layers of every run"
    for id in $($CLI --db "$db" list | awk '$1 ~ /^[0-9]+$/ {print $1}'); do
        $CLI --db "$db" show "$id" --numerics > "$OUT/numerics-run$id.txt" 2>&1 || continue
        head -8 "$OUT/numerics-run$id.txt"
        $CLI --db "$db" show "$id" | grep -E "overflow first|per-layer numerics|FP32 islands" | head -6 || true
    done
    $CLI --db "$db" export -e 1 2 --csv "$OUT/numerics.csv" --json "$OUT/numerics-export.json" || true
    ;;

multigpu)
    gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
    grep -E "data-parallel" "$OUT/configure.log" || true
    if (( gpus < 2 )); then
        echo "multigpu: this host has $gpus GPU(s); the mode needs two or more" >&2
        exit 1
    fi
    echo "== data-parallel and trainer tests"
    (cd build/cuda && ctest -R 'DataParallel|GpuScheduler|Trainer\.' --output-on-failure) \
        > "$OUT/multigpu-tests.log" 2>&1 || echo "(some tests failed: see multigpu-tests.log)"
    tail -3 "$OUT/multigpu-tests.log"
    db="$OUT/multigpu.db"
    rm -f "$db"*
    # (1) ResNet-50, amp-fp16 channels-last: 1 GPU against 2 ranks, same per-GPU batch.
    echo "== ResNet-50 amp-fp16 channels-last: 1 GPU vs data-parallel on 2"
    t1=$(date +%s)
    $CLI --db "$db" run --preset resnet50-synthetic --device cuda --steps 120 --warmup 20 \
        --eval-interval 0 --seeds 1 --name resnet50-dp \
        --arm one=amp-fp16,channels_last=1 --arm dp2=amp-fp16,channels_last=1,ranks=2 -q \
        > "$OUT/multigpu-resnet.log" 2>&1 || echo "resnet50 dp: exit $?"
    echo "trained in $(( $(date +%s) - t1 )) s"
    $CLI --db "$db" show -e 1 --json > "$OUT/multigpu-resnet.json" 2>/dev/null || true
    $CLI --db "$db" show 2 2>/dev/null | grep -E "step time|peak memory|rank [0-9]+:" || true
    python3 - "$OUT/multigpu-resnet.json" <<'PY' || true
import json, sys
j = json.load(open(sys.argv[1]))
for a in j["summary"]["arms"]:
    print("%-4s median step %s ms" % (a["arm"], a.get("median_step_ms")))
PY
    # (2) 2 ranks of 32 against 1 rank of 64 on CUDA (NCCL), deterministic fp32.
    echo "== equivalence on CUDA: 2 ranks x 32 vs 1 rank x 64 (MLP, fp32, deterministic)"
    for cfg in "one 64 1" "two 32 2"; do
        set -- $cfg
        cat > "$OUT/eq-$1.json" <<JSON
{"name": "eq-$1", "model": {"name": "mlp", "width": 256, "depth": 2}, "micro_batch": $2,
 "micro_steps": 200, "eval_interval": 0, "eval_batches": 2, "warmup_steps": 5, "seeds": [5],
 "device": "cuda", "deterministic": true,
 "arms": [{"name": "fp32", "precision": "fp32", "lr_rule": "none", "ranks": $3}]}
JSON
        $CLI --db "$db" run --config "$OUT/eq-$1.json" -q > /dev/null 2>&1 || echo "eq-$1: exit $?"
    done
    python3 - "$db" <<'PY' || true
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
ids = [r[0] for r in c.execute("select r.id from runs r join experiments e on e.id = r.experiment_id "
                               "where e.name in ('eq-one', 'eq-two') order by r.id")]
one, two = ([r[0] for r in c.execute("select loss from steps where run_id = ? order by step", (i,))] for i in ids)
diff = max(abs(a - b) / max(abs(a), 1e-12) for a, b in zip(one, two))
print("steps %d and %d; largest relative loss difference %.3g" % (len(one), len(two), diff))
PY
    # (3) The noise-band preset's time to a verdict: runs spread over 2 GPUs vs 1.
    echo "== noise-band preset: time to verdict over 2 GPUs vs 1"
    for n in 1 2; do
        $CLI run --preset noise-band --device cuda --dry-run --save-spec "$OUT/noise-$n.json" \
            > /dev/null 2>&1 || true
        python3 - "$OUT/noise-$n.json" "$n" <<'PY'
import json, sys
p, n = sys.argv[1], int(sys.argv[2])
s = json.load(open(p)); s["gpus"] = n; s["name"] = "noise-band-gpus%d" % n
json.dump(s, open(p, "w"))
PY
        t1=$(date +%s.%N)
        $CLI --db "$db" run --config "$OUT/noise-$n.json" -q > "$OUT/noise-$n.log" 2>&1 \
            || echo "noise-band gpus $n: exit $?"
        echo "gpus $n: $(python3 -c "print('%.1f' % ($(date +%s.%N) - $t1))") s to the verdict"
    done
    ;;

profile)
    TRACES=build/cuda/profile
    mkdir -p "$TRACES"
    for cell in ${PROFILE:-gpt2:amp-bf16}; do
        w=${cell%%:*} a=${cell#*:}
        echo "== profile $w/$a: ours vs PyTorch, steps 12-16"
        timeout 150 ./build/cuda/bench/bench_profile_step "$w" "$a" "$TRACES/ours-$w-$a.json" 12 5 || true
        timeout 150 python3 bench/kernels.py profile "$w" "$a" "$TRACES/ref-$w-$a.json" 12 5 2>&1 | tail -3 || true
        python3 bench/kernels.py compare "$TRACES/ours-$w-$a.json" "$TRACES/ref-$w-$a.json" 5 \
            | tee "$OUT/kernels-$w-$a.txt" || true
        if [[ ${PROFILE_UNFUSED:-0} != 0 ]]; then
            echo "== profile $w/$a: ours fused vs ours unfused (AMPBENCH_UNFUSED=1), steps 12-16"
            AMPBENCH_UNFUSED=1 timeout 150 ./build/cuda/bench/bench_profile_step "$w" "$a" \
                "$TRACES/unfused-$w-$a.json" 12 5 || true
            python3 bench/kernels.py compare "$TRACES/ours-$w-$a.json" "$TRACES/unfused-$w-$a.json" 5 \
                | sed 's/torch/unfsd/' | tee "$OUT/kernels-unfused-$w-$a.txt" || true
        fi
        if [[ ${PROFILE_COMPILE:-0} != 0 ]]; then
            echo "== profile $w/$a: ours vs PyTorch under torch.compile, steps 12-16"
            timeout 240 python3 bench/kernels.py profile "$w" "$a" "$TRACES/refc-$w-$a.json" 12 5 --compile 2>&1 \
                | tail -3 || true
            python3 bench/kernels.py compare "$TRACES/ours-$w-$a.json" "$TRACES/refc-$w-$a.json" 5 \
                | tee "$OUT/kernels-compiled-$w-$a.txt" || true
        fi
    done
    ;;

bench)
    if [[ -n "${SKIP_TESTS:-}" ]]; then
        echo "== tests skipped: SKIP_TESTS is set"
    else
        run_suite || echo "(some tests failed: benchmarking anyway)"
    fi
    echo "== benchmarks (ours)"
    ./build/cuda/bench/bench_workloads --workloads "$WORKLOADS" $BENCH_ARGS --db "$OUT/bench.db" \
        | tee "$OUT/ours.txt" | grep -v '^CELL'
    echo "== benchmarks (PyTorch reference)"
    python3 bench/reference.py --workloads "$WORKLOADS" $BENCH_ARGS --data "$AMPBENCH_FASHION_MNIST" \
        | tee "$OUT/reference.txt" | grep -v '^CELL' || true
    compiled=
    if [[ ${BENCH_COMPILE:-1} != 0 ]]; then
        # The stronger peer: the same script with the one line a user adds. A cell that
        # torch.compile fails on says why and the others go on.
        echo "== benchmarks (PyTorch reference, torch.compile)"
        python3 bench/reference.py --compile --workloads "$WORKLOADS" $BENCH_ARGS \
            --data "$AMPBENCH_FASHION_MNIST" | tee "$OUT/reference-compiled.txt" | grep -v '^CELL' || true
        compiled=$OUT/reference-compiled.txt
    fi
    echo "== comparison (ours / PyTorch${compiled:+, eager and compiled})"
    python3 bench/compare.py "$OUT/ours.txt" "$OUT/reference.txt" ${compiled:+"$compiled"} | tee "$OUT/compare.md"
    ;;
esac
