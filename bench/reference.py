#!/usr/bin/env python3
"""PyTorch reference for bench_workloads: the same models, batches, optimizers and
precisions, written as a researcher would in eager PyTorch (torch.autocast,
torch.amp.GradScaler, default foreach optimizers, zero_grad(set_to_none=True)),
timed the same way (CUDA events per optimizer step, warm-up excluded, median).

Prints one "CELL {json}" line per cell, as bench_workloads does.
  python3 bench/reference.py [--workloads cnn,resnet50,gpt2] [--data DIR] [--quick] [--compile]

--compile: the one line a user adds, torch.compile(model) (default mode), on every
cell, each compiled afresh; the optimizer step stays eager. The warm-up runs on until
no step has compiled for a while, so the timed steps hold no compile. Its cells carry
"compiled": true and the label "pytorch-compiled" (eager ones "pytorch-eager"), and
warmup_steps, first_step_s (mostly the compile), graphs, graph_breaks and
recompiles_timed. A cell torch.compile fails on (no triton, a PyTorch without it)
prints why and an "error" CELL line, and the run goes on.
"""
import argparse
import gzip
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ARMS = [  # name, precision, tf32, accumulation, channels_last
    ("fp32", "fp32", False, 1, False),
    ("fp32-tf32", "fp32", True, 1, False),
    ("amp-fp16", "fp16", False, 1, False),
    ("amp-bf16", "bf16", False, 1, False),
    ("amp-fp16-accum4", "fp16", False, 4, False),
    ("fp32-cl", "fp32", False, 1, True),
    ("amp-fp16-cl", "fp16", False, 1, True),
    ("amp-bf16-cl", "bf16", False, 1, True),
]


class Cnn(nn.Module):
    """ampbench's 'cnn': depth × (conv3x3 → BN → ReLU → maxpool), channels doubling."""

    def __init__(self, width=32, depth=2, in_ch=1, classes=10):
        super().__init__()
        layers, c_in, c_out = [], in_ch, width
        for _ in range(depth):
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out),
                       nn.ReLU(inplace=True), nn.MaxPool2d(2)]
            c_in, c_out = c_out, c_out * 2
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        self.features = nn.Sequential(*layers)
        self.dropout = nn.Dropout(0.0)
        self.head = nn.Linear(c_in, classes)

    def forward(self, x):
        return self.head(self.dropout(self.features(x)))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        n, t, d = x.shape
        qkv = self.qkv(self.ln1(x)).view(n, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
        h = x + self.proj(y.transpose(1, 2).reshape(n, t, d))
        return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))


class Decoder(nn.Module):
    def __init__(self, vocab, seq, d, layers, heads):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        for name, p in self.named_parameters():
            if name.endswith("weight") and p.dim() == 2:
                nn.init.normal_(p, 0.0, 0.02)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def fashion_mnist(data_dir, dev):
    def read(name, offset):
        with gzip.open(os.path.join(data_dir, name)) as f:
            return np.frombuffer(f.read(), np.uint8, offset=offset)
    x = read("train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28).astype(np.float32)
    y = read("train-labels-idx1-ubyte.gz", 8).astype(np.int64)
    x = (x / 255.0 - 0.2860) / 0.3530
    # Whole training set on the GPU, batches drawn by a random permutation: the
    # fastest input pipeline a PyTorch user can write for data this small.
    return torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)


def workload(name, quick, data_dir, dev):
    if name == "cnn":
        return dict(model=lambda: Cnn(), batch=64, timed=100 if quick else 300, opt="sgd", lr=0.05,
                    wd=5e-4, data=fashion_mnist(data_dir, dev), conv=True, items=1, flops=0)
    if name == "resnet50":
        import torchvision
        return dict(model=lambda: torchvision.models.resnet50(num_classes=1000), batch=128,
                    timed=10 if quick else 30, opt="sgd", lr=0.1, wd=1e-4,
                    data=(torch.randn(512, 3, 224, 224, device=dev),
                          torch.randint(1000, (512,), device=dev)), conv=True, items=1, flops=0)
    if name == "gpt2":
        d, L, T, V = 768, 12, 1024, 32768
        toks = torch.randint(V, (256, T + 1), device=dev)
        return dict(model=lambda: Decoder(V, T, d, L, 12), batch=16, timed=8 if quick else 20,
                    opt="adamw", lr=3e-4, wd=0.1, data=(toks[:, :-1].contiguous(), toks[:, 1:].contiguous()),
                    conv=False, items=T, flops=6.0 * (L * 12 * d * d + V * d) + 12.0 * L * T * d)
    raise SystemExit(f"unknown workload {name}")


# Compiled cells: the warm-up goes on until this many steps in a row compiled nothing
# (a recompile in a later step, for autocast or the scaler's first steps, stays out of
# the timed steps), for at most EXTRA_WARMUP steps past the usual warm-up.
SETTLE_STEPS, EXTRA_WARMUP = 5, 40


def compile_unavailable():
    """Why torch.compile cannot run in this PyTorch, or None."""
    if not hasattr(torch, "compile"):
        return f"torch {torch.__version__} has no torch.compile (it came in PyTorch 2.0)"
    try:
        from torch.utils._triton import has_triton
    except ImportError:
        return None  # older 2.x: a missing triton shows at the cell's first compile
    if not has_triton():
        return "no working triton: Inductor needs it for CUDA kernels"
    return None


def dynamo_counts():
    """Graphs Dynamo compiled and graph breaks in this process so far (its counters,
    which torch._dynamo.reset() leaves as they are)."""
    from torch._dynamo.utils import counters
    return counters["stats"]["unique_graphs"], sum(counters["graph_break"].values())


def run_cell(w, arm, dev, warmup=10, on_step=None, compile=False):
    name, precision, tf32, k, cl = arm
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(1)
    model = w["model"]().to(dev)
    if cl:
        model = model.to(memory_format=torch.channels_last)
    model.train()
    if compile:
        from torch import _dynamo
        # Each cell compiled from scratch, as in a script of its own: a new model
        # instance would otherwise recompile the same forward and, past Dynamo's cache
        # limit, fall back to eager. Errors raise, never a silent eager fallback.
        _dynamo.reset()
        _dynamo.config.suppress_errors = False
        model = torch.compile(model)
        base = dynamo_counts()
    if w["opt"] == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=w["lr"], momentum=0.9, weight_decay=w["wd"])
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=w["lr"], weight_decay=w["wd"])
    amp = precision != "fp32"
    dtype = torch.float16 if precision == "fp16" else torch.bfloat16
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")
    X, Y = w["data"]
    n, bs = X.shape[0], w["batch"]
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    perm, pos = None, n

    def batch():
        nonlocal perm, pos
        if pos + bs > n:
            perm, pos = torch.randperm(n, device=dev, generator=gen), 0
        idx = perm[pos:pos + bs]
        pos += bs
        x = X[idx]
        if cl:
            x = x.contiguous(memory_format=torch.channels_last)
        return x, Y[idx]

    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    done = 0

    def step():
        nonlocal done
        if on_step:
            on_step(done + 1)  # 1-based optimizer step about to start
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(k):
            x, y = batch()
            with torch.autocast("cuda", dtype=dtype, enabled=amp):
                out = model(x)
                loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
            scaler.scale(loss / k).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        end.record()
        done += 1
        return start, end

    def counts():  # this cell's compiled graphs and graph breaks
        return tuple(a - b for a, b in zip(dynamo_counts(), base)) if compile else (0, 0)

    seen, quiet, first_s = counts()[0], 0, 0.0
    while done < warmup or (compile and quiet < SETTLE_STEPS and done < warmup + EXTRA_WARMUP):
        t = time.perf_counter()
        step()
        if compile and done == 1:
            torch.cuda.synchronize()  # the first step's wall time is mostly the compile
            first_s = time.perf_counter() - t
        graphs = counts()[0]
        quiet = quiet + 1 if graphs == seen else 0
        seen = graphs
    events = [step() for _ in range(w["timed"])]
    torch.cuda.synchronize()
    ms = [a.elapsed_time(b) for a, b in events]
    med = statistics.median(ms)
    q = np.quantile(ms, [0.1, 0.9])
    items_per_s = bs * k * w["items"] / (med / 1000.0)
    r = dict(median_ms=med, p10_ms=float(q[0]), p90_ms=float(q[1]), items_per_s=items_per_s,
             peak_alloc=torch.cuda.max_memory_allocated(),
             tflops=w["flops"] * items_per_s / 1e12 if w["flops"] else 0.0,
             params=sum(p.numel() for p in model.parameters()))
    if compile:
        graphs, breaks = counts()
        # Graphs compiled during the timed steps: non-zero means the median may hold a
        # compile (the warm-up ran out before the compiles settled).
        r.update(warmup_steps=done - w["timed"], first_step_s=first_s, graphs=graphs,
                 graph_breaks=breaks, recompiles_timed=graphs - seen)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="cnn,resnet50,gpt2")
    ap.add_argument("--data", default=os.environ.get("AMPBENCH_FASHION_MNIST") or "/usr/share/datasets/fashion-mnist",
                    help="Fashion-MNIST folder (default: $AMPBENCH_FASHION_MNIST, else Debian's)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--arms", default="", help="only these arms, comma-separated (e.g. amp-fp16-cl)")
    ap.add_argument("--compile", action="store_true",
                    help="every cell's model through torch.compile (default mode)")
    a = ap.parse_args()
    dev = torch.device("cuda")
    print(f"reference: torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN "
          f"{torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0)}"
          f"{', torch.compile (default mode)' if a.compile else ', eager'}", flush=True)
    label = "pytorch-compiled" if a.compile else "pytorch-eager"
    unavailable = compile_unavailable() if a.compile else None
    for name in a.workloads.split(","):
        w = workload(name, a.quick, a.data, dev)
        for arm in ARMS:
            if arm[4] and not w["conv"]:
                continue
            if a.arms and arm[0] not in a.arms.split(","):
                continue
            if unavailable:
                r = dict(error=f"torch.compile unavailable: {unavailable}")
            else:
                try:
                    r = run_cell(w, arm, dev, compile=a.compile)
                except torch.OutOfMemoryError as e:
                    r = dict(error=f"out of memory: {e}")
                except Exception as e:  # noqa: BLE001
                    if not a.compile:
                        raise
                    # Dynamo, Inductor or triton failing on this cell: say so, go on. The
                    # message's first lines name the cause (Dynamo's first is the backend).
                    print(f"{name}/{arm[0]}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
                    why = " ".join([ln.strip() for ln in str(e).splitlines() if ln.strip()][:2])
                    r = dict(error=f"failed under torch.compile: {type(e).__name__}: {why[:300]}")
            if a.compile:
                if "error" in r:
                    print(f"reference {name}/{arm[0]} compiled: cell skipped, {r['error']}", flush=True)
                else:
                    print(f"reference {name}/{arm[0]} compiled: {r['warmup_steps']} warm-up steps "
                          f"(first {r['first_step_s']:.1f} s), {r['graphs']} graphs, "
                          f"{r['graph_breaks']} graph breaks"
                          + (f"; warning: {r['recompiles_timed']} compiled in the timed steps"
                             if r["recompiles_timed"] else ""), flush=True)
                if not unavailable:
                    from torch import _dynamo
                    _dynamo.reset()  # the cell's compiled code goes, and the memory it holds
            r.update(workload=name, arm=arm[0], compiled=a.compile, label=label)
            print("CELL " + json.dumps(r), flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
