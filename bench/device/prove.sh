# bench/device/prove.sh: bash bench/device.sh prove (sourced by it, after the build).
#
#   prove     everything the GPU must show, in one call of at most PROVE_DEADLINE (530)
#             seconds from the start of the script: builds ampbench-cli, test_engine and
#             bench_profile_step (every failing unit named: ninja -k 0), then the parts
#             of PROVE_PARTS ("tests verdict decoder" by default; also fp8choice,
#             fp8loss, resnet, reference, recipe, profile: below, in the order they run), each skipped with a
#             word when too little time is left, the summary in $OUT/summary.txt and
#             everything in $OUT/prove.tar.gz, packed again after each part. Run
#             bench/cuda-check.sh here first.
#
# Parts (PROVE_PARTS, in this order; each skipped with a word when the time left is
# less than it needs):
#   tests     every GPU test of test_engine (PROVE_TESTS), failures in full
#   verdict   the recipe's fast verdict (3 arms x 3 seeds x 10 epochs), seeds fused
#             (the default) and --no-fuse-seeds, command to verdict, with the plan's
#             choice and reason
#   decoder   the bf16 and fp8 arms of the GPT-2-sized decoder (d 768 x 12, B16, T1024)
#             and the wide one (d 2048 x 4, B8), each alone, fused kernels on and off
#             (AMPBENCH_UNFUSED=1; PROVE_DECODER_FUSED="on" for the first alone)
#   fp8choice the GPT-2-sized cell's fp8 arm with its layers chosen from their shapes
#             (auto), all of them, and head;fc1
#   fp8loss   bf16 and fp8 on PROVE_FP8_CELL (gpt2; or wide), seeds 1-3, PROVE_FP8_STEPS
#             (300) steps, fast verdict
#   resnet    ResNet-50 amp-fp16 channels-last: ours, PyTorch eager and compiled
#   reference the same cells in PyTorch (bench/fp8_reference.py), eager, then under
#             torch.compile (PROVE_COMPILE=1)
#   recipe    the sequential PyTorch script of the recipe (bench/recipe.py)
#   profile   gpt2/amp-bf16 kernel by kernel: ours fused, ours unfused and compiled PyTorch
# Everything lands in $OUT/prove/ and, after each part, in $OUT/prove.tar.gz (one file
# comes back even when the call is cut off), with the summary in $OUT/summary.txt.
PROVE_START=${PROVE_START:-$t0}
PROVE_DEADLINE=${PROVE_DEADLINE:-530}
PARTS=" ${PROVE_PARTS:-tests verdict decoder} "
P=$OUT/prove
mkdir -p "$P"
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $(( PROVE_START + PROVE_DEADLINE - $(date +%s) )); }
pack() { tar czf "$OUT/prove.tar.gz" -C "$OUT" prove summary.txt 2> /dev/null || true; }
# Whether a part that needs about $2 seconds still fits; says so when it does not.
fits() {
    local l; l=$(left)
    if (( l < $2 )); then say "== $1: skipped, ${l} s left of the call's budget, it needs about $2"; return 1; fi
    return 0
}
say "== prove on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F)"
say "build: $(( $(date +%s) - PROVE_START )) s since the start"

if [[ $PARTS == *" tests "* ]] && fits tests 60; then
    say "== GPU tests: ${PROVE_TESTS:=Cuda.*:FusedSeeds.*:FusedNetwork.*:FusionProblem.*:FastVerdict.*:Fp8*}"
    t=$(date +%s)
    timeout $(( $(left) - 30 )) ./build/cuda/tests/test_engine --gtest_filter="$PROVE_TESTS" \
        > "$P/gpu-tests.log" 2>&1 || echo "(test_engine: exit $?)" >> "$P/gpu-tests.log"
    grep -E "^\[ +(OK|FAILED|SKIPPED) +\]" "$P/gpu-tests.log" | sed 's/ (\([0-9]*\) ms)/ \1 ms/' > "$P/gpu-tests.txt" || true
    say "$(grep -c '\[       OK \]' "$P/gpu-tests.txt") passed, $(grep -c '\[  FAILED  \]' "$P/gpu-tests.txt") failed," \
        "$(grep -c '\[  SKIPPED \]' "$P/gpu-tests.txt") skipped, $(( $(date +%s) - t )) s; $(tail -1 "$P/gpu-tests.log")"
    grep -E "FAILED|SKIPPED" "$P/gpu-tests.txt" | sort -u | head -40 | tee -a "$SUMMARY"
    # Each failure's own lines, and what the tests print of their measurements.
    grep -E ": Failure$|^unknown file: Failure|C\+\+ exception" -A6 "$P/gpu-tests.log" | head -120 | tee -a "$SUMMARY"
    grep -E "^(fused|graph|fast verdict|device busy|largest relative|members|fusion|fp8|loss|layernorm)" -i \
        "$P/gpu-tests.log" | head -40 | tee -a "$SUMMARY"
    pack
fi

if [[ $PARTS == *" verdict "* ]] && fits verdict 90; then
    say "== the recipe's fast verdict: seeds fused (default), then --no-fuse-seeds"
    for cell in fused unfused; do
        flags=(--preset fashion-mnist-recipe --fast-verdict)
        [[ $cell == unfused ]] && flags+=(--no-fuse-seeds)
        db=$P/$cell.db
        rm -f "$db"*
        t=$(date +%s.%N)
        timeout $(( $(left) - 20 )) $CLI --db "$db" run "${flags[@]}" --device cuda > "$P/$cell.txt" 2>&1 \
            || echo "($cell: exit $?)" | tee -a "$SUMMARY"
        w=$(python3 -c "import time; print(f'{time.time() - $t:.1f}')")
        say "$cell: $w s from the command to the verdict"
        grep -iE "fus|pack|stream|at once|plan|alone|verdict|aligned|faster|seconds" "$P/$cell.txt" | head -20 | tee -a "$SUMMARY"
        python3 bench/step_gaps.py "$db" > "$P/$cell.gaps" 2>&1 && sed 's/^/  /' "$P/$cell.gaps" | head -14 | tee -a "$SUMMARY"
        fits "verdict (unfused)" 50 || break
    done
    pack
fi

decoder_specs() {
    $CLI --db "$P/spec.db" run --preset gpt2-small-synthetic --device cuda --dry-run > "$P/gpt2.json"
    rm -f "$P"/spec.db*
    python3 bench/device/decoder_cells.py "$P"
}
if [[ $PARTS == *" decoder "* ]] && fits decoder 60; then
    decoder_specs
    for fused in ${PROVE_DECODER_FUSED:-on off}; do
        for cell in gpt2 wide; do
            fits "decoder $cell (fused kernels $fused)" 25 || continue
            db=$P/decoder-$cell-$fused.db
            rm -f "$db"*
            env $([[ $fused == off ]] && echo AMPBENCH_UNFUSED=1) timeout $(( $(left) - 10 )) \
                $CLI --db "$db" run --config "$P/cell-$cell.json" --seeds 1 \
                --micro-steps "${PROVE_DECODER_STEPS:-60}" --device cuda -q > "$P/decoder-$cell-$fused.txt" 2>&1 \
                || echo "(decoder $cell $fused: exit $?)" | tee -a "$SUMMARY"
            python3 bench/device/arm_steps.py "$db" "ours $cell fused-kernels-$fused" | tee -a "$SUMMARY"
            grep -iE "fused kernels|switched off|fp8:" "$P/decoder-$cell-$fused.txt" | head -4 | tee -a "$SUMMARY"
        done
    done
    pack
fi

if [[ $PARTS == *" fp8choice "* ]] && fits fp8choice 50; then
    # Which Linear layers an FP8 arm computes in FP8, on the GPT-2-sized cell: chosen
    # from their shapes (auto), all of them, and the head and fc1 only.
    [[ -e $P/cell-gpt2.json ]] || decoder_specs
    say "== fp8 layer choice, gpt2: auto, all, head;fc1 (each alone, ${PROVE_DECODER_STEPS:-60} steps)"
    for choice in auto all "head;fc1"; do
        fits "fp8 $choice" 15 || break
        tag=$(tr -c 'a-z0-9\n' - <<< "$choice")
        python3 bench/device/prove_fp8_choice.py "$P/cell-gpt2.json" "$choice" "$P/fp8-$tag.json"
        db=$P/fp8-$tag.db
        rm -f "$db"*
        timeout $(( $(left) - 5 )) $CLI --db "$db" run --config "$P/fp8-$tag.json" --seeds 1 \
            --micro-steps "${PROVE_DECODER_STEPS:-60}" --device cuda -q > "$P/fp8-$tag.txt" 2>&1 \
            || echo "(fp8 $choice: exit $?)" | tee -a "$SUMMARY"
        python3 bench/device/arm_steps.py "$db" "ours gpt2 fp8_modules=$choice" | tee -a "$SUMMARY"
        python3 bench/device/arm_steps.py "$db" "" --events "fp8:" | tee -a "$SUMMARY"
    done
    pack
fi

if [[ $PARTS == *" fp8loss "* ]] && fits fp8loss 120; then
    # bf16 and fp8 (auto) on one decoder cell, seeds 1-3, fast verdict: fp8's loss
    # against bf16's seed band.
    cell=${PROVE_FP8_CELL:-gpt2}
    [[ -e $P/cell-$cell.json ]] || decoder_specs
    steps=${PROVE_FP8_STEPS:-300}
    say "== fp8 quality, $cell: bf16 and fp8 on seeds 1 2 3, $steps steps, fast verdict"
    db=$P/fp8-loss-$cell.db
    rm -f "$db"*
    timeout $(( $(left) - 5 )) $CLI --db "$db" run --config "$P/cell-$cell.json" --seeds 1 2 3 \
        --micro-steps "$steps" --fast-verdict --device cuda > "$P/fp8-loss-$cell.txt" 2>&1 \
        || echo "(fp8 loss: exit $?)" | tee -a "$SUMMARY"
    sed -n '/^verdicts against/,/^experiment/p' "$P/fp8-loss-$cell.txt" | head -14 | tee -a "$SUMMARY"
    grep -E "^(bf16|fp8) " "$P/fp8-loss-$cell.txt" | tee -a "$SUMMARY"
    pack
fi

if [[ $PARTS == *" resnet "* ]] && fits resnet 90; then
    # ResNet-50, amp-fp16 channels-last: ours, PyTorch eager and PyTorch compiled.
    say "== resnet50 amp-fp16 channels-last: ours, PyTorch eager, compiled"
    db=$P/resnet.db
    rm -f "$db"*
    timeout $(( $(left) - 5 )) $CLI --db "$db" run --preset resnet50-synthetic --arm amp-fp16-cl=amp-fp16,channels_last=1 \
        --seeds 1 --steps 40 --warmup 10 --eval-interval 0 --device cuda -q > "$P/resnet.txt" 2>&1 \
        || echo "(resnet ours: exit $?)" | tee -a "$SUMMARY"
    python3 bench/device/arm_steps.py "$db" "ours resnet50" | tee -a "$SUMMARY"
    for how in eager compiled; do
        fits "resnet reference $how" $([[ $how == eager ]] && echo 40 || echo 120) || break
        timeout $(( $(left) - 5 )) python3 bench/reference.py --workloads resnet50 --arms amp-fp16-cl \
            --data "$AMPBENCH_FASHION_MNIST" $([[ $how == compiled ]] && echo --compile) > "$P/resnet-$how.txt" 2>&1 \
            || echo "(resnet reference $how: exit $?)" | tee -a "$SUMMARY"
        grep -vE "^CELL|^W[0-9]" "$P/resnet-$how.txt" | tail -4 | tee -a "$SUMMARY"
    done
    pack
fi

if [[ $PARTS == *" reference "* ]]; then
    for cell in gpt2 wide; do
        args=(--label "$cell" --steps 60)
        [[ $cell == wide ]] && args+=(--width 2048 --depth 4 --heads 16 --batch 8)
        fits "reference $cell eager" 40 && timeout $(( $(left) - 5 )) python3 bench/fp8_reference.py "${args[@]}" \
            2>&1 | tee "$P/reference-$cell.txt" | grep pytorch | tee -a "$SUMMARY"
        if [[ ${PROVE_COMPILE:-1} == 1 ]] && fits "reference $cell compiled" 120; then
            timeout $(( $(left) - 5 )) python3 bench/fp8_reference.py "${args[@]}" --compile 2>&1 \
                | tee "$P/reference-$cell-compiled.txt" | grep pytorch | tee -a "$SUMMARY"
        fi
        pack
    done
fi

if [[ $PARTS == *" recipe "* ]] && fits recipe 170; then
    say "== the recipe in PyTorch, its nine runs one after another (bench/recipe.py)"
    t=$(date +%s.%N)
    timeout $(( $(left) - 5 )) python3 bench/recipe.py --data "$AMPBENCH_FASHION_MNIST" > "$P/recipe-pytorch.txt" 2>&1 \
        || echo "(recipe.py: exit $?)" | tee -a "$SUMMARY"
    say "pytorch-script: $(python3 -c "import time; print(f'{time.time() - $t:.1f}')") s"
    tail -6 "$P/recipe-pytorch.txt" | tee -a "$SUMMARY"
    pack
fi

if [[ $PARTS == *" profile "* ]] && fits profile 200; then
    TRACES=build/cuda/profile
    mkdir -p "$TRACES"
    say "== profile gpt2/amp-bf16, steps 12-16: ours fused, ours unfused, compiled PyTorch"
    timeout 100 ./build/cuda/bench/bench_profile_step gpt2 amp-bf16 "$TRACES/ours.json" 12 5 > /dev/null 2>&1 || true
    AMPBENCH_UNFUSED=1 timeout 100 ./build/cuda/bench/bench_profile_step gpt2 amp-bf16 "$TRACES/unfused.json" 12 5 \
        > /dev/null 2>&1 || true
    python3 bench/kernels.py compare "$TRACES/ours.json" "$TRACES/unfused.json" 5 > "$P/kernels-unfused.txt" 2>&1 || true
    head -30 "$P/kernels-unfused.txt" | tee -a "$SUMMARY"
    if fits "profile compiled" 120; then
        timeout $(( $(left) - 5 )) python3 bench/kernels.py profile gpt2 amp-bf16 "$TRACES/refc.json" 12 5 --compile \
            > "$P/refc.log" 2>&1 || true
        python3 bench/kernels.py compare "$TRACES/ours.json" "$TRACES/refc.json" 5 > "$P/kernels-compiled.txt" 2>&1 || true
        head -40 "$P/kernels-compiled.txt" | tee -a "$SUMMARY"
    fi
    pack
fi
say "== prove done after $(( $(date +%s) - PROVE_START )) s"
pack
