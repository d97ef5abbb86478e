#!/usr/bin/env python3
"""The verdict's overflow_origin findings in one analysis of bench/device.sh numerics
(`show -e ID --json`): every verdict reason that starts with "overflow first", with
its arm.

  python3 bench/device/numerics_overflow_origin.py FILE.json
"""
import json, sys
for v in json.load(open(sys.argv[1]))["verdicts"]:
    for text in v["reasons"]:
        if text.startswith("overflow first"):
            print("verdict, %s: %s" % (v["arm"], text))
