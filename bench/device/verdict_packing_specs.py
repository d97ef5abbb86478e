#!/usr/bin/env python3
"""The cells of bench/device.sh verdict's packing part, from
OUT/recipe-packed-graphs.json: OUT/fp32-alone.json (the first arm on seed 1, alone),
OUT/fp32-x9.json (that arm on seeds 1-9, nine packed), OUT/graphs-3.json (the recipe's
graph runs three at a time) and OUT/graphs-9-noeval.json (nine at a time, without
their evaluations).

  python3 bench/device/verdict_packing_specs.py OUT
"""
import json, sys
out = sys.argv[1]
spec = json.load(open(f"{out}/recipe-packed-graphs.json"))
one = dict(spec, seeds=[1], arms=[spec["arms"][0]], runs_per_gpu=1)
json.dump(one, open(f"{out}/fp32-alone.json", "w"))
json.dump(dict(one, seeds=list(range(1, 10)), runs_per_gpu=9), open(f"{out}/fp32-x9.json", "w"))
json.dump(dict(spec, runs_per_gpu=3), open(f"{out}/graphs-3.json", "w"))
json.dump(dict(spec, eval_interval=0), open(f"{out}/graphs-9-noeval.json", "w"))
