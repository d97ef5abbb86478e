#!/usr/bin/env python3
"""The fashion-mnist-recipe preset in PyTorch: the reference its fp32 arm is held to.

  python3 bench/recipe.py [--data FASHION_MNIST_DIR] [--seeds 1 2 3] [--epochs 10]

The same model as the workbench's built-in CNN of depth 3 and width 32 (conv3x3-
BatchNorm-ReLU-max-pool stages, global average pool, linear head; bench/reference.py's
Cnn), the same training part (54,000 images: the workbench's fixed split, a randperm
seeded with 20261130 whose first 6,000 are held out), normalised alike, batch 128 drawn
from a per-epoch permutation of a generator seeded with the seed (the last partial
batch dropped), SGD with Nesterov momentum 0.9 and weight decay 5e-4, OneCycleLR
(max_lr 0.1, pct_start 0.3, cosine, momentum not cycled), cross-entropy with label
smoothing 0.1, fp32 with TF32 off; accuracy on the 10,000 test images after the last
epoch. Prints one line per seed and the mean and standard deviation.
"""
import argparse
import gzip
import os
import statistics

import numpy as np
import torch
import torch.nn.functional as F

from reference import Cnn

SPLIT_SEED = 20261130


def images(data_dir, stem):
    def read(name, offset):
        with gzip.open(os.path.join(data_dir, name)) as f:
            return np.frombuffer(f.read(), np.uint8, offset=offset)
    x = read(stem + "-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28).astype(np.float32)
    y = read(stem + "-labels-idx1-ubyte.gz", 8).astype(np.int64)
    x = (x / 255.0 - 0.2860) / 0.3530
    return torch.from_numpy(x), torch.from_numpy(y)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=os.environ.get("AMPBENCH_FASHION_MNIST",
                                                    "/usr/share/datasets/fashion-mnist"))
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--epochs", type=int, default=10)
    args = p.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    x, y = images(args.data, "train")
    perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(SPLIT_SEED))
    train = perm[6000:]
    x, y = x[train].to(dev), y[train].to(dev)
    tx, ty = images(args.data, "t10k")
    tx, ty = tx.to(dev), ty.to(dev)
    n, batch = x.shape[0], 128
    steps = n // batch
    accs = []
    for seed in args.seeds:
        torch.manual_seed(seed)
        model = Cnn(width=32, depth=3).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                              weight_decay=5e-4)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=args.epochs * steps,
                                                    pct_start=0.3, cycle_momentum=False)
        gen = torch.Generator().manual_seed(seed)
        model.train()
        for _ in range(args.epochs):
            order = torch.randperm(n, generator=gen).to(dev)
            for i in range(steps):
                idx = order[i * batch:(i + 1) * batch]
                loss = F.cross_entropy(model(x[idx]), y[idx], label_smoothing=0.1)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
        model.eval()
        with torch.no_grad():
            correct = sum((model(tx[i:i + 1000]).argmax(1) == ty[i:i + 1000]).sum().item()
                          for i in range(0, tx.shape[0], 1000))
        accs.append(correct / tx.shape[0])
        print(f"seed {seed}: test accuracy {100 * accs[-1]:.2f}%", flush=True)
    sd = statistics.stdev(accs) if len(accs) > 1 else float("nan")
    print(f"PyTorch reference: {100 * statistics.mean(accs):.2f}% ± {100 * sd:.2f} "
          f"(mean ± sd of {len(accs)} seeds)")


if __name__ == "__main__":
    main()
