"""Records a step every 50 ms for a minute, printing its pid first: for Ctrl-C of the CLI."""
import os
import sys
import time

import ampbench

rec = ampbench.Recorder()
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
for i in range(1200):
    rec.step(0.2, samples=8)
    rec.flush()
    time.sleep(0.05)
rec.close()
