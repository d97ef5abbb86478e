# bench/device/lib.sh: shell functions that several modes of bench/device.sh use.
# Sourced by bench/device.sh after the build, before the mode runs; they write
# into $OUT and read the build in build/cuda.

# The whole suite through ctest; prints failures, the summary and the skipped tests.
run_suite() {
    echo "== tests (ctest, the whole suite)"
    local rc=0
    (cd build/cuda && ctest --output-on-failure -j4) > "$OUT/tests.log" 2>&1 || rc=$?
    if (( rc )); then
        grep -E "\*\*\*(Failed|Exception|Timeout)|: Failure$|^\[  FAILED" -A8 "$OUT/tests.log" | head -80 || true
    fi
    if grep -q 'tests passed, ' "$OUT/tests.log"; then
        sed -n '/tests passed, /,$p' "$OUT/tests.log"
    else
        tail -20 "$OUT/tests.log"
    fi
    echo "GPU tests (Cuda.*): $(grep -cE 'Test +#[0-9]+: Cuda\..*[ *]Passed' "$OUT/tests.log" || true) passed," \
         "$(grep -cE 'Test +#[0-9]+: Cuda\..*[ *]Skipped' "$OUT/tests.log" || true) skipped"
    return $rc
}

# A few test_engine groups ahead of a measurement, to see the GPU paths still work.
run_checks() {
    echo "== tests ($1)"
    ./build/cuda/tests/test_engine --gtest_filter="$1" > "$OUT/tests.log" 2>&1 || true
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests? ran" "$OUT/tests.log" | head -30 || true
    grep -E ": Failure$" -A4 "$OUT/tests.log" | head -40 || true
    # What the GPU tests print of their measurements.
    grep -E "^(device busy share|graph run [0-9]|largest relative|graph vs eager|fast verdict on the GPU|fused )" "$OUT/tests.log" || true
}
