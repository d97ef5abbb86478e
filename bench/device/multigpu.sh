# bench/device/multigpu.sh: bash bench/device.sh multigpu (sourced by it, after the build).
#
#   multigpu  data-parallel arms and runs spread over GPUs (two GPUs or more): the
#             data-parallel and trainer tests, then (1) ResNet-50 amp-fp16 channels-last
#             on 1 GPU and data-parallel on 2 at the same per-GPU batch (each arm's
#             median step time and every rank's summary); (2) the 2-rank vs 1-rank
#             equivalence on CUDA: the MLP on Fashion-MNIST, fp32, deterministic, 2 ranks
#             of micro-batch 32 against 1 rank of 64, the largest relative loss
#             difference over the steps; (3) the noise-band preset's time to a verdict
#             with its runs spread over 2 GPUs (gpus 2) against 1 (gpus 1), wall clock.
#             Builds ampbench-cli, test_data_parallel and test_engine.

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
python3 bench/device/multigpu_resnet.py "$OUT/multigpu-resnet.json" || true
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
python3 bench/device/multigpu_equivalence.py "$db" || true
# (3) The noise-band preset's time to a verdict: runs spread over 2 GPUs vs 1.
echo "== noise-band preset: time to verdict over 2 GPUs vs 1"
for n in 1 2; do
    $CLI run --preset noise-band --device cuda --dry-run --save-spec "$OUT/noise-$n.json" \
        > /dev/null 2>&1 || true
    python3 bench/device/multigpu_noise_spec.py "$OUT/noise-$n.json" "$n"
    t1=$(date +%s.%N)
    $CLI --db "$db" run --config "$OUT/noise-$n.json" -q > "$OUT/noise-$n.log" 2>&1 \
        || echo "noise-band gpus $n: exit $?"
    echo "gpus $n: $(python3 -c "print('%.1f' % ($(date +%s.%N) - $t1))") s to the verdict"
done
