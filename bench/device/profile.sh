# bench/device/profile.sh: bash bench/device.sh profile (sourced by it, after the build).
#
#   profile   each cell of PROFILE under the PyTorch profiler, ours
#             (bench_profile_step) and the reference (bench/kernels.py profile),
#             compared kernel by kernel (bench/kernels.py compare).
#
# Environment:
#   PROFILE="gpt2:amp-bf16"       WORKLOAD:ARM cells, space-separated, e.g.
#                                 PROFILE="gpt2:amp-bf16 gpt2:fp32".
#   PROFILE_UNFUSED=0             1 also profiles ours on the unfused path
#                                 (AMPBENCH_UNFUSED=1) and compares the two.
#   PROFILE_COMPILE=0             1 also profiles the reference under
#                                 torch.compile and compares ours with it.

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
