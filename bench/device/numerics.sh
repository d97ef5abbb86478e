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
    python3 bench/device/numerics_spec.py "$OUT/$name.json" "$n" "${MODEL:-}"
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
    python3 bench/device/numerics_overflow_origin.py "$OUT/numerics-exp$exp.json"
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
    python3 bench/device/numerics_attention.py "$db"
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
    python3 bench/device/numerics_cost.py "$db"
fi
echo "== worst layers of every run"
for id in $($CLI --db "$db" list | awk '$1 ~ /^[0-9]+$/ {print $1}'); do
    $CLI --db "$db" show "$id" --numerics > "$OUT/numerics-run$id.txt" 2>&1 || continue
    head -8 "$OUT/numerics-run$id.txt"
    $CLI --db "$db" show "$id" | grep -E "overflow first|per-layer numerics|FP32 islands" | head -6 || true
done
$CLI --db "$db" export -e 1 2 --csv "$OUT/numerics.csv" --json "$OUT/numerics-export.json" || true
