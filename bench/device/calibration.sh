# bench/device/calibration.sh: bash bench/device.sh calibration (sourced by it, after the build).
#
#   calibration  the verdict's calibration: the aa-check preset once, alone (the A/A
#             timing check), then CAL_REPS repetitions of the recipe-controls preset
#             (an A/A arm, accumulation under the linear rule and the three negative
#             controls), CAL_PARALLEL at a time on the one GPU, repetition r on seeds
#             3r-2..3r (its A/A arm on those + 1000), so no two repetitions share a
#             seed; each repetition's analysis (show -e 1 --json) goes to $OUT and
#             bench/calibration.py counts the verdicts. Builds only ampbench-cli.
#
# Environment:
#   CAL_FIRST=1 CAL_REPS=5        the first repetition and how many.
#   CAL_PARALLEL=5                repetitions at a time.
#   CAL_PRESET=recipe-controls    the preset repeated (adamw-controls: the
#                                 second recipe, where fp16 loses quality).
#   CAL_FLAGS=                    more run flags (e.g. --fast-verdict).
#   CAL_AA_TIMING=1               0 leaves the A/A timing check out.
#   CAL_KEEP_DBS=1                the repetitions' databases go into the
#                                 results' archive too.
#   CAL_DEADLINE=480              seconds after the start of the
#                                 script by which no repetition is started and any
#                                 still running is stopped (its rows kept).

START=$t0
DEADLINE=$(( START + ${CAL_DEADLINE:-480} ))
if [[ ${CAL_AA_TIMING:-1} == 1 ]]; then
    echo "== A/A timing check: preset aa-check, alone on the GPU"
    rm -f "$OUT/aa-timing.db"
    $CLI --db "$OUT/aa-timing.db" run --preset aa-check --device cuda -q | tee "$OUT/aa-timing.txt"
    $CLI --db "$OUT/aa-timing.db" show -e 1 --json > "$OUT/aa-timing.json"
    rm -f "$OUT"/aa-timing.db*
fi
first=${CAL_FIRST:-1} reps=${CAL_REPS:-5}
export CAL_PRESET=${CAL_PRESET:-recipe-controls} CAL_FLAGS=${CAL_FLAGS:-}
echo "== calibration: repetitions $first..$(( first + reps - 1 )) of $CAL_PRESET" \
     "${CAL_FLAGS:+($CAL_FLAGS) }${CAL_PARALLEL:-5} at a time"
WORK=build/cuda/calibration
mkdir -p "$WORK"
one_rep() {
    local r=$1 left=$(( DEADLINE - $(date +%s) ))
    if (( left < 30 )); then echo "rep $r: not started (deadline)"; return 0; fi
    rm -f "$WORK/rep$r.db"*
    local rc=0 json="$WORK/rep$r.json"
    local t=$(date +%s)
    timeout -s INT "$left" $CLI --db "$WORK/rep$r.db" run --preset "$CAL_PRESET" $CAL_FLAGS \
        --device cuda --threads 2 --seeds $(( 3 * r - 2 )) $(( 3 * r - 1 )) $(( 3 * r )) -q \
        > "$WORK/rep$r.txt" 2>&1 || rc=$?
    # A repetition stopped at the deadline is kept apart: its arms have fewer seeds.
    # (Exit 1 is a run that failed, e.g. a control's loss turning NaN: complete.)
    (( rc == 124 )) && json="$WORK/partial-rep$r.json"
    $CLI --db "$WORK/rep$r.db" show -e 1 --json > "$json" || true
    echo "rep $r: exit $rc after $(( $(date +%s) - START )) s ($(( $(date +%s) - t )) s its own)"
}
export -f one_rep
export CLI WORK DEADLINE START
seq "$first" $(( first + reps - 1 )) | xargs -P "${CAL_PARALLEL:-5}" -I{} bash -c 'one_rep {}'
# With CAL_KEEP_DBS=1 the repetitions' databases travel too (for a report).
keep=(); [[ ${CAL_KEEP_DBS:-0} == 1 ]] && keep=($(cd "$WORK" && ls ./*.db))
tar czf "$OUT/calibration-$first.tar.gz" -C "$WORK" $(cd "$WORK" && ls ./*.json ./*.txt) \
    "${keep[@]}"
python3 bench/calibration.py "$WORK"/rep*.json | tee "$OUT/calibration.txt"
