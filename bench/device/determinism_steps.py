#!/usr/bin/env python3
"""Each arm's median step time from bench/device.sh determinism's analyses (the
`show -e ID --json` files), one line per experiment and arm; a file that is not JSON
(an experiment that did not run) is passed over.

  python3 bench/device/determinism_steps.py FILE.json...
"""
import json, sys
for path in sys.argv[1:]:
    try:
        j = json.load(open(path))
    except ValueError:
        continue
    for a in j["summary"]["arms"]:
        ms = a.get("median_step_ms")
        print("%-28s %-5s runs %d  median step %s ms" % (j["experiment"]["name"], a["arm"],
              a["runs"], "%.3f" % ms if ms is not None else "-"))
