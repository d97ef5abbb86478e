#!/usr/bin/env python3
"""Joins bench_workloads' and reference.py's CELL lines: per cell our step time ÷
PyTorch's and our peak memory ÷ PyTorch's, as a Markdown table. Our "-graph" cells
(the step replayed from a CUDA graph) are compared with PyTorch's cell of the same arm
without graphs (torch.compile's default mode makes none either).
  python3 bench/compare.py ours.txt reference.txt [reference-compiled.txt]

Given reference.py --compile's cells too (in a file of their own or the same one:
their "compiled" field tells them apart), the table has ours ÷ compiled PyTorch beside
ours ÷ eager PyTorch (time ratios: below 1, ours is faster), and the compiled cells
that failed, broke their graphs or compiled in their timed steps are listed under it."""
import argparse
import json


def cells(paths):
    """CELL lines of the files, by (workload, arm): the eager ones and the compiled ones."""
    eager, compiled = {}, {}
    for path in paths:
        for line in open(path):
            if line.startswith("CELL "):
                c = json.loads(line[5:])
                (compiled if c.get("compiled") else eager)[(c["workload"], c["arm"])] = c
    return eager, compiled


def fmt_bytes(b):
    return f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"


def launch_bound(workload):
    return workload == "cnn"


def peer(ref, key):
    """PyTorch's cell for one of ours: a "-graph" cell's peer is the same arm without."""
    return ref.get(key) or ref.get((key[0], key[1].replace("-graph", "")), {})


def main():
    ap = argparse.ArgumentParser(description="The table ours / PyTorch from CELL lines.")
    ap.add_argument("ours", help="bench_workloads' output")
    ap.add_argument("reference", nargs="+", help="reference.py's output, eager and/or --compile")
    a = ap.parse_args()
    ours, _ = cells([a.ours])
    ref, comp = cells(a.reference)
    head = ["workload", "arm", "ours ms", "PyTorch ms", "time ratio"]
    if comp:
        head = ["workload", "arm", "ours ms", "PyTorch ms", "PyTorch compiled ms",
                "time ratio (eager)", "time ratio (compiled)"]
    head += ["ours peak", "PyTorch peak", "memory ratio", "ours items/s", "speed-up vs our fp32",
             "overhead A/B", "recording host", "data wait"]
    print("| " + " | ".join(head) + " |")
    print("|---|---|" + "---:|" * (len(head) - 2))
    base = {}
    for (w, arm), o in ours.items():
        if arm == "fp32" and "median_ms" in o:
            base[w] = o["items_per_s"]
    for key, o in ours.items():
        r = peer(ref, key)
        if "error" in o or "median_ms" not in o:
            print(f"| {key[0]} | {key[1]} | failed: {o.get('error', '?')[:60]} " + "|" * (len(head) - 2))
            continue
        rt = o["median_ms"] / r["median_ms"] if "median_ms" in r else float("nan")
        rm = o["peak_alloc"] / r["peak_alloc"] if "peak_alloc" in r else float("nan")
        ov = o.get("recording_overhead", -1)
        # Host time in recording calls: the cost where the host is the critical path
        # (the CNN); on device-bound steps it is mostly waiting at the read-back.
        hs = o.get("recording_host_share")
        host = f"{100 * hs:.2f}%" if hs is not None and launch_bound(key[0]) else "–"
        times = f"{o['median_ms']:.2f} | {r.get('median_ms', float('nan')):.2f} | "
        if comp:
            c = peer(comp, key)
            if "median_ms" in c:
                times += f"{c['median_ms']:.2f} | {rt:.3f} | {o['median_ms'] / c['median_ms']:.3f} | "
            else:
                times += f"{'failed' if 'error' in c else '–'} | {rt:.3f} | – | "
        else:
            times += f"{rt:.3f} | "
        print(f"| {key[0]} | {key[1]} | {times}{fmt_bytes(o['peak_alloc'])} | "
              f"{fmt_bytes(r.get('peak_alloc', 0))} | {rm:.3f} | "
              f"{o['items_per_s']:.0f} | {o['items_per_s'] / base.get(key[0], float('nan')):.2f}× | "
              f"{'%.2f%%' % (100 * ov) if ov >= -0.5 else '–'} | {host} | {100 * o.get('data_wait_share', 0):.1f}% |")
    # What qualifies a compiled number: a failure's reason, graph breaks (parts of the
    # model left eager), a compile inside the timed steps (the median may hold it).
    # Cells that share a note are listed on one line (a missing triton fails them all).
    notes = {}
    for (w, arm), c in comp.items():
        says = []
        if "error" in c:
            says.append(c["error"])
        if c.get("graph_breaks"):
            says.append(f"{c['graph_breaks']} graph breaks")
        if c.get("recompiles_timed"):
            says.append(f"{c['recompiles_timed']} graphs compiled in the timed steps")
        if says:
            notes.setdefault("; ".join(says), []).append(f"{w}/{arm}")
    if notes:
        print("\ntorch.compile reference:")
        for says, where in notes.items():
            print(f"- {', '.join(where)}: {says}")


if __name__ == "__main__":
    main()
