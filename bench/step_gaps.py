#!/usr/bin/env python3
"""Where a packed run's wall time goes, from its database: for each run, the wall time
of its training loop, the device-side time of its steps (the step timer's chained
events: a step's time includes any wait of its stream), the host's wait for batches,
and the host time spent across its evaluations (from the last step before each
evaluation to the first step after it).

    python3 bench/step_gaps.py DATABASE [EXPERIMENT_ID]
"""
import sqlite3
import sys


def main():
    db = sqlite3.connect(sys.argv[1])
    exp = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    runs = db.execute("SELECT id, arm, seed FROM runs WHERE experiment_id = ? ORDER BY id",
                      (exp,)).fetchall()
    print(f"{'run':>4} {'arm':<14} {'seed':>4} {'steps':>6} {'wall s':>7} {'step s':>7} "
          f"{'data wait s':>11} {'evals':>5} {'across evals s':>14}")
    totals = [0.0, 0.0, 0.0, 0.0]
    for run_id, arm, seed in runs:
        steps = db.execute("SELECT step, wall_s, step_ms, data_wait_ms FROM steps "
                           "WHERE run_id = ? ORDER BY step", (run_id,)).fetchall()
        if not steps:
            continue
        wall = {s: w for s, w, _, _ in steps}
        evals = [e for (e,) in db.execute("SELECT step FROM evals WHERE run_id = ?", (run_id,))]
        across = sum(wall[e + 1] - wall[e] for e in evals if e in wall and e + 1 in wall)
        span = steps[-1][1] - steps[0][1]
        step_s = sum(ms or 0 for _, _, ms, _ in steps) / 1000
        wait_s = sum(ms or 0 for _, _, _, ms in steps) / 1000
        for i, v in enumerate((span, step_s, wait_s, across)):
            totals[i] += v
        print(f"{run_id:>4} {arm:<14} {seed:>4} {len(steps):>6} {span:>7.2f} {step_s:>7.2f} "
              f"{wait_s:>11.2f} {len(evals):>5} {across:>14.2f}")
    print(f"{'all':>4} {'':<14} {'':>4} {'':>6} {totals[0]:>7.2f} {totals[1]:>7.2f} "
          f"{totals[2]:>11.2f} {'':>5} {totals[3]:>14.2f}")


if __name__ == "__main__":
    main()
