#!/usr/bin/env python3
"""The FP8 arm in PyTorch, for the ratio ours / PyTorch: the decoder of
bench/reference.py with each Linear layer the workbench puts in FP8 replaced by a
Float8 Linear on torch._scaled_mm, with the workbench's recipe: e4m3 input and weight,
e5m2 output gradient ("hybrid"), per-tensor delayed scaling over an amax history
(the first cast from the tensor's own amax), scale = 448 (or 57344) / amax / 2^margin,
bf16 out, fp32 weight gradients, everything else under bf16 autocast. The casts are
eager PyTorch ops (amax, multiply, clamp, cast), as a user without a compiler writes
them; --compile runs the model through torch.compile as well.

  python3 bench/fp8_reference.py --width 768 --depth 12 --heads 12 --batch 16 --seq 1024 \
      --vocab 32768 --arms bf16,fp8 --steps 60

Prints one line per arm: median step ms over the timed steps (CUDA events), peak
memory, and the loss of the last step.
"""
import argparse
import statistics
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from reference import Decoder  # noqa: E402

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
LARGEST = {E4M3: 448.0, E5M2: 57344.0}
MIN_FEATURES = 128  # core/amp/Fp8Linear.h: kFp8MinFeatures


class Scaling:
    """One tensor's delayed-scaling state on the device."""

    def __init__(self, fmt, history, margin, dev):
        self.fmt, self.margin = fmt, margin
        self.history = torch.zeros(history, device=dev)
        self.scale = torch.ones(1, device=dev)
        self.primed = False

    def cast(self, x):
        room = LARGEST[self.fmt] / 2.0 ** self.margin
        amax = x.detach().abs().amax().float().reshape(1)
        if not self.primed:
            self.scale = torch.where(amax > 0, room / amax, self.scale)
            self.primed = True
        s = self.scale
        q = (x.float() * s).clamp(-LARGEST[self.fmt], LARGEST[self.fmt]).to(self.fmt)
        self.history = torch.cat([amax, self.history[:-1]])
        m = torch.where(torch.isfinite(self.history), self.history, 0).amax()
        self.scale = torch.where(m > 0, room / m, self.scale).reshape(1)
        return q, s.reciprocal()


class Fp8Matmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, st):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        xq, xi = st["x"].cast(x2)
        wq, wi = st["w"].cast(w)
        y = torch._scaled_mm(xq, wq.t(), scale_a=xi, scale_b=wi,
                             bias=None if b is None else b.to(torch.bfloat16),
                             out_dtype=torch.bfloat16, use_fast_accum=True)
        ctx.save_for_backward(xq, wq, xi, wi)
        ctx.st, ctx.shape, ctx.xdtype, ctx.has_bias = st, shape, x.dtype, b is not None
        return y.view(*shape[:-1], w.shape[0])

    @staticmethod
    def backward(ctx, dy):
        xq, wq, xi, wi = ctx.saved_tensors
        dy2 = dy.reshape(-1, wq.shape[0]).contiguous()
        gq, gi = ctx.st["g"].cast(dy2)
        dx = torch._scaled_mm(gq, wq.t().contiguous().t(), scale_a=gi, scale_b=wi,
                              out_dtype=ctx.xdtype)
        dw = torch._scaled_mm(gq.t().contiguous(), xq.t().contiguous().t(), scale_a=gi,
                              scale_b=xi, out_dtype=torch.float32)
        db = dy2.float().sum(0) if ctx.has_bias else None
        return dx.view(*ctx.shape), dw, db, None


class Fp8Linear(nn.Module):
    def __init__(self, lin, history, margin):
        super().__init__()
        self.weight, self.bias = lin.weight, lin.bias
        dev = lin.weight.device
        self.st = {"x": Scaling(E4M3, history, margin, dev), "w": Scaling(E4M3, history, margin, dev),
                   "g": Scaling(E5M2, history, margin, dev)}

    def forward(self, x):
        rows = x.numel() // x.shape[-1]
        if not torch.is_autocast_enabled() or rows % 16:
            return F.linear(x, self.weight, self.bias)
        return Fp8Matmul.apply(x, self.weight, self.bias, self.st)


def to_fp8(model, history, margin):
    for name, child in list(model.named_children()):
        if isinstance(child, nn.Linear):
            o, i = child.weight.shape
            if o % 16 == 0 and i % 16 == 0 and min(o, i) >= MIN_FEATURES:
                setattr(model, name, Fp8Linear(child, history, margin))
        else:
            to_fp8(child, history, margin)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--history", type=int, default=16)
    ap.add_argument("--margin", type=int, default=0)
    ap.add_argument("--arms", default="bf16,fp8")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    dev = torch.device("cuda")
    toks = torch.randint(a.vocab, (64, a.seq + 1), device=dev)
    for arm in a.arms.split(","):
        torch.manual_seed(1)
        model = Decoder(a.vocab, a.seq, a.width, a.depth, a.heads).to(dev)
        if arm == "fp8":
            to_fp8(model, a.history, a.margin)
        if a.compile:
            model = torch.compile(model)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)
        torch.cuda.reset_peak_memory_stats()
        times = []
        for step in range(a.warmup + a.steps):
            i = (step * a.batch) % (toks.shape[0] - a.batch)
            x, y = toks[i:i + a.batch, :-1], toks[i:i + a.batch, 1:]
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(x)
                loss = F.cross_entropy(logits.float().view(-1, a.vocab), y.reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            end.record()
            if step >= a.warmup:
                times.append((start, end))
        torch.cuda.synchronize()
        ms = statistics.median(s.elapsed_time(e) for s, e in times)
        peak = torch.cuda.max_memory_allocated() / 2**30
        print(f"pytorch {a.label or 'decoder'} {arm}{' compiled' if a.compile else ''}: "
              f"median step {ms:.2f} ms, peak {peak:.2f} GiB, last loss {loss.item():.4f}", flush=True)
        del model, opt


if __name__ == "__main__":
    main()
