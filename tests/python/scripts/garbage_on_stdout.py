"""Prints garbage, and lines that look like records, on stdout while it trains: stdout is the
script's own, so the run keeps exactly what the recorder recorded."""
import sys

import ampbench

rec = ampbench.Recorder()
for i in range(8):
    print('{"type":"step","run":%d,"seq":%d,"step":99,"loss":0}' % (rec.settings.run_id, i + 1))
    sys.stdout.buffer.write(b"\xff\xfe garbage \x00 not utf-8\n")
    sys.stdout.flush()
    rec.step(0.5, samples=8)
rec.eval(metric=0.5, loss=0.7)
rec.close()
