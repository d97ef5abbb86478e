#!/usr/bin/env python3
"""How far runs side by side can pay on this GPU, with nothing of the workbench in the way.

  python3 bench/pack_ceiling.py [--runs 1 3 9] [--steps 600] [--batch 128] [--feed]

For each count N: N copies of the recipe's CNN (bench/reference.py's Cnn, width 32,
depth 3, Nesterov SGD), each with its training step (forward, backward, update) captured
as a CUDA graph on a stream of its own, then replayed round-robin from one host thread
with nothing read back until the end: the most overlap streams can give, since the host
never makes a stream wait. Prints the aggregate samples per second against one run.
Then one model at batch N x 128: what training the N runs as one wider batch (one kernel
per layer for all of them) would reach. fp32 and AMP fp16 (with a fixed loss scale, as a
graph of the dynamic scaler does the same work).

--feed adds, for N graphs on N streams, what a run of the workbench does around each
replay: a batch from pinned host memory copied to the device and into the graph's static
inputs, and the step's outputs copied out once; its rows show what that costs packed.
--threads adds N graphs on N streams replayed each from a host thread of its own, as the
workbench's packed runs are (a replay lets go of Python's lock).
"""
import argparse
import threading
import time

import torch
import torch.nn.functional as F

from reference import Cnn


def make_step(batch, amp, stream):
    model = Cnn(width=32, depth=3).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                          weight_decay=5e-4)
    x = torch.randn(batch, 1, 28, 28, device="cuda")
    y = torch.randint(10, (batch,), device="cuda")
    scale = 1024.0 if amp else 1.0

    def step():
        opt.zero_grad(set_to_none=False)
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp, cache_enabled=False):
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        (loss * scale).backward()
        if amp:
            for p in model.parameters():
                p.grad.div_(scale)
        opt.step()
        return loss

    with torch.cuda.stream(stream):
        for _ in range(5):  # warm-up: cuDNN's choices and the optimizer's state
            step()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        step()
    torch.cuda.synchronize()
    # The graph replays into the model's, the optimizer's and the inputs' memory:
    # they live as long as it does.
    return graph, (model, opt, x, y)


def samples_per_s(n, batch, amp, steps, feed=False, threads=False):
    streams = [torch.cuda.Stream() for _ in range(n)]
    made = [make_step(batch, amp, s) for s in streams]
    graphs = [g for g, _ in made]
    host = [(torch.randn(batch, 1, 28, 28).pin_memory(), torch.randint(10, (batch,)).pin_memory())
            for _ in range(n)]
    outs = [torch.zeros(4, device="cuda") for _ in range(n)]

    def replay(i):
        g, s = graphs[i], streams[i]
        with torch.cuda.stream(s):
            if feed:
                _, (_, _, x, y) = made[i]
                x.copy_(host[i][0].to("cuda", non_blocking=True), non_blocking=True)
                y.copy_(host[i][1].to("cuda", non_blocking=True), non_blocking=True)
            g.replay()
            if feed:
                outs[i].clone()

    for i in range(n):  # one replay each before timing
        replay(i)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if threads:
        def own(i):
            for _ in range(steps):
                replay(i)
        pool = [threading.Thread(target=own, args=(i,)) for i in range(n)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    else:
        for _ in range(steps):
            for i in range(n):
                replay(i)
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    del graphs, made
    torch.cuda.empty_cache()
    return n * steps * batch / wall, wall / steps * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, nargs="+", default=[1, 3, 9])
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--feed", action="store_true", help="add the per-step copies of a run")
    p.add_argument("--threads", action="store_true", help="add a host thread per run")
    args = p.parse_args()
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"{'precision':<10} {'how':<34} {'samples/s':>11} {'ms a round':>11} {'vs one run':>11}")
    for amp in (False, True):
        name = "amp-fp16" if amp else "fp32"
        one = None
        for n in args.runs:
            rate, ms = samples_per_s(n, args.batch, amp, args.steps)
            one = one or rate
            print(f"{name:<10} {f'{n} graphs on {n} streams':<34} {rate:>11.0f} {ms:>11.3f} "
                  f"{rate / one:>10.2f}x", flush=True)
        if args.feed:
            for n in args.runs:
                rate, ms = samples_per_s(n, args.batch, amp, args.steps, feed=True)
                print(f"{name:<10} {f'{n} graphs, {n} streams, batches fed':<34} {rate:>11.0f} "
                      f"{ms:>11.3f} {rate / one:>10.2f}x", flush=True)
        if args.threads:
            for n in args.runs[1:]:
                rate, ms = samples_per_s(n, args.batch, amp, args.steps, threads=True)
                print(f"{name:<10} {f'{n} graphs, {n} streams, {n} threads':<34} {rate:>11.0f} "
                      f"{ms:>11.3f} {rate / one:>10.2f}x", flush=True)
                rate, ms = samples_per_s(n, args.batch, amp, args.steps, feed=True, threads=True)
                print(f"{name:<10} {f'{n} threads, batches fed':<34} {rate:>11.0f} "
                      f"{ms:>11.3f} {rate / one:>10.2f}x", flush=True)
        for n in args.runs[1:]:
            rate, ms = samples_per_s(1, args.batch * n, amp, args.steps)
            print(f"{name:<10} {f'one graph at batch {n} x {args.batch}':<34} {rate:>11.0f} "
                  f"{ms:>11.3f} {rate / one:>10.2f}x", flush=True)


if __name__ == "__main__":
    main()
