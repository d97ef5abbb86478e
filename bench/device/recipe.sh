# bench/device/recipe.sh: bash bench/device.sh recipe (sourced by it, after the build).
#
#   recipe    the fashion-mnist-recipe preset (10 epochs, OneCycle, three seeds; its
#             database is written to $OUT for `ampbench-cli report` on a machine with
#             the GUI build), then the same recipe in PyTorch (bench/recipe.py).

echo "== the workbench: preset fashion-mnist-recipe"
rm -f "$OUT/recipe.db"
$CLI --db "$OUT/recipe.db" run --preset fashion-mnist-recipe --device cuda -q \
    | tee "$OUT/recipe-ours.txt"
echo "== PyTorch reference (bench/recipe.py)"
python3 bench/recipe.py --data "$AMPBENCH_FASHION_MNIST" | tee "$OUT/recipe-reference.txt"
