#!/usr/bin/env python3
"""The 2-rank against 1-rank equivalence of bench/device.sh multigpu: the per-step
losses of the runs of experiments eq-one and eq-two in DB, their step counts and the
largest relative loss difference.

  python3 bench/device/multigpu_equivalence.py DB
"""
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
ids = [r[0] for r in c.execute("select r.id from runs r join experiments e on e.id = r.experiment_id "
                               "where e.name in ('eq-one', 'eq-two') order by r.id")]
one, two = ([r[0] for r in c.execute("select loss from steps where run_id = ? order by step", (i,))] for i in ids)
diff = max(abs(a - b) / max(abs(a), 1e-12) for a, b in zip(one, two))
print("steps %d and %d; largest relative loss difference %.3g" % (len(one), len(two), diff))
