"""Records when it began and ended (time.time() as event values) around 12 steps of
0.1 s each, every step's loss the run's own id: for runs packed side by side, whose
spans must overlap and whose rows must each be their own run's."""
import os
import time

import ampbench

rec = ampbench.Recorder()
run = int(os.environ["AMPBENCH_RUN_ID"])
rec.event("began", value=time.time())
for i in range(12):
    time.sleep(0.1)
    rec.step(float(run), samples=8)
    rec.flush()
rec.event("ended", value=time.time())
rec.close()
