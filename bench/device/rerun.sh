# bench/device/rerun.sh: bash bench/device.sh rerun (sourced by it, after the build).
#
#   rerun     reruns on the GPU: the default CNN comparison (fp32, amp-fp16) without
#             deterministic mode on three seeds and with it on two, and ResNet-50
#             (60 steps, two seeds) without it; `ampbench-cli rerun` of two runs of
#             each, printing what it says of every rerun. Builds only ampbench-cli.

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
