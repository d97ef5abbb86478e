#!/usr/bin/env python3
"""Each run of a database, one line: its arm, status, median step time over the timed
steps, peak memory, steps and the last loss. For bench/device.sh's cells.

  python3 bench/device/arm_steps.py DB LABEL
  python3 bench/device/arm_steps.py DB LABEL --events PREFIX   (the runs' events that start so)
"""
import sqlite3
import statistics
import sys

db = sqlite3.connect(sys.argv[1])
label = sys.argv[2] if len(sys.argv) > 2 else ""
if len(sys.argv) > 4 and sys.argv[3] == "--events":
    for (message,) in db.execute("SELECT message FROM events WHERE message LIKE ? ORDER BY id",
                                 (sys.argv[4] + "%",)):
        print("  " + message)
    sys.exit(0)
for run_id, arm, status in db.execute("SELECT id, arm, status FROM runs ORDER BY id"):
    rows = db.execute("SELECT step_ms, timed, mem_peak, loss FROM steps WHERE run_id = ? ORDER BY step",
                      (run_id,)).fetchall()
    timed = [r[0] for r in rows if r[1]] or [r[0] for r in rows[len(rows) // 4:]]
    peak = max((r[2] or 0) for r in rows) / 2**30 if rows else 0.0
    last = rows[-1][3] if rows else None
    print("%s %s: %s, %d steps, median step %s ms, peak %.2f GiB, last loss %s" % (
        label, arm, status, len(rows), "%.2f" % statistics.median(timed) if timed else "-", peak,
        "%.4f" % last if last is not None else "-"))
