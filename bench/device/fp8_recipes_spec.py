#!/usr/bin/env python3
"""The cell of bench/device.sh fp8's recipes part: the GPT-2-sized decoder of
OUT/fp8-gpt2.json with three arms, bf16, fp8 with delayed scaling and fp8 with current
scaling, in OUT/fp8-recipes.json.

  python3 bench/device/fp8_recipes_spec.py OUT
"""
import json, sys
out = sys.argv[1]
spec = json.load(open(f"{out}/fp8-gpt2.json"))
spec["arms"] = [{"name": "bf16", "precision": "amp-bf16"},
                {"name": "fp8-delayed", "precision": "fp8", "fp8_recipe": "delayed"},
                {"name": "fp8-current", "precision": "fp8", "fp8_recipe": "current"}]
json.dump(spec, open(f"{out}/fp8-recipes.json", "w"), indent=1)
