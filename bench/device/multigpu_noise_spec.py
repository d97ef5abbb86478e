#!/usr/bin/env python3
"""The noise-band preset's saved spec for bench/device.sh multigpu, rewritten with its
runs spread over N GPUs (gpus N) and named noise-band-gpusN.

  python3 bench/device/multigpu_noise_spec.py SPEC N
"""
import json, sys
p, n = sys.argv[1], int(sys.argv[2])
s = json.load(open(p)); s["gpus"] = n; s["name"] = "noise-band-gpus%d" % n
json.dump(s, open(p, "w"))
