#!/usr/bin/env python3
"""Counts the verdict's answers over repetitions of one experiment: its calibration.

  python3 bench/calibration.py REP.json [REP.json ...]

Each REP.json is `ampbench-cli show -e ID --json` of one repetition (the
recipe-controls preset on its own seeds). Prints, per arm, how often each verdict
came out, the verdict codes, the final-metric gap to the baseline (mean and spread
over repetitions) and the tolerance it was judged with; then the three figures the
method asks for:

  A/A false alarms   arms marked aa_copy (the baseline's settings on other seeds):
                     repetitions called anything but aligned or inconclusive.
  control detection  negative controls (pure fp16, fp16 without loss scaling,
                     accumulation without LR rescaling): repetitions called diverged
                     or inconclusive, and whether the control lost quality at all
                     (its gap over every repetition's seeds beyond the tolerance).
  accumulation       accumulation arms under the linear rule: repetitions called
                     aligned.
And the A/A arm's speed-up per repetition (the timing noise, under whatever load the
repetitions shared).
"""
import collections
import json
import math
import statistics
import sys


def kind(verdict):
    facts = verdict.get("facts", {})
    if facts.get("aa_copy"):
        return "a/a"
    if facts.get("precision") == "pure-fp16":
        return "control: pure fp16"
    if facts.get("precision") == "amp-fp16" and facts.get("loss_scaling") is False:
        return "control: no loss scaling"
    if facts.get("accumulation", 1) > 1 and facts.get("lr_rule") == "none":
        return "control: accumulation, lr not rescaled"
    if facts.get("accumulation", 1) > 1 and facts.get("lr_rule") == "linear":
        return "accumulation, linear lr"
    return "arm"


def tolerance(verdict):
    for f in verdict.get("findings", {}).get("reasons", []):
        if f.get("code") == "tolerance":
            return f.get("values", {}).get("tolerance")
    return None


def fmt(v, digits=2):
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    arms = collections.OrderedDict()
    reps = 0
    for path in paths:
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: not read ({e}); left out", file=sys.stderr)
            continue
        reps += 1
        for v in report.get("verdicts", []):
            if v.get("verdict") == "baseline":
                continue
            a = arms.setdefault(v["arm"], {"kind": kind(v), "verdicts": [], "codes": [],
                                           "delta": [], "tolerance": [], "speedup": [],
                                           "reps": []})
            a["verdicts"].append(v["verdict"])
            a["codes"].append(v.get("code", "?"))
            a["reps"].append(path)
            gap = v.get("final_gap", {})
            if gap.get("delta") is not None:
                a["delta"].append(gap["delta"] * 100.0)
            tol = tolerance(v)
            if tol is not None:
                a["tolerance"].append(tol * 100.0)
            if v.get("gains", {}).get("speedup") is not None:
                a["speedup"].append(v["gains"]["speedup"])

    print(f"{reps} repetitions")
    print()
    print("| arm | kind | n | aligned | within noise | inconclusive | diverged |"
          " Δ accuracy, points (mean ± sd over reps) | tolerance, points (median) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, a in arms.items():
        c = collections.Counter(a["verdicts"])
        d = a["delta"]
        sd = statistics.stdev(d) if len(d) > 1 else float("nan")
        print(f"| {name} | {a['kind']} | {len(a['verdicts'])} | {c['aligned']} |"
              f" {c['within noise']} | {c['inconclusive']} | {c['diverged']} |"
              f" {fmt(statistics.mean(d) if d else None)} ± {fmt(sd)} |"
              f" {fmt(statistics.median(a['tolerance']) if a['tolerance'] else None)} |")
    print()
    print("codes per arm:")
    for name, a in arms.items():
        counts = ", ".join(f"{code} {n}" for code, n in collections.Counter(a["codes"]).most_common())
        print(f"  {name}: {counts}")
    print()
    for name, a in arms.items():
        n = len(a["verdicts"])
        c = collections.Counter(a["verdicts"])
        if a["kind"] == "a/a":
            alarms = n - c["aligned"] - c["inconclusive"]
            print(f"A/A false alarms ({name}): {alarms} of {n}"
                  f" (called within noise {c['within noise']}, diverged {c['diverged']})")
            if a["speedup"]:
                print(f"  A/A speed-up per repetition: "
                      + ", ".join(f"{s:.3f}" for s in a["speedup"])
                      + f" (median {statistics.median(a['speedup']):.3f})")
        elif a["kind"].startswith("control"):
            caught = c["diverged"] + c["inconclusive"]
            d = a["delta"]
            tol = statistics.median(a["tolerance"]) if a["tolerance"] else float("nan")
            mean = statistics.mean(d) if d else float("nan")
            lost = "loses quality" if mean < -tol else "keeps quality"
            print(f"control detection ({name}, {a['kind'][9:]}): diverged or inconclusive in"
                  f" {caught} of {n} (diverged {c['diverged']}); mean Δ {fmt(mean)} points"
                  f" against a median tolerance of {fmt(tol)}: it {lost}")
        elif a["kind"] == "accumulation, linear lr":
            print(f"accumulation with the linear rule ({name}): aligned in {c['aligned']} of {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
