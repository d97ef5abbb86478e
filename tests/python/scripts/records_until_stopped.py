"""Writes its pid to <folder>/<run id>.pid, then records a step every 50 ms until it
is stopped: for cancelling launched runs, several of them at once."""
import os
import sys
import time

import ampbench

rec = ampbench.Recorder()
with open(os.path.join(sys.argv[1], os.environ["AMPBENCH_RUN_ID"] + ".pid"), "w") as f:
    f.write(str(os.getpid()))
while True:
    rec.step(0.3, samples=8)
    rec.flush()
    time.sleep(0.05)
