#!/usr/bin/env python3
"""The A/A timing check as a benchmark: how far from 1.00x an arm identical to the
baseline measures, with runs interleaved over the arms and run arm after arm.

  python3 bench/aa_timing.py --cli build/cpu/app/ampbench-cli [--device cpu]
                             [--repeats 3] [--steps 600] [--seeds 1 2 3]

Each repeat trains the aa-check preset (fp32, fp32 again on other seeds, AMP, AMP
with accumulation 4) twice into a scratch database: once interleaved (the default:
round-robin over the arms, seed by seed) and once arm after arm (spec
"interleave": false). Prints, per experiment, the A/A arm's speed-up with its 95%
interval (across runs) and AMP's, then the median distance of the A/A speed-up from
1. Figures come from `ampbench-cli show -e ID --json`: the speed-up the GUI, the CLI
and the report show. A benchmark that prints figures, not a test.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def cli(binary, db, *args):
    out = subprocess.run([binary, "--db", db, *args], check=True, capture_output=True, text=True)
    return out.stdout


def arm_gains(report, name):
    for v in report["verdicts"]:
        if v["arm"] == name:
            return v["gains"]
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", required=True)
    p.add_argument("--device", default="cpu")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    o = p.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "aa.db")
        spec_path = os.path.join(tmp, "spec.json")
        experiment = 0
        for rep in range(1, o.repeats + 1):
            for interleave in (True, False):
                cli(o.cli, db, "run", "--preset", "aa-check", "--steps", str(o.steps),
                    "--seeds", *map(str, o.seeds), "--device", o.device, "--dry-run",
                    "--save-spec", spec_path)
                with open(spec_path) as f:
                    spec = json.load(f)
                spec["interleave"] = interleave
                with open(spec_path, "w") as f:
                    json.dump(spec, f)
                cli(o.cli, db, "run", "--config", spec_path, "-q")
                experiment += 1
                report = json.loads(cli(o.cli, db, "show", "-e", str(experiment), "--json"))
                aa = arm_gains(report, "fp32-again")
                amp = arm_gains(report, "amp")
                rows.append((rep, interleave, aa, amp))
                print(f"repeat {rep}, {'interleaved' if interleave else 'arm after arm'}:"
                      f" A/A {aa['speedup']:.3f}x (95% CI {aa['speedup_ci95'][0]:.3f}-"
                      f"{aa['speedup_ci95'][1]:.3f}); amp {amp['speedup']:.3f}x"
                      f" (95% CI {amp['speedup_ci95'][0]:.3f}-{amp['speedup_ci95'][1]:.3f})",
                      flush=True)

    print()
    print("| order | repeats | A/A speed-up per repeat | median \\|A/A - 1\\| |"
          " intervals holding 1.00x | AMP speed-up per repeat |")
    print("|---|---:|---|---:|---:|---|")
    for interleave in (True, False):
        sel = [r for r in rows if r[1] == interleave]
        aa = [r[2]["speedup"] for r in sel]
        holds = sum(1 for r in sel if r[2]["speedup_ci95"][0] <= 1.0 <= r[2]["speedup_ci95"][1])
        print(f"| {'interleaved' if interleave else 'arm after arm'} | {len(sel)} |"
              f" {', '.join(f'{x:.3f}' for x in aa)} |"
              f" {statistics.median(abs(x - 1) for x in aa):.3f} | {holds} of {len(sel)} |"
              f" {', '.join('%.3f' % r[3]['speedup'] for r in sel)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
