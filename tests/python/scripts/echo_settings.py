"""Records one step and writes the AMPBENCH_* variables and its arguments to a JSON file."""
import json
import os
import sys

import ampbench

rec = ampbench.Recorder()
rec.step(0.1, samples=rec.settings.effective_batch)
out = {k: v for k, v in os.environ.items() if k.startswith("AMPBENCH_")}
out["argv"] = sys.argv[1:]
out["ampbench_file"] = ampbench.__file__
out["documented"] = sorted(ampbench.VARIABLES)
with open(os.path.join(os.environ["SETTINGS_DIR"], "run%s.json" % rec.settings.run_id), "w") as f:
    json.dump(out, f)
rec.close()
