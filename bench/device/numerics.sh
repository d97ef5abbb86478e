# bench/device/numerics.sh: bash bench/device.sh numerics (sourced by it, after the build).
#
#   numerics  per-layer numerics on real cases (builds ampbench-cli and test_numerics;
#             runs the numerics tests first): the GPT-2-small-shaped decoder under
#             fp16 with numerics every NUMERICS_EVERY optimizer steps, (1) underflow:
#             the loss scaler as PyTorch sets it, held at 1 (init_scale=1, no growth)
#             and off (noscale), each run's worst layers (show RUN --numerics);
#             (2) overflow: an initial scale of 2^40 that overflows the first steps,
#             the locator's events and the verdict's overflow_origin findings;
#             and the same scale with the located module (head), then head and every
#             block, as FP32 islands (their skipped steps); (3) FP32 islands: the head,
#             the LayerNorms and whole blocks in fp32 against the plain fp16 arm (step
#             time, peak memory: show -e); (4) the cost of the records on the decoder
#             and ResNet-50: off and every 100 steps over 300 steps, every step over
#             100; (5) attention: scores without the 1/sqrt(d) and weights at
#             N(0, 1.5), which overflow fp16 in the forward: fp32, fp16 and fp16 with
#             the attention as an FP32 island (status, skipped steps, final loss, the
#             locator's event). NUMERICS_PARTS picks some of "underflow overflow
#             attention islands cost", and "profile" (a recording step and the step
#             after it under the profiler, the kernels the record adds). Also runs the
#             GPU checks of the fused statistics kernel and the attention.
#             Databases and the analyses' JSON go to $OUT.
#
# Environment:
#   NUMERICS_EVERY=10             optimizer steps between records.
#   NUMERICS_STEPS=120            micro-steps per run.
#   NUMERICS_PARTS="underflow overflow attention islands cost"   the cases to run
#                                 (also: profile, a recording step under the profiler).

echo "== tests (numerics)"
./build/cuda/tests/test_numerics > "$OUT/tests.log" 2>&1 || true
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure" "$OUT/tests.log" | head -30 || true
run_checks 'Cuda.*Numerics*:Cuda.*Attention*:Cuda.HostReadback*'
db="$OUT/numerics.db"
rm -f "$db"*
every=${NUMERICS_EVERY:-10} steps=${NUMERICS_STEPS:-120}
# The preset's spec with numerics on (no CLI flag for it: the spec file carries it).
spec() {  # NAME EVERY ARM...
    local name=$1 n=$2; shift 2
    local arms=(); for a in "$@"; do arms+=(--arm "$a"); done
    $CLI run --preset "${PRESET:-gpt2-small-synthetic}" --name "$name" --steps "$steps" --warmup 10 \
        --eval-interval 0 --eval-batches 1 --device cuda "${arms[@]}" --dry-run \
        --save-spec "$OUT/$name.json" > /dev/null
    python3 - "$OUT/$name.json" "$n" "${MODEL:-}" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["numerics_every"] = int(sys.argv[2])
spec["model"].update(json.loads(sys.argv[3] or "{}"))  # MODEL='{"attention": ...}'
json.dump(spec, open(sys.argv[1], "w"), indent=2)
PY
}
train() {  # NAME: trains $OUT/NAME.json, prints the table and verdicts
    echo "== $1"
    timeout 300 $CLI --db "$db" run --config "$OUT/$1.json" -q 2>&1 | tee "$OUT/$1.txt" | tail -12 \
        || echo "($1: exit $?)"
}
exp=0
show_all() {  # the experiment just trained: the verdicts' overflow_origin reasons
    exp=$((exp + 1))
    $CLI --db "$db" show -e "$exp" --json > "$OUT/numerics-exp$exp.json" || return 0
    python3 - "$OUT/numerics-exp$exp.json" <<'PY'
import json, sys
for v in json.load(open(sys.argv[1]))["verdicts"]:
    for text in v["reasons"]:
        if text.startswith("overflow first"):
            print("verdict, %s: %s" % (v["arm"], text))
PY
}
parts=" ${NUMERICS_PARTS:-underflow overflow attention islands cost} "
if [[ $parts == *" underflow "* ]]; then
    spec numerics-underflow "$every" fp16=amp-fp16 fp16-scale1=amp-fp16,init_scale=1,growth_interval=1000000000 \
        fp16-noscale=amp-fp16,noscale bf16=amp-bf16
    train numerics-underflow; show_all
fi
if [[ $parts == *" overflow "* ]]; then
    # A scale of 2^40 held (no growth): the located module as an FP32 island, then
    # every block too; the skipped steps of each arm say whether the island helps.
    big="init_scale=1099511627776,growth_interval=1000000000"
    spec numerics-overflow "$every" "fp16-2e40=amp-fp16,$big" "head-fp32=amp-fp16,$big,fp32_modules=head" \
        "head-blocks-fp32=amp-fp16,$big,fp32_modules=head;ln_f;blocks.*"
    train numerics-overflow; show_all
fi
if [[ $parts == *" attention "* ]]; then
    # Attention scores without the 1/sqrt(d), weights at N(0, 1.5): the scores overflow
    # fp16 in the forward, every step. The locator names the attention; the same
    # arm with the attention as an FP32 island trains, as FP32 does.
    MODEL='{"attention": "unscaled", "init_std": 1.5}' spec numerics-attention "$every" \
        fp32=fp32 fp16=amp-fp16 "fp16-attn-fp32=amp-fp16,fp32_modules=blocks.*.attn"
    train numerics-attention; show_all
    # The same weights with the scores scaled: the skips left with the island are
    # the scaler's search for these large gradients, not the attention.
    MODEL='{"attention": "scaled", "init_std": 1.5}' spec numerics-attention-scaled "$every" \
        fp16=amp-fp16
    train numerics-attention-scaled; show_all
    python3 - "$db" <<'PY'
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
for run_id, arm, status in db.execute("SELECT r.id, e.name || '/' || r.arm, r.status FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name LIKE 'numerics-attention%' ORDER BY r.id"):
    rows = db.execute("SELECT step, loss, skipped, step_ms, timed, mem_peak FROM steps WHERE run_id = ? ORDER BY step", (run_id,)).fetchall()
    timed = [r[3] for r in rows if r[4]]
    last = [r[1] for r in rows[-10:] if r[1] is not None]
    print("attention, %s: %s, %d steps, %d skipped, loss at the end %s, median step %s ms, peak %.2f GiB" % (
        arm, status, len(rows), sum(1 for r in rows if r[2]),
        "%.3f" % statistics.mean(last) if last else "-",
        "%.1f" % statistics.median(timed) if timed else "-",
        max((r[5] or 0) for r in rows) / 2**30 if rows else 0))
    for (text,) in db.execute("SELECT message FROM events WHERE run_id = ? AND message LIKE 'overflow first%' LIMIT 2", (run_id,)):
        print("   event: " + text)
PY
fi
if [[ $parts == *" profile "* ]]; then
    # Numerics every 40: step 40 records and flushes the step rows, step 20 only
    # flushes (every 20 steps), step 21 does neither. Each under the profiler alone:
    # the kernels the record adds, and where the device waited for the host.
    mkdir -p build/cuda/profile
    for w in gpt2 resnet50; do
        echo "== profile $w/amp-fp16: step 40 (record, flush), 20 (flush), 21 (neither)"
        for s in 40 20 21; do
            NUMERICS_EVERY=40 timeout 150 ./build/cuda/bench/bench_profile_step "$w" amp-fp16 \
                build/cuda/profile/step$s-$w.json $s 1 | tail -1 || true
            python3 bench/kernels.py gaps build/cuda/profile/step$s-$w.json 4 || true
        done
        python3 bench/kernels.py compare build/cuda/profile/step40-$w.json build/cuda/profile/step20-$w.json 1 \
            2>/dev/null | head -8 || true
    done
fi
if [[ $parts == *" islands "* ]]; then
    spec numerics-islands 0 fp16=amp-fp16 head=amp-fp16,fp32_modules=head \
        "norms=amp-fp16,fp32_modules=blocks.*.ln1;blocks.*.ln2;ln_f" "qkv=amp-fp16,fp32_modules=blocks.*.qkv" \
        "blocks=amp-fp16,fp32_modules=blocks.*"
    train numerics-islands; show_all
fi
if [[ $parts == *" cost "* ]]; then
    # The records' cost: off and every 100 optimizer steps over 300 steps (three
    # records), every step over 100, on the decoder and on ResNet-50.
    for p in gpt2-small-synthetic resnet50-synthetic; do
        for n in 0 100 1; do
            PRESET=$p steps=$(( n == 1 ? 100 : 300 )) spec "numerics-cost-${p%%-*}-$n" "$n" fp16=amp-fp16
            train "numerics-cost-${p%%-*}-$n"; show_all
        done
    done
    # What a record costs in device time. The step rows are flushed every 20 steps
    # (a wait for the device), so a recording step (a multiple of 100) is compared
    # with the median of the same run's other flushing steps, and the sum of the
    # extra with the steps' time after warm-up. Also the whole: all steps' time
    # with records every 100 against the run without.
    python3 - "$db" <<'PY'
import json, sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
total_off = {}
for exp_id, name, spec in db.execute("SELECT id, name, spec_json FROM experiments WHERE name LIKE 'numerics-cost-%' ORDER BY id"):
    every = json.loads(spec).get("numerics_every", 0)
    base = name.rsplit("-", 1)[0]
    for (run_id,) in db.execute("SELECT id FROM runs WHERE experiment_id = ?", (exp_id,)):
        rows = db.execute("SELECT step, step_ms, timed, mem_peak FROM steps WHERE run_id = ? AND step > 10", (run_id,)).fetchall()
        med = statistics.median([r[1] for r in rows if r[2]] or [r[1] for r in rows])
        flushing = [r[1] for r in rows if r[0] % 20 == 0 and not (every and r[0] % every == 0)]
        rec = [r[1] for r in rows if every and r[0] % every == 0]
        total = sum(r[1] for r in rows)
        peak = max(r[3] for r in rows) / 2**30
        if not every:
            total_off[base] = (total, len(rows), med)
        line = "record cost, %s: median step %.1f ms, peak %.2f GiB" % (name, med, peak)
        if flushing:
            line += ", flushing steps %.1f ms (median of %d)" % (statistics.median(flushing), len(flushing))
        if rec and flushing and every > 1:
            ref = statistics.median(flushing)
            extra = sum(x - ref for x in rec)
            line += "; recording steps %s ms: extra %.1f ms = %.2f%% of %.0f ms of steps" % (
                "/".join("%.1f" % x for x in rec[:4]), extra, 100 * extra / total, total)
            if base in total_off and total_off[base][1] == len(rows):
                line += "; all steps %.0f ms vs %.0f ms without (%+.2f%%)" % (
                    total, total_off[base][0], 100 * (total / total_off[base][0] - 1))
        elif every == 1:
            line += "; every step records: median %.1f ms" % med
            if base in total_off:
                line += " (%+.1f%% on the run without)" % (100 * (med / total_off[base][2] - 1))
        print(line)
PY
fi
echo "== worst layers of every run"
for id in $($CLI --db "$db" list | awk '$1 ~ /^[0-9]+$/ {print $1}'); do
    $CLI --db "$db" show "$id" --numerics > "$OUT/numerics-run$id.txt" 2>&1 || continue
    head -8 "$OUT/numerics-run$id.txt"
    $CLI --db "$db" show "$id" | grep -E "overflow first|per-layer numerics|FP32 islands" | head -6 || true
done
$CLI --db "$db" export -e 1 2 --csv "$OUT/numerics.csv" --json "$OUT/numerics-export.json" || true
