#!/usr/bin/env python3
"""What the per-layer numerics records cost, from bench/device.sh numerics' cost
experiments (numerics-cost-*) in DB. Per run, after step 10: the median step and
peak memory; the median of the steps that flush the step rows (every 20th) and, with
records every N > 1 steps, the recording steps (multiples of N), their extra time
over that median as a share of all the steps' time, and all the steps' time against
the same model's run without records; with records every step, its median step
against the run without.

  python3 bench/device/numerics_cost.py DB
"""
import json, sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
total_off = {}
for exp_id, name, spec in db.execute("SELECT id, name, spec_json FROM experiments WHERE name LIKE 'numerics-cost-%' ORDER BY id"):
    every = json.loads(spec).get("numerics_every", 0)
    base = name.rsplit("-", 1)[0]
    for (run_id,) in db.execute("SELECT id FROM runs WHERE experiment_id = ?", (exp_id,)):
        rows = db.execute("SELECT step, step_ms, timed, mem_peak FROM steps WHERE run_id = ? AND step > 10", (run_id,)).fetchall()
        med = statistics.median([r[1] for r in rows if r[2]] or [r[1] for r in rows])
        flushing = [r[1] for r in rows if r[0] % 20 == 0 and not (every and r[0] % every == 0)]
        rec = [r[1] for r in rows if every and r[0] % every == 0]
        total = sum(r[1] for r in rows)
        peak = max(r[3] for r in rows) / 2**30
        if not every:
            total_off[base] = (total, len(rows), med)
        line = "record cost, %s: median step %.1f ms, peak %.2f GiB" % (name, med, peak)
        if flushing:
            line += ", flushing steps %.1f ms (median of %d)" % (statistics.median(flushing), len(flushing))
        if rec and flushing and every > 1:
            ref = statistics.median(flushing)
            extra = sum(x - ref for x in rec)
            line += "; recording steps %s ms: extra %.1f ms = %.2f%% of %.0f ms of steps" % (
                "/".join("%.1f" % x for x in rec[:4]), extra, 100 * extra / total, total)
            if base in total_off and total_off[base][1] == len(rows):
                line += "; all steps %.0f ms vs %.0f ms without (%+.2f%%)" % (
                    total, total_off[base][0], 100 * (total / total_off[base][0] - 1))
        elif every == 1:
            line += "; every step records: median %.1f ms" % med
            if base in total_off:
                line += " (%+.1f%% on the run without)" % (100 * (med / total_off[base][2] - 1))
        print(line)
