# bench/device/fidelity.sh: bash bench/device.sh fidelity (sourced by it, after the build).
#
#   fidelity  a model file trained by the workbench and by PyTorch (bench/fidelity.py):
#             the same scripted CNN, initial weights and batches (.npz of
#             Fashion-MNIST), fp32, deterministic; the largest relative difference
#             of the per-step loss over the first 100 steps.

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
