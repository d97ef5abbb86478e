#!/usr/bin/env python3
"""The packed cells of bench/device.sh verdict, from the fashion-mnist-recipe preset's
spec in OUT/recipe.json: OUT/recipe-packed.json (its nine runs packed on the GPU,
runs_per_gpu 9) and OUT/recipe-packed-graphs.json (the same, every arm a CUDA graph).

  python3 bench/device/verdict_packed_specs.py OUT
"""
import json, sys
out = sys.argv[1]
spec = json.load(open(f"{out}/recipe.json"))
spec["runs_per_gpu"] = 9
json.dump(spec, open(f"{out}/recipe-packed.json", "w"), indent=1)
for arm in spec["arms"]:
    arm["cuda_graph"] = True
json.dump(spec, open(f"{out}/recipe-packed-graphs.json", "w"), indent=1)
