# bench/device/bench.sh: bash bench/device.sh bench (sourced by it, after the build).
#
#   bench     (default) the whole test suite, then bench_workloads and the PyTorch
#             reference (bench/reference.py) on the same cells, eager, then again with
#             every cell's model through torch.compile (--compile; BENCH_COMPILE=0
#             skips it), then the comparison table (bench/compare.py): ours / eager
#             PyTorch and ours / compiled PyTorch side by side.
#
# Environment:
#   WORKLOADS=cnn,resnet50,gpt2   the workloads benchmarked.
#   BENCH_ARGS=--quick            passed to bench_workloads and reference.py
#                                 (--quick: fewer steps per cell).
#   SKIP_TESTS=1                  skip the test suite (code whose tests
#                                 already passed on this host).
#   BENCH_COMPILE=1               0 skips the reference under torch.compile
#                                 ($OUT/reference-compiled.txt; it compiles each cell
#                                 afresh, minutes in all).

WORKLOADS=${WORKLOADS:-cnn,resnet50,gpt2}
BENCH_ARGS=${BENCH_ARGS:-}
if [[ -n "${SKIP_TESTS:-}" ]]; then
    echo "== tests skipped: SKIP_TESTS is set"
else
    run_suite || echo "(some tests failed: benchmarking anyway)"
fi
echo "== benchmarks (ours)"
./build/cuda/bench/bench_workloads --workloads "$WORKLOADS" $BENCH_ARGS --db "$OUT/bench.db" \
    | tee "$OUT/ours.txt" | grep -v '^CELL'
echo "== benchmarks (PyTorch reference)"
python3 bench/reference.py --workloads "$WORKLOADS" $BENCH_ARGS --data "$AMPBENCH_FASHION_MNIST" \
    | tee "$OUT/reference.txt" | grep -v '^CELL' || true
compiled=
if [[ ${BENCH_COMPILE:-1} != 0 ]]; then
    # The stronger peer: the same script with the one line a user adds. A cell that
    # torch.compile fails on says why and the others go on.
    echo "== benchmarks (PyTorch reference, torch.compile)"
    python3 bench/reference.py --compile --workloads "$WORKLOADS" $BENCH_ARGS \
        --data "$AMPBENCH_FASHION_MNIST" | tee "$OUT/reference-compiled.txt" | grep -v '^CELL' || true
    compiled=$OUT/reference-compiled.txt
fi
echo "== comparison (ours / PyTorch${compiled:+, eager and compiled})"
python3 bench/compare.py "$OUT/ours.txt" "$OUT/reference.txt" ${compiled:+"$compiled"} | tee "$OUT/compare.md"
