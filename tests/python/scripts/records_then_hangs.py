"""Records 3 steps, then stops sending (it sleeps until it is stopped): the
workbench stops it after --script-silence."""
import time

import ampbench

rec = ampbench.Recorder()
for i in range(3):
    rec.step(0.3, samples=8)
rec.flush()
while True:
    time.sleep(0.1)
