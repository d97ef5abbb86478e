#!/usr/bin/env python3
"""OUT/fp32-x9.json for bench/device.sh verdict's host part when the packing part has
not written it: the first arm of OUT/recipe-packed-graphs.json on seeds 1-9, nine
runs packed on the GPU.

  python3 bench/device/verdict_fp32_x9.py OUT
"""
import json, sys
out = sys.argv[1]
spec = json.load(open(f"{out}/recipe-packed-graphs.json"))
json.dump(dict(spec, seeds=list(range(1, 10)), arms=[spec["arms"][0]], runs_per_gpu=9),
          open(f"{out}/fp32-x9.json", "w"))
