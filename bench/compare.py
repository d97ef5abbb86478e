#!/usr/bin/env python3
"""Joins bench_workloads' and reference.py's CELL lines: per cell our step time ÷
PyTorch's and our peak memory ÷ PyTorch's, as a Markdown table. Our "-graph" cells
(the step replayed from a CUDA graph) are compared with PyTorch's eager cell.
  python3 bench/compare.py ours.txt reference.txt"""
import json
import sys


def cells(path):
    out = {}
    for line in open(path):
        if line.startswith("CELL "):
            c = json.loads(line[5:])
            out[(c["workload"], c["arm"])] = c
    return out


def fmt_bytes(b):
    return f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"


def launch_bound(workload):
    return workload == "cnn"


def main():
    ours, ref = cells(sys.argv[1]), cells(sys.argv[2])
    print("| workload | arm | ours ms | PyTorch ms | time ratio | ours peak | PyTorch peak | memory ratio | ours items/s | speed-up vs our fp32 | overhead A/B | recording host | data wait |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    base = {}
    for (w, a), o in ours.items():
        if a == "fp32" and "median_ms" in o:
            base[w] = o["items_per_s"]
    for key, o in ours.items():
        r = ref.get(key) or ref.get((key[0], key[1].replace("-graph", "")), {})
        if "error" in o or "median_ms" not in o:
            print(f"| {key[0]} | {key[1]} | failed: {o.get('error', '?')[:60]} |||||||||")
            continue
        rt = o["median_ms"] / r["median_ms"] if "median_ms" in r else float("nan")
        rm = o["peak_alloc"] / r["peak_alloc"] if "peak_alloc" in r else float("nan")
        ov = o.get("recording_overhead", -1)
        # Host time in recording calls: the cost where the host is the critical path
        # (the CNN); on device-bound steps it is mostly waiting at the read-back.
        hs = o.get("recording_host_share")
        host = f"{100 * hs:.2f}%" if hs is not None and launch_bound(key[0]) else "–"
        print(f"| {key[0]} | {key[1]} | {o['median_ms']:.2f} | {r.get('median_ms', float('nan')):.2f} | "
              f"{rt:.3f} | {fmt_bytes(o['peak_alloc'])} | {fmt_bytes(r.get('peak_alloc', 0))} | {rm:.3f} | "
              f"{o['items_per_s']:.0f} | {o['items_per_s'] / base.get(key[0], float('nan')):.2f}× | "
              f"{'%.2f%%' % (100 * ov) if ov >= -0.5 else '–'} | {host} | {100 * o.get('data_wait_share', 0):.1f}% |")


if __name__ == "__main__":
    main()
