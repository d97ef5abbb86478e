"""Writes garbage into the record stream itself, between two good steps: the line is named,
the good rows are kept and the run ends failed (its record is incomplete)."""
import os

import ampbench

rec = ampbench.Recorder()
rec.step(0.9, samples=8)
rec.flush()
os.write(int(os.environ["AMPBENCH_STREAM_FD"]), b"this is not a record\n")
rec.step(0.8, samples=8)
rec.close()
