# bench/device/verdict.sh: bash bench/device.sh verdict (sourced by it, after the build).
#
#   verdict   the time to a verdict on the GPU (builds ampbench-cli and test_engine; runs
#             the GPU tests first): the fashion-mnist-recipe preset (3 arms x 3 seeds)
#             trained (1) one run at a time, eager, (2) its 9 runs packed on the GPU
#             (runs_per_gpu 9, a stream per run), eager, (3) packed with every arm a
#             CUDA graph, (4) --fast-verdict (each arm timed alone, then packed graphs),
#             each from the command to the verdict, wall clock; then
#             (with VERDICT_REFERENCE=1) the PyTorch script bench/recipe.py (its 9 runs
#             one after another). Prints the table of wall times, ratios and each
#             database's verdict lines (show -e 1) and where each run's wall time went
#             (bench/step_gaps.py); the databases go to $OUT.
#             VERDICT_PARTS picks some of "checks sequential packed graphs fast packing
#             ceiling" (ceiling, not in the default: bench/pack_ceiling.py, the most that
#             streams give this CNN with nothing of the workbench in the way)
#             (packing, not in the default: one fp32 graph run alone against nine packed,
#             and the nine graph runs three at a time and without their evaluations)
#             (host, not in the default: the fast verdict in each of HOST_ROUNDS and nine
#             fp32 graph runs packed, with VERDICT_BASE's build alternating; with
#             HOST_CONN32=1 then with 32 hardware work queues,
#             CUDA_DEVICE_MAX_CONNECTIONS=32, and the ceiling so). Each cell prints its
#             CPU seconds and its threads by name, sampled 10 s in.
#             (nobench, not in the default: the fast verdict as it runs by default,
#             cuDNN's heuristics (cudnn_benchmark auto), and with its autotuning,
#             cudnn_benchmark true, alternating, in each of NOBENCH_ROUNDS)
#             (fused, not in the default: the fast verdict as it runs by default, each
#             arm's seeds fused into one model, and with --no-fuse-seeds, nine runs
#             packed, alternating, in each of FUSED_ROUNDS)
#             (fusedref, not in the default: bench/fused_reference.py, fused seeds in
#             PyTorch with nothing of the workbench in the way: the recipe's CNN alone,
#             eager and as a CUDA graph, 3 and 9 seeds fused into one model (grouped
#             convolutions, a batched head), eager and as a graph, and pack_ceiling.py's
#             streams, fp32 and fp16, each against one eager run; then each member of a
#             fused model against its separate run, test accuracy after one epoch;
#             $OUT/fusedref.txt)
#
# Environment:
#   VERDICT_BASE=.deps/base       an earlier commit's source tree (git archive
#                                 COMMIT | tar -x -C .deps/base), built beside this one;
#                                 the host part times its CLI on the same cells.
#   VERDICT_CHECKS='Cuda.*:FastVerdict.*'  the GPU tests of its checks part.
#   HOST_ROUNDS="1 2" NOBENCH_ROUNDS="1 2"  the rounds of the host and nobench parts.

BASE_CLI=
if [[ -n ${VERDICT_BASE:-} ]]; then
    # An earlier commit's source tree, built beside this one: its CLI times the same
    # cells in the same call, alternating with this one's.
    t0=$(date +%s)
    configure "$VERDICT_BASE" build/cuda-base "$OUT/configure-base.log"
    cmake --build build/cuda-base -j"$(nproc)" --target ampbench-cli > "$OUT/build-base.log" 2>&1 \
        || { grep -E "error|Error" -A3 "$OUT/build-base.log" | head -40; exit 1; }
    BASE_CLI=./build/cuda-base/app/ampbench-cli
    echo "built the base ($VERDICT_BASE) in $(( $(date +%s) - t0 )) s"
fi

PARTS=" ${VERDICT_PARTS:-checks sequential packed graphs fast} "
[[ $PARTS == *" checks "* ]] && run_checks "${VERDICT_CHECKS:-Cuda.*:FastVerdict.*}"
$CLI --db "$OUT/spec.db" run --preset fashion-mnist-recipe --device cuda --dry-run > "$OUT/recipe.json"
rm -f "$OUT"/spec.db*
python3 bench/device/verdict_packed_specs.py "$OUT"
timed() {  # label, database, ampbench-cli run arguments (CLI=... picks the program)
    local label=$1 db=$2; shift 2
    rm -f "$db"*
    local t=$(date +%s.%N) cpu
    # The run prints the verdict: its wall time is the time to the verdict. Its
    # threads, busiest first, are sampled 10 s in; bash's time gives its CPU seconds.
    ( sleep 10; ps -L -o tid=,pcpu=,comm= -p "$(pgrep -n -f "ampbench-cli --db $db")" 2>/dev/null \
        | sort -k2 -nr > "$OUT/$label.threads" ) &
    local sampler=$!
    { TIMEFORMAT='%U %S'; time $CLI --db "$db" run "$@" --device cuda -q > "$OUT/$label.txt" 2>&1 \
        || echo "($label: exit $?)"; } 2> "$OUT/$label.cpu"
    local w=$(python3 -c "import time; print(f'{time.time() - $t:.1f}')")
    wait $sampler 2>/dev/null || true
    cpu=$(awk '{printf "%.1f", $1 + $2}' "$OUT/$label.cpu")
    $CLI --db "$db" show -e 1 >> "$OUT/$label.txt" 2>&1 || true
    echo "$label $w $cpu" >> "$OUT/verdict-times.txt"
    echo "== $label: $w s, CPU $cpu s"
    grep -E "^ *(fp32|amp|GPU|AMP)|verdict|busy|faster|shared" "$OUT/$label.txt" | head -24
    # Where each run's wall time went: its steps, its waits for data, its evaluations.
    python3 bench/step_gaps.py "$db" > "$OUT/$label.gaps" 2>&1 && sed 's/^/  /' "$OUT/$label.gaps"
    if [[ -s $OUT/$label.threads ]]; then
        awk '{n[$3]++; c[$3] += $2} END {for (k in n) printf "  threads %-16s %3d, %6.0f%% CPU\n", k, n[k], c[k]}' \
            "$OUT/$label.threads" | sort
    fi
}
rm -f "$OUT/verdict-times.txt"
[[ $PARTS == *" sequential "* ]] && timed sequential "$OUT/sequential.db" --preset fashion-mnist-recipe
[[ $PARTS == *" packed "* ]] && timed packed "$OUT/packed.db" --config "$OUT/recipe-packed.json"
[[ $PARTS == *" graphs "* ]] && timed packed-graphs "$OUT/packed-graphs.db" --config "$OUT/recipe-packed-graphs.json"
[[ $PARTS == *" fast "* ]] && timed fast-verdict "$OUT/fast.db" --preset fashion-mnist-recipe --fast-verdict
if [[ $PARTS == *" packing "* ]]; then
    # How far packing pays for this model: one fp32 graph run alone against nine
    # packed, and the recipe's nine graph runs three and nine at a time, with and
    # without their evaluations.
    python3 bench/device/verdict_packing_specs.py "$OUT"
    for cell in fp32-alone fp32-x9 graphs-3 graphs-9-noeval; do
        timed "$cell" "$OUT/$cell.db" --config "$OUT/$cell.json"
    done
fi
if [[ $PARTS == *" host "* ]]; then
    # Where packed runs lose time on the host: the fast verdict and nine fp32 graph
    # runs packed, with this build and (VERDICT_BASE) the base's, alternating, then
    # with 32 hardware work queues instead of CUDA's 8 (CUDA_DEVICE_MAX_CONNECTIONS).
    [[ -e $OUT/fp32-x9.json ]] || python3 bench/device/verdict_fp32_x9.py "$OUT"
    for round in ${HOST_ROUNDS:-1 2}; do
        if [[ -n $BASE_CLI ]]; then
            CLI=$BASE_CLI timed "base-fast-$round" "$OUT/base-fast.db" --preset fashion-mnist-recipe --fast-verdict
        fi
        timed "fast-$round" "$OUT/fast.db" --preset fashion-mnist-recipe --fast-verdict
    done
    if [[ -n $BASE_CLI ]]; then
        CLI=$BASE_CLI timed base-fp32-x9 "$OUT/base-fp32-x9.db" --config "$OUT/fp32-x9.json"
    fi
    timed fp32-x9 "$OUT/fp32-x9.db" --config "$OUT/fp32-x9.json"
    if [[ ${HOST_CONN32:-0} == 1 ]]; then
        CUDA_DEVICE_MAX_CONNECTIONS=32 timed fast-conn32 "$OUT/fast-c.db" --preset fashion-mnist-recipe --fast-verdict
        CUDA_DEVICE_MAX_CONNECTIONS=32 timed fp32-x9-conn32 "$OUT/fp32-x9-c.db" --config "$OUT/fp32-x9.json"
        echo "== packing ceiling with 32 hardware queues"
        CUDA_DEVICE_MAX_CONNECTIONS=32 python3 bench/pack_ceiling.py 2>&1 | tee "$OUT/ceiling-conn32.txt"
    fi
fi
if [[ $PARTS == *" nobench "* ]]; then
    # cuDNN's heuristics (the fast verdict's default, cudnn_benchmark auto) against
    # its autotuning, where the alone passes tune each convolution in each dtype first.
    for round in ${NOBENCH_ROUNDS:-1 2}; do
        timed "fast-$round" "$OUT/fast.db" --preset fashion-mnist-recipe --fast-verdict
        timed "fast-tuned-$round" "$OUT/fast-tuned.db" --preset fashion-mnist-recipe --fast-verdict --cudnn-benchmark true
    done
fi
if [[ $PARTS == *" fused "* ]]; then
    # Each arm's seeds fused into one model (the fast verdict's default) against the
    # nine runs packed on streams.
    for round in ${FUSED_ROUNDS:-1 2}; do
        timed "fused-$round" "$OUT/fused.db" --preset fashion-mnist-recipe --fast-verdict
        timed "unfused-$round" "$OUT/unfused.db" --preset fashion-mnist-recipe --fast-verdict --no-fuse-seeds
    done
fi
if [[ $PARTS == *" ceiling "* ]]; then
    # The most that streams can give this CNN, without the workbench: graphs
    # replayed round-robin from one thread, and one model at the packed batch.
    echo "== packing ceiling (bench/pack_ceiling.py)"
    python3 bench/pack_ceiling.py 2>&1 | tee "$OUT/ceiling.txt"
fi
if [[ $PARTS == *" fusedref "* ]]; then
    # What fusing an arm's seeds into one model gives this CNN in PyTorch, beside
    # graphs and streams, all in one process so the numbers compare.
    echo "== fused seeds in PyTorch (bench/fused_reference.py)"
    python3 bench/fused_reference.py --data "$AMPBENCH_FASHION_MNIST" 2>&1 | tee "$OUT/fusedref.txt" \
        || echo "(fusedref: exit $?)"
fi
if [[ ${VERDICT_REFERENCE:-0} == 1 ]]; then
    t=$(date +%s.%N)
    python3 bench/recipe.py --data "$AMPBENCH_FASHION_MNIST" > "$OUT/reference.txt" 2>&1 || echo "(reference: exit $?)"
    echo "pytorch-script $(python3 -c "import time; print(f'{time.time() - $t:.1f}')")" >> "$OUT/verdict-times.txt"
fi
echo "== time to the verdict (wall clock, s; ratio to the first line)"
[[ -s $OUT/verdict-times.txt ]] && awk 'NR == 1 {base = $2} {printf "%-16s %7.1f s  %5.2fx  CPU %s s\n", $1, $2, base / $2, $3}' "$OUT/verdict-times.txt"
