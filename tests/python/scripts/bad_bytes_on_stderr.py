"""Records 2 steps, writes bytes that are not UTF-8 to stderr, and exits 3: the run's
error keeps the text, each bad byte shown as U+FFFD."""
import sys

import ampbench

rec = ampbench.Recorder()
for i in range(2):
    rec.step(0.5, samples=8)
rec.flush()
sys.stderr.buffer.write(b"RuntimeError: bad bytes \xff\xfe\xc3 in the loader\n")
sys.stderr.flush()
sys.exit(3)
