"""A small CNN on Fashion-MNIST: a plain PyTorch training loop, recorded for AMP Workbench.

The lines marked `# ampbench` are all that the workbench needs; without the workbench
(python3 train.py) the script trains as before and the recorder records nothing.

    ampbench-cli run --script examples/fashion_mnist_script/train.py \
        --arm fp32=fp32 --arm bf16=amp-bf16 --seeds 1 2 --micro-steps 40
"""

import argparse
import gzip
import os
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F

import ampbench  # ampbench

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, count = struct.unpack(">II", data[:8])
    dims = [count] + [struct.unpack(">I", data[8 + 4 * i:12 + 4 * i])[0] for i in range((magic & 0xFF) - 1)]
    offset = 4 * (len(dims) + 1)
    return torch.frombuffer(bytearray(data[offset:]), dtype=torch.uint8).reshape(dims)


def load(folder, part, limit):
    prefix = "train" if part == "train" else "t10k"
    images = read_idx(os.path.join(folder, prefix + "-images-idx3-ubyte.gz"))[:limit]
    labels = read_idx(os.path.join(folder, prefix + "-labels-idx1-ubyte.gz"))[:limit]
    return images.unsqueeze(1).float().div_(255.0), labels.long()


class SmallCnn(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.conv1 = nn.Conv2d(1, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.head = nn.Linear(2 * width * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(x.flatten(1))


def main():
    rec = ampbench.Recorder()  # ampbench: the arm, seed, precision, lr and K
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=rec.settings.data_dir or DEFAULT_DATA)
    parser.add_argument("--steps", type=int, default=rec.settings.planned_steps or 100,
                        help="optimizer steps")
    parser.add_argument("--batch", type=int, default=rec.settings.micro_batch or 64)
    parser.add_argument("--train-samples", type=int, default=60000)
    parser.add_argument("--eval-samples", type=int, default=10000)
    parser.add_argument("--lr", type=float, default=rec.lr or 0.05)
    args = parser.parse_args()

    torch.manual_seed(rec.seed)
    device = torch.device(rec.settings.device or "cpu")
    x_train, y_train = load(args.data, "train", args.train_samples)
    x_test, y_test = load(args.data, "test", args.eval_samples)
    model = SmallCnn().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scaler = rec.grad_scaler()  # ampbench: a GradScaler for fp16 arms, else None
    order = torch.randperm(len(x_train))

    micro = 0
    for step in range(args.steps):
        step_loss = 0.0
        for k in range(rec.accumulation):
            idx = order[(micro * args.batch) % len(order):][:args.batch]
            if len(idx) < args.batch:
                order = torch.randperm(len(x_train))
                idx = order[:args.batch]
            micro += 1
            x, y = x_train[idx].to(device), y_train[idx].to(device)
            with rec.autocast():  # ampbench: the arm's autocast (nothing for fp32)
                loss = F.cross_entropy(model(x), y) / rec.accumulation
            (scaler.scale(loss) if scaler else loss).backward()
            step_loss = step_loss + loss.detach()  # the mean over the K micro-batches
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)
        rec.step(step_loss, lr=opt.param_groups[0]["lr"], scaler=scaler,
                 samples=args.batch * rec.accumulation)  # ampbench

    model.eval()
    with torch.no_grad(), rec.autocast():
        logits = torch.cat([model(x_test[i:i + 1000].to(device)) for i in range(0, len(x_test), 1000)])
        val_loss = F.cross_entropy(logits.float(), y_test.to(device)).item()
        accuracy = (logits.argmax(1).cpu() == y_test).float().mean().item()
    rec.eval(metric=accuracy, loss=val_loss)  # ampbench
    rec.close()
    print("trained %d steps: validation accuracy %.3f, loss %.3f" % (args.steps, accuracy, val_loss))


if __name__ == "__main__":
    main()
