# bench/device/determinism.sh: bash bench/device.sh determinism (sourced by it, after the build).
#
#   determinism  the determinism tests (Cuda.Deterministic*, Trainer.Deterministic*), then
#             the cost of deterministic mode: the default CNN comparison and
#             ResNet-50 (fp32 and amp-fp16) with and without --deterministic, each
#             arm's median step time from `show -e ID --json`.

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
python3 bench/device/determinism_steps.py "$OUT"/determinism-*.json
rm -f "$db"*
