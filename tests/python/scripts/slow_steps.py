"""Records a step every 50 ms, printing its pid first, until it is stopped: for Ctrl-C
of the CLI."""
import os
import sys
import time

import ampbench

rec = ampbench.Recorder()
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
while True:
    rec.step(0.2, samples=8)
    rec.flush()
    time.sleep(0.05)
