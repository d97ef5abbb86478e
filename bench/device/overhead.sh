# bench/device/overhead.sh: bash bench/device.sh overhead (sourced by it, after the build).
#
#   overhead  the GPU and trainer tests (Cuda.*, Trainer.*), then the recording-
#             overhead benchmark (bench_recording_overhead: recorded and bare rounds
#             alternating on the default comparison's arms).
#
# Environment:
#   OVERHEAD_ARGS="600 7"         bench_recording_overhead's STEPS ROUNDS.

run_checks 'Cuda.*:Trainer.*'
echo "== recording overhead"
./build/cuda/bench/bench_recording_overhead ${OVERHEAD_ARGS:-600 7} | tee "$OUT/overhead.txt"
