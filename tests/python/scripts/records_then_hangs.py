"""Records 3 steps, then stops sending (it sleeps): the workbench stops it after --script-silence."""
import time

import ampbench

rec = ampbench.Recorder()
for i in range(3):
    rec.step(0.3, samples=8)
rec.flush()
time.sleep(600)
