#!/usr/bin/env python3
"""Per-layer numerics in a saved spec, for bench/device.sh numerics: SPEC is rewritten
with numerics_every EVERY (optimizer steps between records; 0: none) and MODEL, a
JSON object, merged into its model (e.g. {"attention": "unscaled", "init_std": 1.5};
empty: nothing).

  python3 bench/device/numerics_spec.py SPEC EVERY MODEL
"""
import json, sys
spec = json.load(open(sys.argv[1]))
spec["numerics_every"] = int(sys.argv[2])
spec["model"].update(json.loads(sys.argv[3] or "{}"))  # MODEL='{"attention": ...}'
json.dump(spec, open(sys.argv[1], "w"), indent=2)
