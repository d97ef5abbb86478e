# bench/device/advise.sh: bash bench/device.sh advise (sourced by it, after the build).
#
#   advise    ampbench-cli advise on the GPU for the GPT-2-sized decoder and the recipe
#             CNN: the candidates, their passes, the quality check and the
#             recommendation, printed and kept in $OUT/advise.db. Builds only ampbench-cli.
#
# Environment:
#   ADVISE=gpt2,cnn        the models advised on (either or both).
#   ADVISE_BUDGET=10m      each advice's budget.

if [[ ,${ADVISE:-gpt2,cnn}, == *,gpt2,* ]]; then
    echo "== advise: GPT-2-sized decoder"
    timeout 1200 $CLI --db "$OUT/advise.db" advise --preset gpt2-small-synthetic --device cuda \
        --budget "${ADVISE_BUDGET:-10m}" | tee "$OUT/advise-gpt2.txt" || echo "(exit $?)"
fi
if [[ ,${ADVISE:-gpt2,cnn}, == *,cnn,* ]]; then
    echo "== advise: the recipe CNN"
    timeout 1200 $CLI --db "$OUT/advise.db" advise --preset fashion-mnist-recipe --device cuda \
        --data "$AMPBENCH_FASHION_MNIST" --budget "${ADVISE_BUDGET:-10m}" \
        | tee "$OUT/advise-cnn.txt" || echo "(exit $?)"
fi
