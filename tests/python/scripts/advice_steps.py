"""An advice's pass or check: records the planned steps at the batch it was given (or, with
--batch N, at N whatever it was given: a script that does not take the candidate's
settings), each step a little arithmetic in proportion to its batch, and an evaluation at
the end. No PyTorch needed."""
import sys

import ampbench

rec = ampbench.Recorder()
s = rec.settings
batch = int(sys.argv[sys.argv.index("--batch") + 1]) if "--batch" in sys.argv else s.micro_batch
loss = 2.0
for step in range(s.planned_steps or 10):
    sum(i * i for i in range(200 * max(1, batch)))
    loss = 2.0 / (1.0 + 0.05 * step)
    rec.step(loss, samples=batch * rec.accumulation)
rec.eval(metric=0.8, loss=loss)
rec.close()
