#!/usr/bin/env bash
# Fills .deps/ (git-ignored) for bench/device.sh. The CUDA host has PyTorch's LibTorch
# but no Debian packages and no network, so the rest travels from here. Run it on a
# Debian 12 machine with network and the dataset-fashion-mnist package installed:
#   bash bench/fetch-deps.sh
# - .deps/root: libsqlite3-dev, nlohmann-json3-dev, libcli11-dev, zlib1g-dev,
#   the data readers' libraries with their runtime parts (libstb, libminizip, libcsv:
#   the host has none of them), googletest (GoogleTest's source) and patchelf (for
#   packaging/cuda/bundle.sh), downloaded with
#   apt-get download and unpacked with dpkg -x (nothing is installed);
# - .deps/data: Fashion-MNIST's four files, copied from dataset-fashion-mnist.
# Then copy the checkout, .deps/ included, to the CUDA host and run bench/device.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=/usr/share/datasets/fashion-mnist
[[ -e $DATA/train-images-idx3-ubyte.gz ]] \
    || { echo "fetch-deps.sh: no Fashion-MNIST in $DATA: apt-get install dataset-fashion-mnist" >&2; exit 1; }
rm -rf .deps && mkdir -p .deps/debs .deps/root .deps/data
(cd .deps/debs && apt-get download libsqlite3-dev nlohmann-json3-dev libcli11-dev zlib1g-dev googletest \
    libstb-dev libstb0 libminizip-dev libminizip1 libcsv-dev libcsv3 patchelf)
for f in .deps/debs/*.deb; do dpkg -x "$f" .deps/root; done
rm -rf .deps/debs
cp "$DATA"/*.gz .deps/data/
du -sh .deps
