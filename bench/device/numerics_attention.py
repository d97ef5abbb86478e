#!/usr/bin/env python3
"""Each run of bench/device.sh numerics' attention experiments (numerics-attention*)
in DB, one line: its status, steps, skipped steps, mean loss over its last ten
steps, median timed step and peak memory; then up to two of its "overflow first"
events (the locator's).

  python3 bench/device/numerics_attention.py DB
"""
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
for run_id, arm, status in db.execute("SELECT r.id, e.name || '/' || r.arm, r.status FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name LIKE 'numerics-attention%' ORDER BY r.id"):
    rows = db.execute("SELECT step, loss, skipped, step_ms, timed, mem_peak FROM steps WHERE run_id = ? ORDER BY step", (run_id,)).fetchall()
    timed = [r[3] for r in rows if r[4]]
    last = [r[1] for r in rows[-10:] if r[1] is not None]
    print("attention, %s: %s, %d steps, %d skipped, loss at the end %s, median step %s ms, peak %.2f GiB" % (
        arm, status, len(rows), sum(1 for r in rows if r[2]),
        "%.3f" % statistics.mean(last) if last else "-",
        "%.1f" % statistics.median(timed) if timed else "-",
        max((r[5] or 0) for r in rows) / 2**30 if rows else 0))
    for (text,) in db.execute("SELECT message FROM events WHERE run_id = ? AND message LIKE 'overflow first%' LIMIT 2", (run_id,)):
        print("   event: " + text)
