"""Records 20 steps and flushes them, writes "PID START" (START: field 22 of
/proc/PID/stat) to the file named by its argument once they have left it, then pauses as an evaluation, a checkpoint or a slow data loader
would: it records nothing more until it is stopped."""
import os
import sys
import time

import ampbench

rec = ampbench.Recorder()
for i in range(20):
    rec.step(0.5, samples=8)
rec.flush()
with open("/proc/self/stat") as f:
    stat = f.read()
with open(sys.argv[1] + ".part", "w") as f:
    f.write("%d %s" % (os.getpid(), stat[stat.rindex(")") + 2:].split()[19]))
os.rename(sys.argv[1] + ".part", sys.argv[1])
while True:
    time.sleep(0.1)
