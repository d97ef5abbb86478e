# bench/device/bundle.sh: bash bench/device.sh bundle (sourced by it, after the build).
#
#   bundle    the relocatable bundle (packaging/cuda/bundle.sh: ampbench-cli and the
#             libraries it needs, RUNPATH $ORIGIN/../lib, a README, as a tarball in
#             $OUT), unpacked into a fresh folder and run from there alone, with an
#             empty environment: --version, the smoke preset on cuda, and a GPU test
#             (fp32, amp-fp16 and amp-bf16 on cuda, the runs' recorded device read
#             back); every library the runs loaded is checked to come from the bundle,
#             glibc or the driver. Prints the bundle's size. Builds only ampbench-cli.

echo "== bundle (packaging/cuda/bundle.sh)"
rm -rf build/cuda/bundle
bash packaging/cuda/bundle.sh build/cuda build/cuda/bundle | tee "$OUT/bundle.txt"
tarball=$(ls build/cuda/bundle/ampbench-cli-*.tar.*)
FRESH=$(mktemp -d /tmp/ampbench-fresh.XXXXXX)
case $tarball in
    *.zst) zstd -dc "$tarball" | tar -C "$FRESH" -xf - ;;
    *) tar -C "$FRESH" -xzf "$tarball" ;;
esac
B=$(realpath "$(ls -d "$FRESH"/ampbench-cli-*)")
echo "== from the bundle alone, unpacked in $FRESH (empty environment, fresh home)"
mkdir -p "$FRESH/home" "$FRESH/ld"
cp -r "$AMPBENCH_FASHION_MNIST" "$FRESH/fashion-mnist"
alone() {
    env -i PATH=/usr/bin:/bin HOME="$FRESH/home" NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
        NVSHMEM_DISABLE_NVLS=1 LD_DEBUG=libs LD_DEBUG_OUTPUT="$FRESH/ld/trace" "$B/bin/ampbench-cli" "$@"
}
rc=0
alone --version || rc=1
alone run --preset smoke --device cuda --data "$FRESH/fashion-mnist" -q || rc=1
echo "== GPU test: fp32, amp-fp16, amp-bf16 on cuda, read back"
alone run --preset smoke --device cuda --data "$FRESH/fashion-mnist" --micro-steps 96 -q \
    --name bundle-gpu --arm fp32=fp32 --arm fp16=amp-fp16 --arm bf16=amp-bf16 || rc=1
alone list | tail -4
for id in 4 5 6; do
    alone show "$id" > "$FRESH/show-$id.txt" || rc=1
    grep -q "^environment .*NVIDIA" "$FRESH/show-$id.txt" && grep -q "^status  *finished" "$FRESH/show-$id.txt" \
        || { echo "run $id: not a finished run on an NVIDIA GPU:"; head -12 "$FRESH/show-$id.txt"; rc=1; }
done
grep -h -m1 "^environment" "$FRESH"/show-*.txt | head -1
# The loader names a bundled library through the RUNPATH ($B/bin/../lib/...).
loaded=$(grep -h "calling init: " "$FRESH"/ld/trace* | sed 's/.*calling init: //' | sort -u \
    | while read -r p; do realpath -m "$p"; done | sort -u)
outside=$(grep -v "^$B/lib/" <<< "$loaded" | grep -vE '^/(usr/)?lib(64|32)?/(x86_64-linux-gnu/)?(ld-linux|libc|libm|libdl|librt|libpthread|libresolv|libutil|libmvec|libcuda|libnvidia-)[^/]*$|^/usr/local/nvidia/' || true)
echo "libraries loaded: $(wc -l <<< "$loaded"), from the bundle: $(grep -c "^$B/lib/" <<< "$loaded")"
if [[ -n $outside ]]; then
    echo "loaded from outside the bundle (neither glibc nor the driver):"; echo "$outside"; rc=1
fi
du -b "$tarball" | awk '{printf "bundle: %s, %.1f MiB\n", $2, $1 / 1048576}'
du -sb "$B" | awk '{printf "unpacked: %.1f MiB\n", $1 / 1048576}'
cp "$B/README" "$OUT/bundle-README.txt"
rm -rf "$FRESH"
exit $rc
