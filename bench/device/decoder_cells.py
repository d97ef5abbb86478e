#!/usr/bin/env python3
"""The decoder cells of bench/device.sh (fp8 and prove modes), from the
gpt2-small-synthetic preset's spec in DIR/gpt2.json: DIR/cell-gpt2.json (d 768 x 12,
B16, T1024) and DIR/cell-wide.json (d 2048 x 4, 16 heads, B8), each with a bf16 and an
fp8 arm (FP8_RECIPE, default delayed) and no evaluation.

  python3 bench/device/decoder_cells.py DIR [RECIPE]
"""
import json
import sys

out = sys.argv[1]
recipe = sys.argv[2] if len(sys.argv) > 2 else "delayed"
base = json.load(open(f"{out}/gpt2.json"))
base["arms"] = [{"name": "bf16", "precision": "amp-bf16"},
                {"name": "fp8", "precision": "fp8", "fp8_recipe": recipe}]
base["eval_interval"] = 0
json.dump(base, open(f"{out}/cell-gpt2.json", "w"), indent=1)
wide = dict(base, model=dict(base["model"], width=2048, depth=4, heads=16), micro_batch=8)
json.dump(wide, open(f"{out}/cell-wide.json", "w"), indent=1)
