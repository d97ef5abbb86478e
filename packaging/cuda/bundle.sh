#!/usr/bin/env bash
# packaging/cuda/bundle.sh: a relocatable ampbench-cli for GPU servers, as a tarball.
#
#   packaging/cuda/bundle.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR is a CUDA build (bench/device.sh configures build/cuda against PyTorch's
# LibTorch) with ampbench-cli built. The bundle is
#   ampbench-cli-<version>-torch<torch>-cuda<cuda>-x86_64/
#     bin/ampbench-cli        RUNPATH $ORIGIN/../lib
#     lib/                    every library it needs that is not glibc's or the GPU
#                             driver's: LibTorch, CUDA's runtime libraries (cuBLAS,
#                             cuDNN, NCCL, ...) as PyTorch ships them, SQLite, zlib,
#                             the data readers, libstdc++; each with RUNPATH $ORIGIN
#     share/doc/ampbench/     README.md (the project's), copyright
#     README                  how to use it
# written as OUT_DIR/<that name>.tar.zst (zstd where present, else .tar.gz, gzip -1).
# Libraries are taken by what the dynamic loader resolves (ldd) plus, for each
# library that came from PyTorch's folders, the rest of its folder: CUDA libraries
# load parts of themselves with dlopen (cuDNN's engines), which ldd does not see.
# Needs: patchelf (on PATH, or in .deps/root/usr/bin from bench/fetch-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:?usage: packaging/cuda/bundle.sh BUILD_DIR [OUT_DIR]}
OUT=${2:-$BUILD}
[[ -x $BUILD/app/ampbench-cli ]] || { echo "bundle.sh: no $BUILD/app/ampbench-cli: build it first" >&2; exit 2; }
PATCHELF=$(command -v patchelf || true)
[[ -z $PATCHELF && -x .deps/root/usr/bin/patchelf ]] && PATCHELF=$PWD/.deps/root/usr/bin/patchelf
[[ -n $PATCHELF ]] || { echo "bundle.sh: patchelf not found (bash bench/fetch-deps.sh brings one)" >&2; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
torch=$(python3 -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null || echo unknown)
cuda=$(python3 -c 'import torch; print(torch.version.cuda or "none")' 2>/dev/null || echo unknown)
NAME=ampbench-cli-$version-torch$torch-cuda$cuda-x86_64
STAGE=$(mktemp -d)/$NAME
trap 'rm -rf "$(dirname "$STAGE")"' EXIT

# The binary, through the install rules: CMake sets its RUNPATH to $ORIGIN/../lib
# (CMAKE_INSTALL_RPATH, given at configure time) and installs the docs.
cmake --install "$BUILD" --prefix "$STAGE" --strip > /dev/null
rm -rf "$STAGE/share/man"
[[ -x $STAGE/bin/ampbench-cli ]] || { echo "bundle.sh: the install rules put no bin/ampbench-cli" >&2; exit 1; }
runpath=$(readelf -d "$STAGE/bin/ampbench-cli" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
if [[ $runpath != '$ORIGIN/../lib' ]]; then
    "$PATCHELF" --set-rpath '$ORIGIN/../lib' "$STAGE/bin/ampbench-cli"
fi
mkdir -p "$STAGE/lib"

# glibc's own libraries and the driver's come from the machine the bundle runs on.
system_lib() {
    case "$(basename "$1")" in
        ld-linux*.so* | libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | libresolv.so* | \
        libutil.so* | libanl.so* | libmvec.so* | libcuda.so* | libnvidia-*.so* | libnvcuvid.so*) return 0 ;;
    esac
    return 1
}
declare -A folders=()
while read -r lib path; do
    [[ -n $path && -f $path ]] || continue
    system_lib "$lib" && continue
    cp -L "$path" "$STAGE/lib/$lib"
    case "$path" in
        */site-packages/* | */dist-packages/*) folders[$(dirname "$(readlink -f "$path")")]=1 ;;
    esac
done < <(ldd "$BUILD/app/ampbench-cli" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
missing=$(ldd "$BUILD/app/ampbench-cli" | grep "not found" || true)
[[ -z $missing ]] || { echo "bundle.sh: unresolved libraries: $missing" >&2; exit 1; }
# The rest of PyTorch's library folders (dlopen'ed parts), Python's bindings left out.
for dir in "${!folders[@]}"; do
    for f in "$dir"/*.so*; do
        base=$(basename "$f")
        case "$base" in libtorch_python.so | libshm*.so* | *.py) continue ;; esac
        [[ -e $STAGE/lib/$base ]] || cp -L "$f" "$STAGE/lib/$base"
    done
done
# Every library finds its neighbours in lib/.
for f in "$STAGE"/lib/*.so*; do
    "$PATCHELF" --set-rpath '$ORIGIN' "$f"
done

if command -v zstd > /dev/null; then EXT=tar.zst; else EXT=tar.gz; fi
TARBALL=$OUT/$NAME.$EXT
# The newest glibc symbol version anything in the bundle asks for.
glibc=$(for f in "$STAGE"/bin/* "$STAGE"/lib/*; do objdump -T "$f" 2>/dev/null; done \
    | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
cat > "$STAGE/README" <<README
AMP Workbench, headless: ampbench-cli $version for x86-64 Linux with an NVIDIA GPU
(LibTorch $torch, CUDA $cuda), relocatable: unpack anywhere and run, no
installation, no Python, no CUDA toolkit.

  tar xf $NAME.$EXT
  $NAME/bin/ampbench-cli --version
  $NAME/bin/ampbench-cli run --preset smoke --device cuda --data /path/to/fashion-mnist

Needs on the machine: glibc $glibc or newer (x86-64 Linux) and an NVIDIA driver that supports CUDA
$cuda (its libcuda.so.1); everything else is in lib/. bin/ampbench-cli finds lib/
through its RUNPATH (\$ORIGIN/../lib), so the folder can be moved or renamed.

Fashion-MNIST (the presets' dataset) is not included: pass the folder holding its four
.gz files with --data DIR or AMPBENCH_FASHION_MNIST=DIR (Debian's
dataset-fashion-mnist installs them in /usr/share/datasets/fashion-mnist).
Reports: this build writes JSON and CSV (ampbench-cli report ID --json r.json --csv
r.csv); copy the database back and use the desktop workbench, or an ampbench-cli
built with Qt, for HTML and PDF. share/doc/ampbench/README.md is the full manual.
README

if [[ $EXT == tar.zst ]]; then
    tar -C "$(dirname "$STAGE")" -cf - "$NAME" | zstd -q -T0 -3 -f -o "$TARBALL"
else
    tar -C "$(dirname "$STAGE")" -cf - "$NAME" | gzip -1 > "$TARBALL"
fi
echo "bundle: $TARBALL"
echo "bundle size: $(du -m "$TARBALL" | cut -f1) MiB compressed, $(du -sm "$STAGE" | cut -f1) MiB unpacked," \
     "$(ls "$STAGE/lib" | wc -l) libraries"
