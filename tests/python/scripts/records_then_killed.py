"""Records 4 steps, then is killed by SIGKILL (as the OOM killer would)."""
import os
import signal

import ampbench

rec = ampbench.Recorder()
for i in range(4):
    rec.step(0.4, samples=8)
rec.flush()
os.kill(os.getpid(), signal.SIGKILL)
