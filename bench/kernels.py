#!/usr/bin/env python3
"""Kernel-by-kernel comparison of two profiler traces (Chrome trace JSON from
Kineto): ours (bench_profile_step) and PyTorch's reference (this script's
`profile` command). Prints, per optimizer step, the GPU time of each kernel
name in both, the largest differences first, and how busy the GPU was.

  kernels.py profile WORKLOAD ARM TRACE.json [FIRST_STEP] [STEPS] [--compile]
                                     the reference, on the GPU (--compile: its model
                                     through torch.compile, compiled in the steps before)
  kernels.py compare OURS.json REF.json STEPS
  kernels.py gaps TRACE.json [N=6]   where the device idled: the N longest gaps
                                     between kernels and the host work during each
  kernels.py categories BASE.json OTHER.json STEPS   two arms of ours (bf16 and fp8, say)
                                     kernel time per step by kind (GEMM, FP8 casts,
                                     attention, norms, ...), and what OTHER's step would
                                     take with its casts free: the most its format can gain

`profile` reads Fashion-MNIST (the cnn workload) from $AMPBENCH_FASHION_MNIST, else
from /usr/share/datasets/fashion-mnist.
"""
import json
import os
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    by_name = defaultdict(lambda: [0.0, 0])
    for e in kernels:
        key = e["name"] if e["cat"] == "kernel" else "[" + e["cat"] + "] " + e["name"]
        by_name[key][0] += float(e["dur"])
        by_name[key][1] += 1
    span = (max(e["ts"] + e["dur"] for e in kernels) - min(e["ts"] for e in kernels)) if kernels else 0.0
    return by_name, sum(v[0] for v in by_name.values()), span


def short(name, width=110):
    return name if len(name) <= width else name[: width - 1] + "\u2026"


def compare(ours_path, ref_path, steps):
    ours, ours_busy, ours_span = load(ours_path)
    ref, ref_busy, ref_span = load(ref_path)
    print(f"per step: ours  {ours_busy / steps / 1000:8.2f} ms of kernels in {ours_span / steps / 1000:8.2f} ms "
          f"({100 * ours_busy / max(ours_span, 1):.1f}% busy)")
    print(f"          torch {ref_busy / steps / 1000:8.2f} ms of kernels in {ref_span / steps / 1000:8.2f} ms "
          f"({100 * ref_busy / max(ref_span, 1):.1f}% busy)")
    names = set(ours) | set(ref)
    rows = sorted(names, key=lambda n: -abs(ours.get(n, [0, 0])[0] - ref.get(n, [0, 0])[0]))
    print(f"{'ours ms':>9} {'n':>5} {'torch ms':>9} {'n':>5} {'diff ms':>8}  kernel (per step, largest difference first)")
    for n in rows[:30]:
        o, r = ours.get(n, [0.0, 0]), ref.get(n, [0.0, 0])
        print(f"{o[0] / steps / 1000:9.3f} {o[1] / steps:5.1f} {r[0] / steps / 1000:9.3f} {r[1] / steps:5.1f} "
              f"{(o[0] - r[0]) / steps / 1000:+8.3f}  {short(n)}")


def profile(workload, arm, trace, first, count, compiled=False):
    import torch
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import reference as r
    dev = torch.device("cuda")
    data = os.environ.get("AMPBENCH_FASHION_MNIST") or "/usr/share/datasets/fashion-mnist"
    w = r.workload(workload, True, data, dev)
    cells = {a[0]: a for a in r.ARMS}
    w["timed"] = max(w["timed"], first + count)
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                              torch.profiler.ProfilerActivity.CUDA])

    def on_step(s):
        if s == first:
            torch.cuda.synchronize()
            prof.__enter__()
        elif s == first + count:
            torch.cuda.synchronize()
            prof.__exit__(None, None, None)
            prof.export_chrome_trace(trace)

    res = r.run_cell(w, cells[arm], dev, warmup=0, on_step=on_step, compile=compiled)
    print(f"reference {workload}/{arm}{' (compiled)' if compiled else ''}: median {res['median_ms']:.2f} ms; steps {first}..{first + count - 1} "
          f"profiled into {trace}")


# Kinds of kernel, the first pattern that matches a kernel's name (lower case) wins.
KINDS = [
    ("fp8 cast", ("casttranspose", "amaxkernel", "sumpartials")),
    ("attention", ("flash", "fmha", "attention", "sdpa", "cudnn_generated_fort_native_sdpa")),
    ("gemm", ("gemm", "nvjet", "cutlass", "xmma", "cublas", "sm90_", "sm80_")),
    ("layer norm", ("layer_norm", "layernorm")),
    ("gelu", ("gelu",)),
    ("softmax / loss", ("softmax", "nll_loss", "cross_entropy")),
    ("optimizer", ("multi_tensor", "adam", "foreach", "fused_")),
    ("reduction", ("reduce_kernel", "reduce")),
    ("copy / memset", ("[gpu_memcpy]", "[gpu_memset]", "copy")),
    ("elementwise", ("elementwise", "vectorized", "unrolled")),
]


def kind_of(name):
    low = name.lower()
    for kind, patterns in KINDS:
        if any(p in low for p in patterns):
            return kind
    return "other"


def categories(base_path, other_path, steps):
    def by_kind(path):
        names, busy, span = load(path)
        out = defaultdict(float)
        for n, (us, _) in names.items():
            out[kind_of(n)] += us / steps / 1000
        return out, busy / steps / 1000, span / steps / 1000

    base, base_busy, base_span = by_kind(base_path)
    other, other_busy, other_span = by_kind(other_path)
    print(f"{'kind':<16} {'base ms':>9} {'other ms':>9} {'diff':>8}   (kernel time per step)")
    for kind in [k for k, _ in KINDS] + ["other"]:
        if base.get(kind, 0) or other.get(kind, 0):
            print(f"{kind:<16} {base.get(kind, 0):9.3f} {other.get(kind, 0):9.3f} "
                  f"{other.get(kind, 0) - base.get(kind, 0):+8.3f}")
    print(f"{'all kernels':<16} {base_busy:9.3f} {other_busy:9.3f} {other_busy - base_busy:+8.3f}")
    print(f"{'step span':<16} {base_span:9.3f} {other_span:9.3f}")
    for label, path in (("base", base_path), ("other", other_path)):
        names = load(path)[0]
        top = sorted(names.items(), key=lambda kv: -kv[1][0])[:12]
        print(f"{label}: its 12 largest kernels (ms per step, launches per step, kind)")
        for n, (us, count) in top:
            print(f"  {us / steps / 1000:8.3f} {count / steps:6.1f}  {kind_of(n):<14} {short(n, 90)}")
    casts = other.get("fp8 cast", 0)
    if casts and other_span:
        free = other_span - casts
        print(f"base ÷ other, step span: {base_span / other_span:.3f}; with other's casts free "
              f"({casts:.3f} ms): {base_span / free:.3f}; GEMMs base ÷ other: "
              f"{base.get('gemm', 0) / max(other.get('gemm', 0), 1e-9):.3f}")


def gaps(path, n):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    device = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")),
                    key=lambda e: e["ts"])
    host = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation", "cuda_runtime", "cuda_driver")]
    if not device:
        print("no device work in", path)
        return
    span = device[-1]["ts"] + device[-1]["dur"] - device[0]["ts"]
    idle, end, found = 0.0, device[0]["ts"], []
    for e in device:
        if e["ts"] > end:
            idle += e["ts"] - end
            found.append((e["ts"] - end, end, e["ts"]))
        end = max(end, e["ts"] + e["dur"])
    print(f"{len(device)} device events over {span / 1000:.2f} ms, idle {idle / 1000:.2f} ms")
    for length, a, b in sorted(found, reverse=True)[:n]:
        # The host's work that overlaps the gap most: the calls that kept the device waiting.
        over = defaultdict(float)
        for h in host:
            lo, hi = max(a, h["ts"]), min(b, h["ts"] + h["dur"])
            if hi > lo:
                over[h["name"]] += hi - lo
        top = sorted(over.items(), key=lambda kv: -kv[1])[:6]
        print(f"  gap {length / 1000:7.2f} ms at +{(a - device[0]['ts']) / 1000:.2f} ms: " +
              "; ".join(f"{short(k, 60)} {v / 1000:.2f}" for k, v in top))


if __name__ == "__main__":
    if sys.argv[1] == "profile":
        a = [x for x in sys.argv[2:] if x != "--compile"]
        profile(a[0], a[1], a[2], int(a[3]) if len(a) > 3 else 12, int(a[4]) if len(a) > 4 else 5,
                compiled="--compile" in sys.argv[2:])
    elif sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "categories":
        categories(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "gaps":
        gaps(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 6)
    else:
        raise SystemExit(__doc__)
