# bench/device/capacity.sh: bash bench/device.sh capacity (sourced by it, after the build).
#
#   capacity  the GPU, checkpointing, data and batch-finder tests, then the largest
#             batch per arm (ampbench-cli find-batch) and the step-time cost of
#             gradient checkpointing at the presets' batch.
#
# Environment:
#   CAPACITY=resnet50,gpt2        the models searched (either or both).

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
