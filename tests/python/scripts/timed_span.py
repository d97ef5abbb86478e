"""Records when it began and ended (time.time() as event values) around 12 steps of
0.1 s each, every step's loss the run's own id: for runs packed side by side, whose
spans must overlap and whose rows must each be their own run's.

With a folder and a count as arguments, it writes <folder>/<run id> once it has begun
and ends only when <count> runs have begun there (for two minutes at most: runs
that are never side by side then end apart, and the test sees it)."""
import os
import sys
import time

import ampbench

rec = ampbench.Recorder()
run = int(os.environ["AMPBENCH_RUN_ID"])
rec.event("began", value=time.time())
together = sys.argv[1:3]
if together:
    open(os.path.join(together[0], str(run)), "w").close()
for i in range(12):
    time.sleep(0.1)
    rec.step(float(run), samples=8)
    rec.flush()
if together:
    give_up = time.monotonic() + 120
    while len(os.listdir(together[0])) < int(together[1]) and time.monotonic() < give_up:
        time.sleep(0.05)
rec.event("ended", value=time.time())
rec.close()
