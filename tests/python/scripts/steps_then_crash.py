"""Records 6 steps, then raises: the run must end failed with the exception and keep the 6 steps."""
import ampbench

rec = ampbench.Recorder()
for i in range(6):
    rec.step(1.0 / (i + 1), samples=8)
rec.flush()
raise ValueError("the data loader ran dry at batch 7")
