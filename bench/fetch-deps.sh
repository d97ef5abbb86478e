#!/usr/bin/env bash
# Fills .deps/ (git-ignored) for bench/device.sh: the CUDA host has LibTorch but no
# Debian packages, so headers and GoogleTest's source travel from here.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .deps && mkdir -p .deps/debs .deps/root .deps/data
(cd .deps/debs && apt-get download libsqlite3-dev nlohmann-json3-dev libcli11-dev zlib1g-dev googletest)
for f in .deps/debs/*.deb; do dpkg -x "$f" .deps/root; done
rm -rf .deps/debs
cp /usr/share/datasets/fashion-mnist/*.gz .deps/data/
du -sh .deps
