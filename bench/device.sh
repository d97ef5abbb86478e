#!/usr/bin/env bash
# One call on the CUDA host (see ../shared/GPU.md): configure the CUDA build
# against PyTorch's LibTorch, build core + CLI + tests + benchmarks, run the tests
# (GPU-only ones included), then the benchmarks and the PyTorch reference, and
# print the comparison table last.
#
# Needs .deps/ (git-ignored), filled on a Debian machine by bench/fetch-deps.sh:
# header-only and -dev packages unpacked (SQLite, zlib, nlohmann-json, CLI11,
# GoogleTest's source) and Fashion-MNIST's four files. Run it with the device tool:
#   run(command="bash bench/device.sh", carry=[".deps"])
#   BENCH_ARGS=--quick for a short benchmark; WORKLOADS=cnn,resnet50,gpt2;
#   SKIP_TESTS=1 benchmarks code whose tests already passed there;
#   MODE=capacity: GPU tests, then max-batch searches and the cost of checkpointing
#   (CAPACITY=resnet50,gpt2 chooses the models).
#   MODE=investigate: GPU tests, ResNet-50's fp32 max-batch boundary, and GPT-2
#   amp-bf16's kernels (ours vs PyTorch, under nsys when the host has it).
#   MODE=overhead: the recording-overhead benchmark (default comparison, alternating
#   recorded and bare rounds) on the GPU.
#   MODE=profile PROFILE="gpt2:amp-bf16 gpt2:fp32": each cell under the PyTorch
#   profiler, ours and the reference, compared kernel by kernel (bench/kernels.py).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/ampbench-out}
mkdir -p "$OUT"
DEPS=$PWD/.deps/root/usr
WORKLOADS=${WORKLOADS:-cnn,resnet50,gpt2}
BENCH_ARGS=${BENCH_ARGS:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

echo "== host"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'

# Fashion-MNIST where Debian's package would put it, so the same tests and presets run.
mkdir -p /usr/share/datasets
[[ -e /usr/share/datasets/fashion-mnist ]] || ln -s "$PWD/.deps/data" /usr/share/datasets/fashion-mnist

echo "== configure + build"
TORCH_PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
export CUDACXX=/usr/local/cuda/bin/nvcc TORCH_CUDA_ARCH_LIST=9.0
t0=$(date +%s)
cmake -S . -B build/cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMPBENCH_BUILD_GUI=OFF \
    -DCMAKE_PREFIX_PATH="$TORCH_PREFIX;$DEPS" -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSQLite3_INCLUDE_DIR="$DEPS/include" -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 \
    -DZLIB_INCLUDE_DIR="$DEPS/include" -DZLIB_LIBRARY=/usr/lib/x86_64-linux-gnu/libz.so.1 \
    -DAMPBENCH_GTEST_SOURCE="$DEPS/src/googletest" > "$OUT/configure.log" 2>&1 \
    || { tail -40 "$OUT/configure.log"; exit 1; }
grep -E "ampbench:" "$OUT/configure.log" || true
cmake --build build/cuda -j"$(nproc)" > "$OUT/build.log" 2>&1 || { grep -E "error|Error" -A3 "$OUT/build.log" | head -60; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"

echo "== tests"
if [[ "${MODE:-bench}" == capacity-resnet ]]; then
    :
elif [[ "${MODE:-bench}" == overhead ]]; then
    ./build/cuda/tests/test_engine --gtest_filter='Cuda.*:Trainer.*' > "$OUT/tests.log" 2>&1 || true
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|tests? ran" "$OUT/tests.log" | head -20 || true
    ./build/cuda/bench/bench_recording_overhead ${OVERHEAD_ARGS:-600 7} | tee "$OUT/overhead.txt"
    exit 0
elif [[ "${MODE:-bench}" == profile ]]; then
    for cell in ${PROFILE:-gpt2:amp-bf16}; do
        w=${cell%%:*} a=${cell#*:}
        echo "== profile $w/$a: ours vs PyTorch, steps 12-16"
        timeout 150 ./build/cuda/bench/bench_profile_step "$w" "$a" /tmp/ours-$w-$a.json 12 5 || true
        timeout 150 python3 bench/kernels.py profile "$w" "$a" /tmp/ref-$w-$a.json 12 5 2>&1 | tail -3 || true
        python3 bench/kernels.py compare /tmp/ours-$w-$a.json /tmp/ref-$w-$a.json 5 \
            | tee "$OUT/kernels-$w-$a.txt" || true
    done
    exit 0
elif [[ "${MODE:-bench}" == investigate ]]; then
    ./build/cuda/tests/test_engine --gtest_filter='Cuda.*:BatchFinder.*:Capacity.*' \
        > "$OUT/tests.log" 2>&1 || true
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|tests? ran" "$OUT/tests.log" | head -30 || true
elif [[ "${MODE:-bench}" == capacity ]]; then
    ./build/cuda/tests/test_engine --gtest_filter='Cuda.*:Checkpoint*:FashionMnist.*:BatchFinder.*' \
        > "$OUT/tests.log" 2>&1 || true
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|tests? ran" "$OUT/tests.log" | head -30 || true
elif [[ -n "${SKIP_TESTS:-}" ]]; then
    echo "(tests skipped: SKIP_TESTS is set)"
else
(cd build/cuda && ctest --output-on-failure -j4 > "$OUT/tests.log" 2>&1) || { grep -E "Failed|FAILED|Failure" -A8 "$OUT/tests.log" | head -80; tail -5 "$OUT/tests.log"; }
grep -E "tests passed|Skipped|SKIPPED|skip" "$OUT/tests.log" | tail -12 || true
./build/cuda/tests/test_engine --gtest_filter='Cuda.*' 2>&1 | grep -E "OK|SKIPPED|FAILED|PASSED" | head -12
fi

if [[ "${MODE:-bench}" == capacity-resnet ]]; then
    # ResNet-50's AMP arms alone, cuDNN benchmark off (its algorithm search at
    # thousands of images per batch costs more than the trials themselves).
    echo "== backtrace of the reader test that crashes only here"
    cuda-gdb -batch -ex run -ex bt --args ./build/cuda/tests/test_engine \
        --gtest_filter=FashionMnist.WrongMagicIsNamed 2>&1 | grep -E "^#|signal|SIG" | head -25 || true
    CLI=./build/cuda/app/ampbench-cli
    $CLI run --preset resnet50-synthetic --dry-run --save-spec /tmp/r50.json > /dev/null
    python3 -c 'import json;p="/tmp/r50.json";s=json.load(open(p));s["cudnn_benchmark"]=False;json.dump(s,open(p,"w"))'
    echo "== max batch: ResNet-50 224x224, AMP arms"
    timeout 200 $CLI --db "$OUT/capacity.db" find-batch --config /tmp/r50.json --trial-steps 1 \
        --resolution 0.1 --max-trials 6 -q --start 2048 \
        --arm amp-fp16=amp-fp16 --arm amp-bf16=amp-bf16 --arm fp16-ckpt=amp-fp16,checkpoint \
        | tee "$OUT/capacity-resnet50-amp.txt" || echo "(stopped: time limit)"
    exit 0
fi
if [[ "${MODE:-bench}" == investigate ]]; then
    CLI=./build/cuda/app/ampbench-cli
    echo "== max batch: ResNet-50 fp32 boundary above 1536 (cuDNN benchmark off)"
    $CLI run --preset resnet50-synthetic --dry-run --save-spec /tmp/r50.json > /dev/null
    python3 -c 'import json;p="/tmp/r50.json";s=json.load(open(p));s["cudnn_benchmark"]=False;json.dump(s,open(p,"w"))'
    timeout 220 $CLI --db "$OUT/capacity.db" find-batch --config /tmp/r50.json --trial-steps 1 \
        --resolution 0.02 --max-trials 8 --start 1536 --arm fp32=fp32 \
        | tee "$OUT/capacity-resnet50-fp32.txt" || echo "(stopped: time limit)"
    echo "== GPT-2 amp-bf16: ours vs PyTorch, same process shape, one cell each"
    NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
        /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1 || true)
    echo "nsys: ${NSYS:-none}"
    REF='import sys,torch; sys.path.insert(0,"bench"); import reference as r
dev=torch.device("cuda"); w=r.workload("gpt2",True,"",dev); w["timed"]=20
print("PyTorch amp-bf16:", r.run_cell(w,("amp-bf16","bf16",False,1,False),dev))'
    OURS="$CLI --db /tmp/gpt2.db run --preset gpt2-small-synthetic --arm amp-bf16=amp-bf16 --steps 30 --warmup 10 --eval-batches 1"
    if [[ -n "$NSYS" ]]; then
        for who in ours ref; do
            if [[ $who == ours ]]; then cmd=($OURS); else cmd=(python3 -c "$REF"); fi
            timeout 150 "$NSYS" profile -t cuda -o /tmp/$who --force-overwrite true "${cmd[@]}" 2>&1 \
                | grep -vE "^(Generating|Collecting|Processing|Saving|\s*$)" | tail -8 || true
            "$NSYS" stats -q -r cuda_gpu_kern_sum -f csv -o "$OUT/$who" /tmp/$who.nsys-rep > /dev/null 2>&1 || true
            echo "-- $who: top kernels (total ms, instances, name)"
            python3 - "$OUT/${who}_cuda_gpu_kern_sum.csv" <<'PY' || true
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = sum(float(r["Total Time (ns)"]) for r in rows)
print(f"all kernels {tot/1e6:.1f} ms in {sum(int(r['Instances']) for r in rows)} launches")
for r in rows[:22]:
    print(f"{float(r['Total Time (ns)'])/1e6:9.1f} {int(r['Instances']):6d}  {r['Name'][:150]}")
PY
        done
    else
        timeout 120 $OURS | tail -6 || true
        timeout 120 python3 -c "$REF" || true
    fi
    exit 0
fi
if [[ "${MODE:-bench}" == capacity ]]; then
    CLI=./build/cuda/app/ampbench-cli
    FB="find-batch --trial-steps 1 --resolution 0.05 --max-trials 10 -q"
    CAPACITY=${CAPACITY:-resnet50,gpt2}
    if [[ ,$CAPACITY, == *,resnet50,* ]]; then
    echo "== max batch: ResNet-50 224x224 (SGD momentum)"
    timeout 240 $CLI --db "$OUT/capacity.db" $FB --preset resnet50-synthetic --start 256 \
        --arm fp32=fp32 --arm amp-fp16=amp-fp16 --arm amp-bf16=amp-bf16 --arm fp16-ckpt=amp-fp16,checkpoint \
        | tee "$OUT/capacity-resnet50.txt" || echo "(stopped: time limit)"
    fi
    echo "== max batch: GPT-2-small-shaped decoder, sequence 1024 (AdamW)"
    [[ ,$CAPACITY, == *,gpt2,* ]] && timeout 200 $CLI --db "$OUT/capacity.db" $FB --preset gpt2-small-synthetic --start 32 \
        --arm fp32=fp32 --arm amp-fp16=amp-fp16 --arm amp-bf16=amp-bf16 --arm fp16-ckpt=amp-fp16,checkpoint \
        | tee "$OUT/capacity-gpt2.txt" || echo "(stopped: time limit)"
    echo "== step-time cost of checkpointing at the presets' batch"
    presets=gpt2-small-synthetic
    [[ ,$CAPACITY, == *,resnet50,* ]] && presets="resnet50-synthetic $presets"
    for p in $presets; do
        timeout 90 $CLI --db "$OUT/ckpt.db" run --preset $p --steps 25 --warmup 5 --eval-batches 1 -q \
            --arm amp-fp16=amp-fp16 --arm fp16-ckpt=amp-fp16,checkpoint || echo "(stopped)"
    done
    exit 0
fi
echo "== benchmarks (ours)"
./build/cuda/bench/bench_workloads --workloads "$WORKLOADS" $BENCH_ARGS --db "$OUT/bench.db" | tee "$OUT/ours.txt" | grep -v '^CELL'
echo "== benchmarks (PyTorch reference)"
python3 bench/reference.py --workloads "$WORKLOADS" $BENCH_ARGS --data .deps/data | tee "$OUT/reference.txt" | grep -v '^CELL' || true
echo "== comparison (ours / PyTorch)"
python3 bench/compare.py "$OUT/ours.txt" "$OUT/reference.txt" | tee "$OUT/compare.md"
