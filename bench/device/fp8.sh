# bench/device/fp8.sh: bash bench/device.sh fp8 (sourced by it, after the build).
#
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
    python3 bench/device/fp8_recipes_spec.py "$OUT"
    fp8_loss recipes "$OUT/fp8-recipes.json"
fi
if [[ $PARTS == *" loss "* ]]; then
    for cell in ${FP8_LOSS_CELLS:-gpt2 wide}; do
        fp8_loss "loss-$cell" "$OUT/fp8-$cell.json"
    done
fi
