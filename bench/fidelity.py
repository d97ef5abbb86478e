#!/usr/bin/env python3
"""Fidelity of a model file: the workbench against PyTorch, step by step.

  python3 bench/fidelity.py make DIR [--data FASHION_MNIST_DIR]
      writes DIR/model.pt (a scripted CNN with BatchNorm, seeded initial weights),
      DIR/train.npz and DIR/val.npz (Fashion-MNIST's training and test images as
      uint8 [N, 1, 28, 28] with int64 labels).
  python3 bench/fidelity.py reference DIR --steps 100 [--seed 1 --micro-batch 128 --lr 0.05]
      trains DIR/model.pt in PyTorch from the file's weights on the batches the
      workbench draws for that seed (torch.randperm from a CPU generator seeded
      with the seed, a new permutation per epoch, the last partial batch dropped;
      uint8 scaled by x.float().div_(255)), fp32, SGD momentum 0.9 without weight
      decay (fused; the workbench run passes --weight-decay 0),
      deterministic algorithms, TF32 off, graph executor optimisation off as in
      the workbench; prints one JSON line of per-step losses.
  python3 bench/fidelity.py compare DB REFERENCE_JSON [--steps 100]
      reads the workbench's per-step losses of the database's last run and prints
      the largest relative difference over the first steps.
"""
import argparse
import gzip
import json
import os
import sqlite3
import sys
import zipfile

# No NumPy needed: .npy is a short text header and raw bytes, .npz a zip of them.
DTYPES = {"|u1": "uint8", "<i8": "int64", "<f4": "float32"}


def read_idx(path):
    """IDX file -> (shape, raw uint8 bytes)."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return shape, data[4 + 4 * dims:]


def npy_bytes(descr, shape, raw):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape) if len(shape) > 1 else "%d," % shape[0])
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + raw


def write_npz(path, arrays):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, (descr, shape, raw) in arrays.items():
            z.writestr(name + ".npy", npy_bytes(descr, shape, raw))


def read_npz_tensor(path, name):
    import ast
    import torch
    with zipfile.ZipFile(path) as z:
        data = z.read(name + ".npy")
    hlen = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + hlen].decode())
    dtype = getattr(torch, DTYPES[header["descr"]])
    t = torch.frombuffer(bytearray(data[10 + hlen:]), dtype=dtype)
    return t.reshape(header["shape"])


def make(args):
    import torch
    import torch.nn as nn

    os.makedirs(args.dir, exist_ok=True)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                nn.MaxPool2d(2),
                nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                nn.MaxPool2d(2))
            self.head = nn.Linear(64 * 7 * 7, 10)

        def forward(self, x):
            return self.head(self.features(x).flatten(1))

    torch.manual_seed(0)
    torch.jit.script(Net()).save(os.path.join(args.dir, "model.pt"))
    d = args.data
    for name, images, labels in (("train", "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
                                 ("val", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")):
        xs, x = read_idx(os.path.join(d, images))
        ys, y = read_idx(os.path.join(d, labels))
        y64 = b"".join(int(v).to_bytes(8, "little") for v in y)
        write_npz(os.path.join(args.dir, name + ".npz"),
                  {"x": ("|u1", [xs[0], 1, xs[1], xs[2]], x), "y": ("<i8", ys, y64)})
    print("wrote", args.dir)


def reference(args):
    import torch

    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device(args.device)
    model = torch.jit.load(os.path.join(args.dir, "model.pt"), map_location=dev)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9,
                          fused=dev.type == "cuda")
    x = read_npz_tensor(os.path.join(args.dir, "train.npz"), "x")
    y = read_npz_tensor(os.path.join(args.dir, "train.npz"), "y").long()
    n = x.shape[0]
    gen = torch.Generator().manual_seed(args.seed)
    losses = []
    # The workbench runs scripted modules with the graph executor's optimisations off.
    with torch.jit.optimized_execution(False):
        train_steps(args, model, opt, x, y, n, gen, dev, losses)
    print(json.dumps({"torch": torch.__version__, "device": str(dev), "seed": args.seed,
                      "losses": losses}))


def train_steps(args, model, opt, x, y, n, gen, dev, losses):
    import torch
    import torch.nn.functional as F

    perm, pos = None, n
    for _ in range(args.steps):
        if pos + args.micro_batch > n:
            perm = torch.randperm(n, generator=gen, dtype=torch.long)
            pos = 0
        idx = perm[pos:pos + args.micro_batch]
        pos += args.micro_batch
        xb = x.index_select(0, idx).to(torch.float32).div_(255).to(dev)
        yb = y.index_select(0, idx).to(dev)
        out = model(xb)
        loss = F.cross_entropy(out.reshape(-1, out.size(-1)), yb.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())


def compare(args):
    with open(args.reference) as f:
        ref = json.load(f)["losses"]
    db = sqlite3.connect(args.db)
    run_id = db.execute("SELECT max(id) FROM runs").fetchone()[0]
    ours = [r[0] for r in db.execute(
        "SELECT loss FROM steps WHERE run_id = ? ORDER BY step", (run_id,))]
    k = min(args.steps, len(ours), len(ref))
    if k == 0:
        sys.exit("no steps to compare")
    rel = [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(ours[:k], ref[:k])]
    worst = max(range(k), key=lambda i: rel[i])
    print(f"steps compared: {k}; max relative difference of the per-step fp32 loss: "
          f"{rel[worst]:.3g} at step {worst + 1} (ours {ours[worst]:.7f}, PyTorch "
          f"{ref[worst]:.7f}); median {sorted(rel)[k // 2]:.3g}; first step ours "
          f"{ours[0]:.7f} PyTorch {ref[0]:.7f}; step {k} ours {ours[k - 1]:.7f} PyTorch {ref[k - 1]:.7f}")
    print("PASS" if rel[worst] <= 1e-4 else "FAIL", "(limit 1e-4)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir")
    m.add_argument("--data", default=os.environ.get("AMPBENCH_FASHION_MNIST",
                                                    "/usr/share/datasets/fashion-mnist"))
    r = sub.add_parser("reference")
    r.add_argument("dir")
    r.add_argument("--steps", type=int, default=100)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--micro-batch", type=int, default=128)
    r.add_argument("--lr", type=float, default=0.05)
    r.add_argument("--device", default="cuda")
    c = sub.add_parser("compare")
    c.add_argument("db")
    c.add_argument("reference")
    c.add_argument("--steps", type=int, default=100)
    args = p.parse_args()
    {"make": make, "reference": reference, "compare": compare}[args.cmd](args)


if __name__ == "__main__":
    main()
