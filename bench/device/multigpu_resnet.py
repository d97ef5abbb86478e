#!/usr/bin/env python3
"""Each arm's median step time in bench/device.sh multigpu's ResNet-50 analysis
(`show -e 1 --json`): one GPU against data-parallel on two.

  python3 bench/device/multigpu_resnet.py FILE.json
"""
import json, sys
j = json.load(open(sys.argv[1]))
for a in j["summary"]["arms"]:
    print("%-4s median step %s ms" % (a["arm"], a.get("median_step_ms")))
