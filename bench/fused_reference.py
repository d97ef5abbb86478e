#!/usr/bin/env python3
"""Fused seeds in PyTorch: G runs of the recipe's CNN that differ only in seed, as one model.

  python3 bench/fused_reference.py [--data DIR] [--steps 400] [--groups 3 9]
                                   [--cells alone graph fused fused-graph packed check]
                                   [--precisions fp32 fp16] [--quick] [--device cuda|cpu]

The recipe's model and training (bench/recipe.py: bench/reference.py's Cnn, width 32,
depth 3; batch 128 of the 54,000-image training part, each run's batches from its own
per-epoch permutation; Nesterov SGD, momentum 0.9, weight decay 5e-4, OneCycleLR to 0.1;
cross-entropy with label smoothing 0.1; TF32 off), timed as samples per second, each
against one eager run alone of the same precision and against the fp32 one:

  alone        one run alone, eager, as bench/recipe.py trains it;
  graph        one run alone, its whole step captured as a CUDA graph;
  fused        G runs as ONE model, eager: every convolution a grouped one (groups=G over
               G x C channels), BatchNorm over G x C channels (each member's channels,
               so its own statistics), the head a batched matmul (torch.baddbmm) over the
               members; member g's input is channel g of the batch, its own images; the
               loss is the members' losses summed, so each gets exactly its own gradient.
               Each member is initialised from its own seed, as its separate run is;
  fused-graph  the fused step captured as a CUDA graph;
  packed       bench/pack_ceiling.py's graphs on streams (1 and G of them, one thread);
  check        after --check-steps (default one epoch), each member of a fused model of
               the smallest G against a separate run of the same seed: test accuracy
               of both, and before training, the largest difference of their losses and
               gradients (close, not identical: the kernels differ).

fp16 is torch.autocast with one GradScaler for the whole fused model: an overflow in any
member skips every member's step, which separate runs would not do. A graph holds the
learning rate it was captured with (no OneCycle step inside it) and, in fp16, a fixed loss
scale with no overflow skip, as bench/pack_ceiling.py's graphs do. On a CPU the graph and
packed cells and fp16 (CPU autocast is bf16 only) say so instead of a number.
"""
import argparse
import contextlib
import copy
import math
import os
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

from recipe import SPLIT_SEED, images
from reference import Cnn

BATCH = 128
CELLS = ["alone", "graph", "fused", "fused-graph", "packed", "check"]
# OneCycleLR warns when a GradScaler skipped the step before it: expected under fp16.
warnings.filterwarnings("ignore", message="Detected call of `lr_scheduler.step")


class Fused(nn.Module):
    """G copies of Cnn as one model: member g owns channels [g*C, (g+1)*C) of every layer."""

    def __init__(self, members):
        super().__init__()
        g = self.groups = len(members)
        layers = []
        for parts in zip(*(m.features for m in members)):
            m = parts[0]
            if isinstance(m, nn.Conv2d):
                conv = nn.Conv2d(g * m.in_channels, g * m.out_channels, m.kernel_size,
                                 padding=m.padding, bias=False, groups=g)
                conv.weight.data.copy_(torch.cat([p.weight.data for p in parts]))
                layers.append(conv)
            elif isinstance(m, nn.BatchNorm2d):
                bn = nn.BatchNorm2d(g * m.num_features, eps=m.eps, momentum=m.momentum)
                for name in ("weight", "bias", "running_mean", "running_var"):
                    getattr(bn, name).data.copy_(torch.cat([getattr(p, name).data for p in parts]))
                layers.append(bn)
            else:  # ReLU, pooling, flatten: channel by channel already
                layers.append(copy.deepcopy(m))
        self.features = nn.Sequential(*layers).to(members[0].head.weight.device)
        # Registered after the features, so parameters() lists them in Cnn's order.
        self.head_weight = nn.Parameter(torch.stack([m.head.weight.data for m in members]))
        self.head_bias = nn.Parameter(torch.stack([m.head.bias.data for m in members]).unsqueeze(1))

    def forward(self, x):
        """x: (B, G, 28, 28), member g's images in channel g. Returns (G, B, classes)."""
        f = self.features(x)
        f = f.view(f.shape[0], self.groups, -1).transpose(0, 1)
        return torch.baddbmm(self.head_bias, f, self.head_weight.transpose(1, 2))

    def member(self, g, grad=False):
        """Member g's slice of every parameter (or gradient), in Cnn.parameters() order."""
        pick = (lambda t: t.grad) if grad else (lambda t: t)
        for m in self.features:
            if isinstance(m, nn.Conv2d):
                n = m.out_channels // self.groups
                yield pick(m.weight)[g * n:(g + 1) * n]
            elif isinstance(m, nn.BatchNorm2d):
                n = m.num_features // self.groups
                yield pick(m.weight)[g * n:(g + 1) * n]
                yield pick(m.bias)[g * n:(g + 1) * n]
        yield pick(self.head_weight)[g]
        yield pick(self.head_bias)[g, 0]


def cnn(seed, dev):
    torch.manual_seed(seed)  # as bench/recipe.py: each run initialised from its seed
    return Cnn(width=32, depth=3).to(dev)


def batches(seed, n, steps, dev):
    """A run's batch indices as bench/recipe.py draws them, (steps, BATCH)."""
    gen = torch.Generator().manual_seed(seed)
    per_epoch = n // BATCH
    epochs = math.ceil(steps / per_epoch)
    order = torch.cat([torch.randperm(n, generator=gen)[:per_epoch * BATCH] for _ in range(epochs)])
    return order.view(-1, BATCH)[:steps].to(dev)


def autocast(dev, amp, cache=True):
    if not amp:
        return contextlib.nullcontext()
    return torch.autocast(dev.type, dtype=torch.float16, cache_enabled=cache)


def grad_scaler(dev, amp):
    if hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler(dev.type, enabled=amp)
    return torch.cuda.amp.GradScaler(enabled=amp)


class Job:
    """One run (Cnn) or G fused (Fused) in training, with its optimizer and batches."""

    def __init__(self, seeds, fused, data, steps, amp, dev):
        self.x, self.y = data  # (N, 28, 28) and (N,), on the device
        self.fused, self.amp, self.dev = fused, amp, dev
        members = [cnn(s, dev) for s in seeds]
        self.model = Fused(members) if fused else members[0]
        # (steps, BATCH, G): indexing (N, 28, 28) images with a step's (BATCH, G) gives
        # (BATCH, G, 28, 28), each member's batch in its own channel, with no copy after.
        self.idx = torch.stack([batches(s, self.x.shape[0], steps, dev) for s in seeds], 2)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                                   weight_decay=5e-4)
        self.sched = torch.optim.lr_scheduler.OneCycleLR(self.opt, max_lr=0.1, total_steps=steps,
                                                         pct_start=0.3, cycle_momentum=False)
        self.scaler = grad_scaler(dev, amp)

    def losses(self, idx):
        """Each member's loss on its batch of idx, (G,); one run's as (1,)."""
        x, y = self.x[idx], self.y[idx]
        if not self.fused:
            return F.cross_entropy(self.model(x), y[:, 0], label_smoothing=0.1).view(1)
        logits = self.model(x)
        return torch.stack([F.cross_entropy(logits[g], y[:, g], label_smoothing=0.1)
                            for g in range(logits.shape[0])])

    def loss(self, idx):
        """The summed loss: member g's gradient is its own loss's and nothing else's."""
        x, y = self.x[idx], self.y[idx]
        if not self.fused:
            return F.cross_entropy(self.model(x), y[:, 0], label_smoothing=0.1)
        logits = self.model(x)
        return F.cross_entropy(logits.flatten(0, 1), y.t().flatten(), label_smoothing=0.1,
                               reduction="sum") / BATCH

    def step(self, i):
        """Eager, as a researcher writes it (bench/recipe.py, plus autocast and GradScaler)."""
        with autocast(self.dev, self.amp):
            loss = self.loss(self.idx[i])
        self.opt.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        self.sched.step()

    def graphed(self, warmup):
        """The step as a CUDA graph: a step's indices copied in, then one replay."""
        static = self.idx[0].clone()
        params = list(self.model.parameters())
        scale = 1024.0 if self.amp else 1.0

        def step():
            self.opt.zero_grad(set_to_none=False)
            with autocast(self.dev, self.amp, cache=False):
                loss = self.loss(static)
            (loss * scale).backward()
            if self.amp:
                torch._foreach_mul_([p.grad for p in params], 1.0 / scale)
            self.opt.step()

        # Warm-up on a side stream (cuDNN's choices, the gradients and the momentum
        # buffers exist before the capture), as torch.cuda.graph wants.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for i in range(warmup):
                static.copy_(self.idx[i])
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        self._graph = graph  # it replays into this job's tensors: keep both together

        def replay(i):
            static.copy_(self.idx[i])
            graph.replay()
        return replay

    @torch.no_grad()
    def accuracy(self, tx, ty):
        """Test accuracy of each member (one for a single run)."""
        self.model.eval()
        correct = 0
        for i in range(0, tx.shape[0], 1000):
            x = tx[i:i + 1000].unsqueeze(1)
            if self.fused:
                x = x.expand(-1, self.model.groups, -1, -1).contiguous()
                correct = correct + (self.model(x).argmax(2) == ty[i:i + 1000]).sum(1)
            else:
                correct = correct + (self.model(x).argmax(1) == ty[i:i + 1000]).sum().view(1)
        self.model.train()
        return [c / tx.shape[0] for c in correct.tolist()]


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def timed(step, warmup, steps, dev):
    """Seconds for `steps` steps after `warmup` untimed ones."""
    for i in range(warmup):
        step(i)
    sync(dev)
    t0 = time.perf_counter()
    for i in range(warmup, warmup + steps):
        step(i)
    sync(dev)
    return time.perf_counter() - t0


def measure(g, fused, graph, amp, data, args, dev):
    """Samples/s and ms a step of one cell, or the reason it has no number."""
    if (graph or amp) and dev.type != "cuda":
        return "no CUDA" if graph else "fp16 autocast needs CUDA"
    total = args.warmup + args.steps
    job = Job(range(1, g + 1), fused, data, total, amp, dev)
    if graph:
        try:
            step = job.graphed(args.warmup)
        except Exception as e:  # a capture that fails is a result too
            return f"did not capture: {str(e).splitlines()[0][:80]}"
        wall = timed(step, args.warmup, args.steps, dev)
    else:
        wall = timed(job.step, args.warmup, args.steps, dev)
    del job
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    return g * BATCH * args.steps / wall, wall / args.steps * 1e3


def check(g, data, test, args, dev):
    """Fused members against separate runs of the same seeds, fp32."""
    steps = args.check_steps
    tx, ty = test
    print(f"\ncheck: {g} seeds fused against {g} separate runs, fp32, {steps} steps, "
          f"test accuracy on {tx.shape[0]} images", flush=True)
    # Before training: the same batches through the fused model and each run, train mode.
    fused = Job(range(1, g + 1), True, data, steps, False, dev)
    per = fused.losses(fused.idx[0])
    per.sum().backward()
    loss_d = grad_d = 0.0
    for k, seed in enumerate(range(1, g + 1)):
        one = Job([seed], False, data, steps, False, dev)
        assert torch.equal(one.idx[..., 0], fused.idx[..., k])
        own = one.losses(one.idx[0])
        own.sum().backward()
        loss_d = max(loss_d, ((per[k] - own[0]).abs() / own[0].abs()).item())
        for a, b in zip(fused.model.member(k, grad=True), (p.grad for p in one.model.parameters())):
            grad_d = max(grad_d, ((a - b).abs().max() / b.abs().max()).item())
    print(f"  before training, largest relative difference fused - separate: "
          f"loss {loss_d:.1e}, gradients {grad_d:.1e}", flush=True)
    # Training: fresh jobs (the comparison above moved the BatchNorm statistics).
    fused = Job(range(1, g + 1), True, data, steps, False, dev)
    for i in range(steps):
        fused.step(i)
    accs = fused.accuracy(tx, ty)
    diffs = []
    for k, seed in enumerate(range(1, g + 1)):
        one = Job([seed], False, data, steps, False, dev)
        for i in range(steps):
            one.step(i)
        own = one.accuracy(tx, ty)[0]
        diffs.append(accs[k] - own)
        print(f"  seed {seed}: fused member {100 * accs[k]:6.2f}%   separate run {100 * own:6.2f}%   "
              f"difference {100 * diffs[-1]:+.2f}", flush=True)
    print(f"  mean |difference| {100 * sum(map(abs, diffs)) / len(diffs):.2f} points", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=os.environ.get("AMPBENCH_FASHION_MNIST",
                                                    "/usr/share/datasets/fashion-mnist"))
    p.add_argument("--steps", type=int, help="timed steps a cell (default 400; --quick 3)")
    p.add_argument("--warmup", type=int, help="untimed steps first (default 20; --quick 1)")
    p.add_argument("--groups", type=int, nargs="+", default=[3, 9], help="the fused G")
    p.add_argument("--cells", nargs="+", default=CELLS, choices=CELLS)
    p.add_argument("--precisions", nargs="+", default=["fp32", "fp16"], choices=["fp32", "fp16"])
    p.add_argument("--check-steps", type=int, help="steps of the check (default one epoch, 421; --quick 20)")
    p.add_argument("--quick", action="store_true",
                   help="a self-check: few steps, the check on 2,000 test images")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--no-cudnn-benchmark", action="store_true",
                   help="cuDNN's heuristics instead of its autotuning (pack_ceiling.py autotunes)")
    args = p.parse_args()
    args.steps = args.steps or (3 if args.quick else 400)
    args.warmup = args.warmup if args.warmup is not None else (1 if args.quick else 20)
    dev = torch.device(args.device)
    torch.backends.cudnn.benchmark = not args.no_cudnn_benchmark
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    x, y = images(args.data, "train")
    train = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(SPLIT_SEED))[6000:]
    data = x[train, 0].to(dev), y[train].to(dev)
    args.check_steps = args.check_steps or (20 if args.quick else data[0].shape[0] // BATCH)
    tx, ty = images(args.data, "t10k")
    test = (tx[:2000] if args.quick else tx)[:, 0].to(dev), (ty[:2000] if args.quick else ty).to(dev)

    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "CPU"
    print(f"fused seeds, recipe CNN, batch {BATCH} a member, {args.steps} timed steps a cell "
          f"after {args.warmup}, on {name}, PyTorch {torch.__version__}")
    print(f"{'cell':<40} {'precision':<9} {'samples/s':>10} {'ms a step':>10} "
          f"{'vs alone':>9} {'vs fp32':>8}", flush=True)
    base = {}

    def row(label, precision, result):
        if isinstance(result, str):
            print(f"{label:<40} {precision:<9} {result}", flush=True)
            return
        rate, ms = result
        ref, ref32 = base.get(precision), base.get("fp32")
        vs = f"{rate / ref:8.2f}x" if ref else f"{'-':>9}"
        vs32 = f"{rate / ref32:7.2f}x" if ref32 else f"{'-':>8}"
        print(f"{label:<40} {precision:<9} {rate:>10.0f} {ms:>10.2f} {vs} {vs32}", flush=True)

    for precision in args.precisions:
        amp = precision == "fp16"
        if "alone" in args.cells:
            r = measure(1, False, False, amp, data, args, dev)
            if not isinstance(r, str):
                base[precision] = r[0]
            row("one run alone, eager", precision, r)
        if "graph" in args.cells:
            row("one run alone, CUDA graph", precision, measure(1, False, True, amp, data, args, dev))
        for g in args.groups:
            if "fused" in args.cells:
                label = f"fused G={g}, eager" + (", one GradScaler" if amp else "")
                row(label, precision, measure(g, True, False, amp, data, args, dev))
            if "fused-graph" in args.cells:
                row(f"fused G={g}, CUDA graph", precision, measure(g, True, True, amp, data, args, dev))
        if "packed" in args.cells:
            if dev.type != "cuda":
                row("packed graphs on streams", precision, "no CUDA")
            else:
                import pack_ceiling  # its graphs replay random batches: the streams' ceiling
                for n in [1] + args.groups:
                    row(f"{n} graphs on {n} streams (pack_ceiling)", precision,
                        pack_ceiling.samples_per_s(n, BATCH, amp, args.steps))
    print("vs alone: against one eager run alone of the same precision; vs fp32: against the fp32 one.\n"
          "graphs: the lr they were captured with, fp16 with a fixed loss scale (1024) and no overflow skip.\n"
          "fused fp16 eager: one GradScaler for all members (an overflow in one skips every member's step).")
    if "check" in args.cells:
        check(min(args.groups), data, test, args, dev)


if __name__ == "__main__":
    main()
