#!/usr/bin/env python3
"""A cell of bench/device.sh prove's fp8choice part: the decoder cell of CELL with one
fp8 arm whose FP8 layers are CHOICE (fp8_modules: auto, all, or the modules named,
e.g. head;fc1), written to OUT.

  python3 bench/device/prove_fp8_choice.py CELL CHOICE OUT
"""
import json, sys
spec = json.load(open(sys.argv[1]))
spec["arms"] = [{"name": "fp8", "precision": "fp8", "fp8_modules": sys.argv[2]}]
json.dump(spec, open(sys.argv[3], "w"))
