// Per-layer numerics: where gradients and activations sit in fp16's range.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "core/autocast/AutocastGuard.h"
#include "core/models/Registry.h"
#include "core/numerics/Fp16Numerics.h"
#include "core/numerics/NumericsTap.h"
#include "core/train/SetupCheck.h"
#include "core/train/Trainer.h"
#include "core/train/private/NumericsRecorder.h"

using namespace ampbench;
using run::NumericsKind;
using run::NumericsRecord;

namespace {

constexpr double kSub = 5.9604644775390625e-08;  // 2^-24
constexpr double kNormal = 6.103515625e-05;      // 2^-14

NumericsRecord one(const at::Tensor& t, double multiplier, double scale = 0) {
    auto rows = numerics::observe({{"w", t}}, NumericsKind::Grad, 7, multiplier,
                                  scale > 0 ? scale : multiplier);
    EXPECT_EQ(rows.size(), 1u);
    return rows.at(0);
}

}  // namespace

// Ten hand-made values: at scale 1, two lie under the smallest subnormal, five under
// the smallest normal; zeros are no underflow.
TEST(Fp16Numerics, UnderflowSharesOfKnownValues) {
    const auto t =
        at::tensor({0.0, 0.0, 1e-9, -3e-8, 1e-7, -1e-6, 3e-5, 1e-3, -0.5, 2.0}, at::kFloat);
    const auto r = one(t, 1.0);
    EXPECT_EQ(r.numel, 10);
    EXPECT_EQ(r.step, 7);
    EXPECT_EQ(r.name, "w");
    EXPECT_EQ(r.dtype, "float32");
    EXPECT_DOUBLE_EQ(r.underflow_subnormal, 0.2);  // 1e-9, 3e-8
    EXPECT_DOUBLE_EQ(r.underflow_normal, 0.5);     // and 1e-7, 1e-6, 3e-5
    EXPECT_EQ(r.nonfinite, 0);
    EXPECT_DOUBLE_EQ(r.absmax, 2.0);
    EXPECT_NEAR(r.headroom_log2, std::log2(65504.0 / 2.0), 1e-12);
    EXPECT_DOUBLE_EQ(r.loss_scale, 1.0);
}

// At a loss scale of 2^16 every value moves up 16 binades: 1e-12 leaves the
// subnormal underflow but stays under the normal bound, 1e-9 becomes normal, and the
// largest value passes fp16's maximum (negative headroom).
TEST(Fp16Numerics, TheLossScaleMovesValuesUpItsBinades) {
    const auto t = at::tensor({1e-12, 1e-9, 1e-3, 2.0}, at::kFloat);
    const auto r = one(t, 65536.0);
    EXPECT_DOUBLE_EQ(r.loss_scale, 65536.0);
    // 1e-12 × 2^16 = 6.6e-8: above 2^-24, below 2^-14; 1e-9 × 2^16 = 6.6e-5: normal.
    EXPECT_DOUBLE_EQ(r.underflow_subnormal, 0.0);
    EXPECT_DOUBLE_EQ(r.underflow_normal, 0.25);
    EXPECT_DOUBLE_EQ(r.absmax, 2.0 * 65536.0);
    EXPECT_NEAR(r.headroom_log2, std::log2(65504.0 / 131072.0), 1e-12);
    EXPECT_LT(r.headroom_log2, 0.0);  // 2 × 2^16 is past fp16's largest value
}

// Gradients read before unscaling hold unscaled × scale already: a multiplier of 1
// with the scale recorded gives the same shares as unscaled values × the scale.
TEST(Fp16Numerics, ScaledGradientsReadAsTheyAre) {
    const auto unscaled = at::tensor({1e-12, 1e-9, 1e-3, 2.0}, at::kFloat);
    const auto a = one(unscaled, 1024.0);
    const auto b = one(unscaled * 1024.0, 1.0, 1024.0);
    EXPECT_DOUBLE_EQ(a.underflow_subnormal, b.underflow_subnormal);
    EXPECT_DOUBLE_EQ(a.underflow_normal, b.underflow_normal);
    EXPECT_DOUBLE_EQ(a.absmax, b.absmax);
    EXPECT_DOUBLE_EQ(b.loss_scale, 1024.0);
}

// The thresholds themselves: 2^-24 is the smallest subnormal (not below it), 2^-14
// the smallest normal; one ulp less is below.
TEST(Fp16Numerics, ThresholdsAreExact) {
    const float sub = static_cast<float>(kSub);
    const float normal = static_cast<float>(kNormal);
    const auto t = at::tensor(
        {sub, std::nextafter(sub, 0.0f), normal, std::nextafter(normal, 0.0f)}, at::kFloat);
    const auto r = one(t, 1.0);
    EXPECT_DOUBLE_EQ(r.underflow_subnormal, 0.25);
    EXPECT_DOUBLE_EQ(r.underflow_normal, 0.75);
    const auto max = one(at::tensor({65504.0f}), 1.0);
    EXPECT_DOUBLE_EQ(max.headroom_log2, 0.0);
}

// inf and NaN count as non-finite (never as underflow) and leave no headroom; an
// all-zero tensor has all of it; an empty one is recorded with nothing in it.
TEST(Fp16Numerics, NonFiniteZeroAndEmptyTensors) {
    const double inf = std::numeric_limits<double>::infinity();
    const auto bad = one(at::tensor({1.0, inf, std::nan(""), 1e-9}, at::kFloat), 1.0);
    EXPECT_EQ(bad.nonfinite, 2);
    EXPECT_EQ(bad.absmax, inf);
    EXPECT_EQ(bad.headroom_log2, -inf);
    EXPECT_DOUBLE_EQ(bad.underflow_subnormal, 0.25);
    const auto zero = one(at::zeros({5}), 1.0);
    EXPECT_EQ(zero.absmax, 0.0);
    EXPECT_EQ(zero.headroom_log2, inf);
    EXPECT_EQ(zero.underflow_normal, 0.0);
    const auto empty = one(at::zeros({0}), 1.0);
    EXPECT_EQ(empty.numel, 0);
    EXPECT_EQ(empty.headroom_log2, inf);
}

// Half and bfloat16 tensors are read in their own values and named by their dtype.
TEST(Fp16Numerics, LowPrecisionTensorsKeepTheirDtype) {
    const auto h = one(at::tensor({1e-7, 1.0}, at::kFloat).to(at::kHalf), 1.0);
    EXPECT_EQ(h.dtype, "float16");
    EXPECT_DOUBLE_EQ(h.underflow_normal, 0.5);
    EXPECT_DOUBLE_EQ(h.underflow_subnormal, 0.0);
    const auto b = one(at::tensor({1e-9, 1.0}, at::kFloat).to(at::kBFloat16), 1.0);
    EXPECT_EQ(b.dtype, "bfloat16");
    EXPECT_DOUBLE_EQ(b.underflow_subnormal, 0.5);
}

// ---------------------------------------------------------------- number formats

// Each format's limits, exactly: from their definitions (powers of two, the largest
// as (2 - 2^-mantissa) × 2^emax, e4m3fn's one short of it: its top pattern is NaN), and
// against LibTorch's own limits where it has the type.
TEST(NumberFormats, LimitsAreExact) {
    using run::NumberFormat;
    auto largest = [](int mantissa, int emax) {
        return (2.0 - std::ldexp(1.0, -mantissa)) * std::ldexp(1.0, emax);
    };
    EXPECT_EQ(run::kFp16.largest, largest(10, 15));
    EXPECT_EQ(run::kFp16.largest, 65504.0);
    EXPECT_EQ(run::kFp16.smallest_normal, std::ldexp(1.0, -14));
    EXPECT_EQ(run::kFp16.smallest_subnormal, std::ldexp(1.0, -24));
    EXPECT_EQ(run::kFp16.largest, static_cast<double>(std::numeric_limits<c10::Half>::max()));
    EXPECT_EQ(run::kFp16.smallest_normal,
              static_cast<double>(std::numeric_limits<c10::Half>::min()));
    EXPECT_EQ(run::kFp16.smallest_subnormal,
              static_cast<double>(std::numeric_limits<c10::Half>::denorm_min()));
    EXPECT_EQ(run::kBf16.largest, largest(7, 127));
    EXPECT_EQ(run::kBf16.smallest_normal, std::ldexp(1.0, -126));
    EXPECT_EQ(run::kBf16.smallest_subnormal, std::ldexp(1.0, -133));
    EXPECT_EQ(run::kBf16.largest, static_cast<double>(std::numeric_limits<c10::BFloat16>::max()));
    EXPECT_EQ(run::kBf16.smallest_subnormal,
              static_cast<double>(std::numeric_limits<c10::BFloat16>::denorm_min()));
    EXPECT_EQ(run::kE4m3.largest, 448.0);
    EXPECT_EQ(run::kE4m3.largest, (2.0 - std::ldexp(1.0, -2)) * std::ldexp(1.0, 8));
    EXPECT_EQ(run::kE4m3.smallest_normal, std::ldexp(1.0, -6));
    EXPECT_EQ(run::kE4m3.smallest_subnormal, std::ldexp(1.0, -9));
    EXPECT_EQ(run::kE5m2.largest, largest(2, 15));
    EXPECT_EQ(run::kE5m2.largest, 57344.0);
    EXPECT_EQ(run::kE5m2.smallest_normal, std::ldexp(1.0, -14));
    EXPECT_EQ(run::kE5m2.smallest_subnormal, std::ldexp(1.0, -16));
    EXPECT_EQ(run::kFp32.largest, static_cast<double>(std::numeric_limits<float>::max()));
    EXPECT_EQ(run::kFp32.smallest_normal, static_cast<double>(std::numeric_limits<float>::min()));
    EXPECT_EQ(run::kFp32.smallest_subnormal,
              static_cast<double>(std::numeric_limits<float>::denorm_min()));
    for (const NumberFormat& f : run::numberFormats()) {
        SCOPED_TRACE(f.name);
        // The smallest subnormal is the smallest normal's last mantissa bit.
        EXPECT_EQ(f.smallest_subnormal, std::ldexp(f.smallest_normal, -f.mantissa_bits));
    }
    EXPECT_EQ(run::kFp16.mantissa_bits, 10);
    EXPECT_EQ(run::kBf16.mantissa_bits, 7);
    EXPECT_EQ(run::kE4m3.mantissa_bits, 3);
    EXPECT_EQ(run::kE5m2.mantissa_bits, 2);
    EXPECT_EQ(run::kFp32.mantissa_bits, 23);
}

// A format is found by its name and only by it; each arm's tensors are measured in the
// format they are held in, fp32's against fp16 (would they fit).
TEST(NumberFormats, FoundByNameAndByArm) {
    for (const auto& f : run::numberFormats()) {
        ASSERT_TRUE(run::numberFormatNamed(f.name).has_value()) << f.name;
        EXPECT_EQ(run::numberFormatNamed(f.name)->largest, f.largest);
    }
    EXPECT_FALSE(run::numberFormatNamed("FP16").has_value());
    EXPECT_FALSE(run::numberFormatNamed("e4m3fnuz").has_value());
    EXPECT_FALSE(run::numberFormatNamed("").has_value());
    EXPECT_EQ(run::numberFormatNames(), "e4m3, e5m2, fp16, bf16, fp32");
    using config::Precision;
    EXPECT_STREQ(run::formatOfArm(Precision::Fp32).name, "fp16");
    EXPECT_STREQ(run::formatOfArm(Precision::AmpFp16).name, "fp16");
    EXPECT_STREQ(run::formatOfArm(Precision::PureFp16).name, "fp16");
    EXPECT_STREQ(run::formatOfArm(Precision::AmpBf16).name, "bf16");
    EXPECT_STREQ(run::formatOfArm(Precision::Fp8).name, "bf16");
    EXPECT_EQ(run::describe(run::kE4m3),
              "e4m3 (largest 448, smallest normal 2^-6, subnormal 2^-9)");
    EXPECT_EQ(run::powerOfTwoText(0x1p-24), "2^-24");
    EXPECT_EQ(run::powerOfTwoText(3.0), "3");
}

// Values past the format's largest are saturated (finite ones only: inf and NaN are
// non-finite), the headroom is to that format's largest, and underflow is under its
// smallest subnormal and normal.
TEST(FormatNumerics, E4m3SaturationUnderflowAndHeadroom) {
    const double inf = std::numeric_limits<double>::infinity();
    const auto t = at::tensor({447.0, 448.0, 449.0, -1000.0, 0.001, 0.01, 0.0, 2.0}, at::kFloat);
    const auto r = numerics::observe({{"x", t}}, NumericsKind::Grad, 3, 1.0, 1.0, run::kE4m3)[0];
    EXPECT_EQ(r.format, "e4m3");
    EXPECT_DOUBLE_EQ(r.saturated, 2.0 / 8);            // 449, -1000
    EXPECT_DOUBLE_EQ(r.underflow_subnormal, 1.0 / 8);  // 0.001 < 2^-9
    EXPECT_DOUBLE_EQ(r.underflow_normal, 2.0 / 8);     // and 0.01 < 2^-6
    EXPECT_DOUBLE_EQ(r.absmax, 1000.0);
    EXPECT_DOUBLE_EQ(r.headroom_log2, std::log2(448.0 / 1000.0));
    EXPECT_DOUBLE_EQ(r.scale, 1.0);
    const auto bad = numerics::observe({{"x", at::tensor({inf, std::nan(""), 500.0, 1.0})}},
                                       NumericsKind::Grad, 3, 1.0, 1.0, run::kE4m3)[0];
    EXPECT_EQ(bad.nonfinite, 2);
    EXPECT_DOUBLE_EQ(bad.saturated, 0.25);  // 500 only
    // The same values in fp16's range: nothing saturates.
    EXPECT_EQ(one(t, 1.0).saturated, 0.0);
    EXPECT_EQ(one(t, 1.0).format, "fp16");
    // A multiplier moves values past it: 2 × 2^15 > 65504.
    EXPECT_DOUBLE_EQ(one(t, 32768.0).saturated, 5.0 / 8);
}

// A cast tensor's scale multiplies its values before the cast: shares, abs-max and
// headroom are of the scaled values, the record keeps the scale apart from the loss
// scale; a scale or multiplier that is not a positive number is refused.
TEST(FormatNumerics, ACastTensorIsMeasuredAtItsScale) {
    numerics::Observation o(NumericsKind::Cast, 5, 1.0, 1024.0, run::kE5m2);
    const auto t = at::tensor({5e-7, 0.5, 1000.0}, at::kFloat);
    o.add("blocks.0.qkv:grad_output", t, 64.0);
    o.add("blocks.0.qkv:input", t, 1.0);
    const auto rows = o.finish();
    ASSERT_EQ(rows.size(), 2u);
    const auto& scaled = rows[0];
    EXPECT_EQ(scaled.kind, NumericsKind::Cast);
    EXPECT_EQ(scaled.format, "e5m2");
    EXPECT_DOUBLE_EQ(scaled.scale, 64.0);
    EXPECT_DOUBLE_EQ(scaled.loss_scale, 1024.0);
    EXPECT_DOUBLE_EQ(scaled.absmax, 64000.0);
    EXPECT_DOUBLE_EQ(scaled.saturated, 1.0 / 3);         // 64000 > 57344
    EXPECT_DOUBLE_EQ(scaled.underflow_subnormal, 0.0);   // 3.2e-5 > 2^-16
    EXPECT_DOUBLE_EQ(scaled.underflow_normal, 1.0 / 3);  // but < 2^-14
    EXPECT_DOUBLE_EQ(scaled.headroom_log2, std::log2(57344.0 / 64000.0));
    const auto& plain = rows[1];
    EXPECT_DOUBLE_EQ(plain.scale, 1.0);
    EXPECT_DOUBLE_EQ(plain.saturated, 0.0);
    EXPECT_DOUBLE_EQ(plain.underflow_subnormal, 1.0 / 3);  // 5e-7 < 2^-16
    EXPECT_EQ(std::string(run::toString(NumericsKind::Cast)), "cast");
    EXPECT_EQ(run::numericsKindFromString("cast"), NumericsKind::Cast);
    numerics::Observation again(NumericsKind::Cast, 5, 1.0, 1.0, run::kE4m3);
    EXPECT_THROW(again.add("x", t, 0.0), std::invalid_argument);
    EXPECT_THROW(again.add("x", t, std::nan("")), std::invalid_argument);
    EXPECT_THROW(numerics::Observation(NumericsKind::Grad, 1, -1.0, 1.0), std::invalid_argument);
}

// The ATen path against a reference computed value by value in long double: every
// format, the three dtypes, power-of-two multipliers and an FP8 layer's arbitrary
// scale, with values at and one step either side of every limit.
TEST(FormatNumerics, EveryFormatMatchesAReferenceValueByValue) {
    at::manual_seed(11);
    const auto spread =
        (at::randn({4000}, at::kDouble) * at::exp2(at::randint(-140, 130, {4000}, at::kDouble)))
            .to(at::kFloat);
    for (const auto& format : run::numberFormats()) {
        for (double multiplier : {1.0, 65536.0, 1.0 / 1024.0, 448.0 / 3.7, 0.3}) {
            // The limits as the multiplier moves them, and their float neighbours.
            std::vector<float> edges;
            for (double limit :
                 {format.smallest_subnormal, format.smallest_normal, format.largest}) {
                const double t = limit / multiplier;
                if (!(t < std::numeric_limits<float>::max())) {
                    continue;
                }
                float f = static_cast<float>(t);
                for (int k = 0; k < 3; ++k) {
                    f = std::nextafter(f, 0.0f);
                }
                for (int k = 0; k < 7; ++k, f = std::nextafter(f, INFINITY)) {
                    edges.push_back(f);
                    edges.push_back(-f);
                }
            }
            const auto values =
                at::cat({spread, at::tensor(edges, at::kFloat), at::tensor({0.0f, INFINITY})});
            for (auto dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
                SCOPED_TRACE(std::string(format.name) + ", " + numerics::dtypeName(dtype) +
                             ", multiplier " + std::to_string(multiplier));
                const auto t = values.to(dtype);
                const auto got = numerics::observe({{"x", t}}, NumericsKind::Grad, 1, multiplier,
                                                   1.0, format)[0];
                const auto held = t.to(at::kDouble).contiguous();
                const double* v = held.data_ptr<double>();
                int64_t sub = 0, normal = 0, saturated = 0, nonfinite = 0;
                for (int64_t i = 0; i < held.numel(); ++i) {
                    const long double a = std::fabs(static_cast<long double>(v[i])) * multiplier;
                    if (!std::isfinite(v[i])) {
                        ++nonfinite;
                        continue;
                    }
                    sub += a > 0 && a < format.smallest_subnormal;
                    normal += a > 0 && a < format.smallest_normal;
                    saturated += a > format.largest;
                }
                const double n = static_cast<double>(held.numel());
                EXPECT_EQ(got.nonfinite, nonfinite);
                EXPECT_DOUBLE_EQ(got.underflow_subnormal, static_cast<double>(sub) / n);
                EXPECT_DOUBLE_EQ(got.underflow_normal, static_cast<double>(normal) / n);
                EXPECT_DOUBLE_EQ(got.saturated, static_cast<double>(saturated) / n);
                EXPECT_EQ(got.format, format.name);
            }
        }
    }
}

// The limits as compared in a dtype: at or above, at or below, and above the limit,
// each a value of the dtype and exact.
TEST(FormatNumerics, LimitsRoundTowardTheirComparison) {
    EXPECT_EQ(numerics::roundUpIn(at::kHalf, 65504.0), 65504.0);
    EXPECT_EQ(numerics::nextAboveIn(at::kHalf, 65504.0), INFINITY);
    EXPECT_EQ(numerics::roundDownIn(at::kBFloat16, 65504.0), 65280.0);  // bf16 has 8 bits
    EXPECT_EQ(numerics::roundUpIn(at::kBFloat16, 65504.0), 65536.0);
    EXPECT_EQ(numerics::nextAboveIn(at::kBFloat16, 448.0), 450.0);
    EXPECT_EQ(numerics::roundUpIn(at::kHalf, 1e-9), std::ldexp(1.0, -24));
    EXPECT_EQ(numerics::roundDownIn(at::kHalf, 1e9), 65504.0);
    EXPECT_EQ(numerics::roundUpIn(at::kHalf, 1e9), INFINITY);
    EXPECT_EQ(numerics::roundUpIn(at::kFloat, 0.1), static_cast<double>(0.1f));  // 0.1f > 0.1
    EXPECT_EQ(numerics::roundDownIn(at::kFloat, 0.1),
              static_cast<double>(std::nextafter(0.1f, 0.0f)));
    EXPECT_EQ(numerics::roundUpIn(at::kDouble, 0.1), 0.1);
    // bf16 values between 65280 and 65536 do not exist: 65536 is past fp16's largest.
    const auto r = one(at::tensor({65280.0, 65536.0}, at::kFloat).to(at::kBFloat16), 1.0);
    EXPECT_DOUBLE_EQ(r.saturated, 0.5);
}

namespace {

struct Collect : run::TrainObserver {
    std::vector<run::StepRecord> steps;
    std::vector<run::EventRecord> events;
    std::vector<NumericsRecord> numerics;
    run::RunOutcome outcome;
    void onStep(const run::StepRecord& s) override { steps.push_back(s); }
    void onEvent(const run::EventRecord& e) override { events.push_back(e); }
    void onNumerics(const std::vector<NumericsRecord>& rows) override {
        numerics.insert(numerics.end(), rows.begin(), rows.end());
    }
    void onFinish(const run::RunOutcome& o) override { outcome = o; }
};

/// A small MLP on synthetic 1×8×8 images, trained on the CPU.
config::ExperimentSpec tinySpec(config::Precision precision) {
    config::ExperimentSpec s;
    s.name = "numerics";
    s.model.name = "mlp";
    s.model.width = 16;
    s.model.depth = 1;
    s.data.name = "synthetic-images";
    s.data.channels = 1;
    s.data.height = 8;
    s.data.width = 8;
    s.data.classes = 4;
    s.micro_batch = 16;
    s.micro_steps = 6;
    s.eval_interval = 0;
    s.eval_batches = 1;
    s.warmup_steps = 0;
    s.cpu_threads = 1;
    s.device = config::DeviceKind::Cpu;
    config::ArmSpec arm;
    arm.name = "arm";
    arm.precision = precision;
    s.arms = {arm};
    return s;
}

}  // namespace

// With numerics_every = 2 a run records every parameter's gradient and every module's
// output at steps 2, 4 and 6, leaves those steps out of the timing, and says what the
// records cost.
TEST(NumericsInTraining, EveryNthStepRecordsEachGradient) {
    for (auto precision : {config::Precision::Fp32, config::Precision::AmpBf16}) {
        auto spec = tinySpec(precision);
        spec.numerics_every = 2;
        Collect c;
        run::CancelToken cancel;
        const auto out = train::trainRun(spec, 0, 1, c, cancel);
        ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
        // mlp depth 1: layers.1 (hidden) and layers.3 (output), weight and bias each;
        // then the outputs of layers.0 (flatten) to layers.3.
        std::vector<NumericsRecord> grads, outputs;
        for (const auto& r : c.numerics) {
            (r.kind == NumericsKind::Grad ? grads : outputs).push_back(r);
        }
        ASSERT_EQ(grads.size(), 3u * 4u);
        ASSERT_EQ(outputs.size(), 3u * 4u);
        for (size_t i = 0; i < grads.size(); ++i) {
            const auto& r = grads[i];
            EXPECT_EQ(r.step, 2 * static_cast<int64_t>(i / 4 + 1));
            EXPECT_DOUBLE_EQ(r.loss_scale, 1.0);  // no scaler: the gradients as they are
            EXPECT_EQ(r.dtype, "float32");        // master gradients stay fp32
            // bf16's range for a bf16 arm; fp16's for fp32, the reference
            EXPECT_EQ(r.format, precision == config::Precision::AmpBf16 ? "bf16" : "fp16");
            EXPECT_GT(r.numel, 0);
            EXPECT_GT(r.absmax, 0.0);
            EXPECT_EQ(r.nonfinite, 0);
            EXPECT_TRUE(std::isfinite(r.headroom_log2));
        }
        EXPECT_EQ(grads[0].name, "layers.1.weight");
        EXPECT_EQ(grads[3].name, "layers.3.bias");
        EXPECT_EQ(outputs[0].name, "layers.0");
        EXPECT_EQ(outputs[3].name, "layers.3");
        EXPECT_EQ(outputs[3].step, 2);
        EXPECT_EQ(outputs[3].numel, 16 * 4);  // micro-batch × classes
        EXPECT_EQ(outputs[3].format, grads[0].format);
        EXPECT_EQ(outputs[1].dtype,
                  precision == config::Precision::AmpBf16 ? "bfloat16" : "float32");
        ASSERT_EQ(c.steps.size(), 6u);
        for (const auto& s : c.steps) {
            EXPECT_EQ(s.timed, s.step % 2 == 1) << s.step;
        }
        bool cost = false;
        for (const auto& e : c.events) {
            cost = cost || e.message.find("per-layer numerics every 2 steps: 3 records") == 0;
        }
        EXPECT_TRUE(cost);
    }
}

// Off by default: no records, every step timed.
TEST(NumericsInTraining, OffByDefault) {
    auto spec = tinySpec(config::Precision::Fp32);
    Collect c;
    run::CancelToken cancel;
    ASSERT_EQ(train::trainRun(spec, 0, 1, c, cancel).status, run::RunStatus::Finished);
    EXPECT_TRUE(c.numerics.empty());
    for (const auto& s : c.steps) {
        EXPECT_TRUE(s.timed);
    }
}

// ---------------------------------------------------------------- FP32 islands

namespace {

/// Runs one forward of `model` under CPU bf16 autocast through a tap that observes
/// every module output, and returns the outputs' records by path.
std::map<std::string, NumericsRecord> outputsUnderAutocast(models::Network& model,
                                                           const std::string& islands,
                                                           const at::Tensor& x) {
    numerics::NumericsTap tap(numerics::splitPatterns(islands));
    model.setTap(&tap);
    tap.observe(1, 1.0);
    {
        autocast::AutocastGuard autocast(c10::DeviceType::CPU, at::kBFloat16);
        model.forward(x);
    }
    std::map<std::string, NumericsRecord> out;
    for (auto& r : tap.takeObservation().value().finish()) {
        out[r.name] = r;
    }
    model.setTap(nullptr);
    return out;
}

/// A decoder of width 16, two heads, `depth` blocks, for tokenShape().
config::ModelSpec tinyDecoder(int depth) {
    config::ModelSpec spec;
    spec.name = "transformer";
    spec.width = 16;
    spec.depth = depth;
    spec.heads = 2;
    return spec;
}

/// Sequences of 8 tokens from a vocabulary of 32.
data::InputShape tokenShape() {
    data::InputShape shape;
    shape.seq_len = 8;
    shape.vocab = 32;
    return shape;
}

data::InputShape imageShape() {
    data::InputShape shape;
    shape.channels = 1;
    shape.height = 8;
    shape.width = 8;
    shape.classes = 4;
    return shape;
}

}  // namespace

// An island runs its module with autocast off and its input in fp32: its output is
// fp32 while the modules around it compute in bf16.
TEST(Fp32Islands, TheIslandStaysFp32UnderAutocast) {
    config::ModelSpec spec;
    spec.name = "mlp";
    spec.width = 16;
    spec.depth = 2;
    auto model = models::makeModel(spec, imageShape());
    const auto x = at::randn({4, 1, 8, 8});
    const auto plain = outputsUnderAutocast(*model, "", x);
    EXPECT_EQ(plain.at("layers.1").dtype, "bfloat16");
    EXPECT_EQ(plain.at("layers.5").dtype, "bfloat16");
    const auto island = outputsUnderAutocast(*model, "layers.5", x);
    EXPECT_EQ(island.at("layers.1").dtype, "bfloat16");
    EXPECT_EQ(island.at("layers.3").dtype, "bfloat16");
    EXPECT_EQ(island.at("layers.5").dtype, "float32");  // the head: fp32 inside autocast
    // Leaving the autocast region restores the state it found.
    EXPECT_TRUE(autocast::AutocastGuard::isEnabled(c10::DeviceType::CPU) == false);
}

// Glob patterns pick modules inside blocks; a whole block as an island runs every
// module in it in fp32.
TEST(Fp32Islands, PatternsPickModulesOfATransformer) {
    auto model = models::makeModel(tinyDecoder(2), tokenShape());
    const auto tokens = at::randint(0, 32, {2, 8}, at::kLong);
    const auto qkv = outputsUnderAutocast(*model, "blocks.*.qkv", tokens);
    EXPECT_EQ(qkv.at("blocks.0.qkv").dtype, "float32");
    EXPECT_EQ(qkv.at("blocks.1.qkv").dtype, "float32");
    EXPECT_EQ(qkv.at("blocks.0.fc1").dtype, "bfloat16");
    EXPECT_EQ(qkv.at("head").dtype, "bfloat16");
    const auto block = outputsUnderAutocast(*model, "blocks.1; head", tokens);
    EXPECT_EQ(block.at("blocks.0.fc1").dtype, "bfloat16");
    EXPECT_EQ(block.at("blocks.1.fc1").dtype, "float32");
    EXPECT_EQ(block.at("blocks.1.qkv").dtype, "float32");
    EXPECT_EQ(block.at("head").dtype, "float32");
    // Every tap point is observed, in forward order.
    const auto points = model->tapPoints();
    EXPECT_EQ(points.front(), "tok");
    EXPECT_EQ(points.back(), "head");
    EXPECT_EQ(block.size(), points.size());
}

// A pattern that matches no module stops the run before training, naming the pattern
// and listing module names; islands on a model file are refused the same way.
TEST(Fp32Islands, APatternThatMatchesNothingIsNamed) {
    auto spec = tinySpec(config::Precision::AmpBf16);
    spec.arms[0].fp32_modules = "layers.1;blocks.*.attn";
    Collect c;
    run::CancelToken cancel;
    const auto out = train::trainRun(spec, 0, 1, c, cancel);
    EXPECT_EQ(out.status, run::RunStatus::Failed);
    EXPECT_EQ(out.failure, run::FailureKind::Setup);
    EXPECT_NE(out.error.find("'blocks.*.attn' matches no module"), std::string::npos) << out.error;
    EXPECT_EQ(out.error.find("'layers.1'"), std::string::npos) << out.error;
    EXPECT_NE(out.error.find("layers.0, layers.1, layers.2, layers.3"), std::string::npos)
        << out.error;
    EXPECT_TRUE(c.steps.empty());
}

// An island arm trains, says which modules are islands, and records its head's
// output in fp32 while the hidden layer's is bf16.
TEST(Fp32Islands, AnIslandArmTrainsAndRecordsItsOutputsDtypes) {
    auto spec = tinySpec(config::Precision::AmpBf16);
    spec.arms[0].fp32_modules = "layers.3";
    spec.numerics_every = 3;
    Collect c;
    run::CancelToken cancel;
    const auto out = train::trainRun(spec, 0, 1, c, cancel);
    ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
    bool said = false;
    for (const auto& e : c.events) {
        said = said || e.message == "FP32 islands (autocast off, inputs in fp32): layers.3";
    }
    EXPECT_TRUE(said);
    std::map<std::string, std::string> dtype;
    for (const auto& r : c.numerics) {
        if (r.kind == NumericsKind::Activation && r.step == 3) {
            dtype[r.name] = r.dtype;
        }
    }
    EXPECT_EQ(dtype["layers.1"], "bfloat16");
    EXPECT_EQ(dtype["layers.3"], "float32");
}

// ---------------------------------------------------------------- where it broke

namespace {

struct Locator {
    config::ExperimentSpec spec = tinySpec(config::Precision::Fp32);
    std::shared_ptr<models::Network> model;
    std::unique_ptr<train::NumericsRecorder> recorder;
    at::Tensor x = at::randn({8, 1, 8, 8});
    at::Tensor y = at::randint(0, 4, {8}, at::kLong);

    Locator() {
        spec.numerics_every = 10;
        config::ModelSpec m;
        m.name = "mlp";
        m.width = 16;
        m.depth = 2;  // layers.1, .3, .5 linear; .2, .4 ReLU
        model = models::makeModel(m, imageShape());
        recorder = std::make_unique<train::NumericsRecorder>(spec, spec.arms[0],
                                                             spec.arms[0].precision, *model);
    }
    std::string locate(int64_t step, double scale) {
        auto loss_of = [this](const at::Tensor& in, const at::Tensor& target) {
            return at::cross_entropy_loss(model->forward(in), target);
        };
        return recorder->locate(step, {{x, y}}, loss_of, scale, model->parameters());
    }
    void setBias(const std::string& name, double value) {
        at::NoGradGuard no_grad;
        for (auto& p : model->named_parameters()) {
            if (p.key() == name) {
                p.value().fill_(value);
            }
        }
    }
};

}  // namespace

// An inf injected into a named layer's output is found there, the first in forward
// order (the ReLU after it and the layers after that hold inf too).
TEST(OverflowLocator, NamesTheLayerWhoseOutputWentNonFinite) {
    Locator l;
    l.setBias("layers.3.bias", std::numeric_limits<double>::infinity());
    const std::string message = l.locate(812, 65536.0);
    EXPECT_EQ(message,
              "overflow first in `layers.3` output, float32, at step 812, loss scale 65536");
    const auto origin = run::overflowOriginFromMessage(message);
    ASSERT_TRUE(origin);
    EXPECT_EQ(origin->name, "layers.3");
    EXPECT_EQ(origin->where, "output");
    EXPECT_EQ(origin->dtype, "float32");
    EXPECT_EQ(origin->step, 812);
    EXPECT_DOUBLE_EQ(origin->loss_scale, 65536.0);
    for (const auto& p : l.model->parameters()) {
        EXPECT_FALSE(p.grad().defined());  // the replay leaves no gradients behind
    }
}

// Finite outputs but a loss scale that overflows the backward: the gradient flowing
// into the last layer's output is the first non-finite one.
TEST(OverflowLocator, NamesTheFirstGradientWhenTheForwardStayedFinite) {
    Locator l;
    const std::string message = l.locate(3, 1e39);
    EXPECT_EQ(message.rfind("overflow first in `layers.5` output gradient, float32, at step 3", 0),
              0u)
        << message;
    const auto origin = run::overflowOriginFromMessage(message);
    ASSERT_TRUE(origin);
    EXPECT_EQ(origin->where, "output gradient");
}

// A finite replay says so; messages that are not the locator's are not read as one.
TEST(OverflowLocator, AFiniteReplayIsSaidAndOtherMessagesAreNotOrigins) {
    Locator l;
    const std::string message = l.locate(4, 1.0);
    EXPECT_NE(message.find("stayed finite"), std::string::npos) << message;
    EXPECT_FALSE(run::overflowOriginFromMessage(message));
    run::OverflowOrigin loss;
    loss.step = 9;
    loss.where = "loss";
    loss.dtype = "float32";
    loss.loss_scale = 1;
    EXPECT_EQ(run::describe(loss), "overflow first in the loss, float32, at step 9, loss scale 1");
    EXPECT_EQ(run::overflowOriginFromMessage(run::describe(loss))->where, "loss");
}

// In training: an arm that diverges (a learning rate of 1e30) has its first non-finite
// step replayed, and the event names a module before the run fails on the NaN loss.
TEST(OverflowLocator, ADivergingRunSaysWhereItBroke) {
    auto spec = tinySpec(config::Precision::Fp32);
    spec.numerics_every = 100;  // numerics on; the locator works on every step
    spec.optimizer.lr = 1e30;
    spec.micro_steps = 20;
    Collect c;
    run::CancelToken cancel;
    const auto out = train::trainRun(spec, 0, 1, c, cancel);
    EXPECT_EQ(out.failure, run::FailureKind::NonFinite) << out.error;
    std::optional<run::OverflowOrigin> origin;
    for (const auto& e : c.events) {
        if (!origin) {
            origin = run::overflowOriginFromMessage(e.message);
        }
    }
    ASSERT_TRUE(origin);
    EXPECT_FALSE(origin->name.empty());
    EXPECT_GE(origin->step, 2);
}

// The check before training names an island pattern that matches no module, with the
// arm's field, before anything is written.
TEST(Fp32Islands, TheCheckBeforeTrainingNamesABadPattern) {
    auto spec = tinySpec(config::Precision::AmpBf16);
    spec.arms[0].fp32_modules = "head";
    const auto report = train::checkSetup(spec, /*run_batch=*/false);
    ASSERT_EQ(report.problems.size(), 1u) << report.problemText();
    EXPECT_EQ(report.problems[0].field, "arms[0].fp32_modules");
    EXPECT_NE(report.problems[0].message.find("'head' matches no module"), std::string::npos)
        << report.problems[0].message;
    spec.arms[0].fp32_modules = "layers.3";
    EXPECT_TRUE(train::checkSetup(spec, false).ok());
}

// A tensor larger than one slice (and one not contiguous) gives the same statistics as
// its values computed at once.
TEST(Fp16Numerics, LargeAndStridedTensorsAreReadInSlices) {
    auto big = at::full({5000, 4000}, 1.0f);  // 20M values: two slices of rows
    big.index_put_({0, 0}, 1e-9f);
    big.index_put_({4999, 3999}, 1e-6f);
    big.index_put_({2500, 7}, 4.0f);
    const auto r = one(big, 1.0);
    EXPECT_DOUBLE_EQ(r.underflow_subnormal, 1.0 / 20e6);
    EXPECT_DOUBLE_EQ(r.underflow_normal, 2.0 / 20e6);
    EXPECT_DOUBLE_EQ(r.absmax, 4.0);
    big.index_put_({4999, 0}, std::nanf(""));
    EXPECT_EQ(one(big, 1.0).nonfinite, 1);
    const auto strided = at::tensor({1e-9f, 1.0f, 2.0f, 1e-9f}).view({2, 2}).t();
    EXPECT_DOUBLE_EQ(one(strided, 1.0).underflow_subnormal, 0.5);
    EXPECT_DOUBLE_EQ(one(at::tensor(3.0f), 1.0).absmax, 3.0);  // a scalar
}

// A ResNet's blocks show their layers and shortcut, and any of them can be an island.
TEST(Fp32Islands, ResNetBlocksShowTheirLayers) {
    config::ModelSpec spec;
    spec.name = "resnet";
    spec.width = 8;
    spec.blocks = {1, 1};
    auto model = models::makeModel(spec, imageShape());
    const auto points = model->tapPoints();
    EXPECT_NE(std::find(points.begin(), points.end(), "blocks.0.body.0"), points.end());
    EXPECT_NE(std::find(points.begin(), points.end(), "blocks.1.shortcut"), points.end());
    const auto out = outputsUnderAutocast(*model, "blocks.1.body.0", at::randn({2, 1, 8, 8}));
    EXPECT_EQ(out.at("blocks.0.body.0").dtype, "bfloat16");
    EXPECT_EQ(out.at("blocks.1.body.0").dtype, "float32");
    EXPECT_EQ(out.size(), points.size());
}

// A decoder's attention is a module of its own (`blocks.N.attn`), listed in the model's
// tree and pickable as an island; "unscaled" leaves out the 1/sqrt(head size), so it
// equals the scaled attention of queries made sqrt(head size) times larger.
TEST(Fp32Islands, TheDecodersAttentionIsAModuleThatCanBeUnscaled) {
    config::ModelSpec spec = tinyDecoder(1);
    const data::InputShape shape = tokenShape();
    auto model = models::makeModel(spec, shape);
    const auto parts = model->parts();
    const auto attn = std::find_if(parts.begin(), parts.end(), [](const models::Network::Part& p) {
        return p.path == "blocks.0.attn";
    });
    ASSERT_NE(attn, parts.end());
    EXPECT_EQ(attn->type, "CausalAttention");
    EXPECT_EQ(attn->parameters, 0);
    const auto tokens = at::randint(0, 32, {2, 8}, at::kLong);
    EXPECT_EQ(outputsUnderAutocast(*model, "", tokens).at("blocks.0.attn").dtype, "bfloat16");
    EXPECT_EQ(outputsUnderAutocast(*model, "blocks.*.attn", tokens).at("blocks.0.attn").dtype,
              "float32");

    models::CausalAttention scaled(2, 0.0, true), unscaled(2, 0.0, false);
    const auto qkv = at::randn({2, 8, 48});
    auto larger_q = qkv.clone();
    larger_q.narrow(2, 0, 16).mul_(std::sqrt(8.0));  // head size 8
    const auto a = unscaled->forward(qkv), b = scaled->forward(larger_q);
    EXPECT_EQ(a.sizes(), (std::vector<int64_t>{2, 8, 16}));
    EXPECT_TRUE(at::allclose(a, b, 1e-5, 1e-5));
    EXPECT_FALSE(at::allclose(a, scaled->forward(qkv), 1e-3, 1e-3));

    spec.init_std = 1.0;  // the weights' spread is the spec's
    auto wide = models::makeModel(spec, shape);
    std::vector<at::Tensor> weights;
    for (const auto& p : wide->named_parameters()) {
        if (p.value().dim() == 2) {
            weights.push_back(p.value().detach().reshape({-1}));
        }
    }
    EXPECT_NEAR(at::cat(weights).std().item<double>(), 1.0, 0.05);  // about 4,000 values
}

// The run's note names the island modules while they are few, and counts them when a
// pattern covers many (every block of a decoder).
TEST(Fp32Islands, TheNoteCountsManyIslands) {
    config::ExperimentSpec spec;
    spec.model = tinyDecoder(4);
    config::ArmSpec arm{"islands", config::Precision::AmpBf16};
    arm.fp32_modules = "blocks.*";
    auto model = models::makeModel(spec.model, tokenShape());
    const auto notes = train::NumericsRecorder(spec, arm, arm.precision, *model).startNotes();
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0].rfind("FP32 islands (autocast off, inputs in fp32): blocks.0.ln1, ", 0), 0u)
        << notes[0];
    EXPECT_NE(notes[0].find(", ... (32 modules in all)"), std::string::npos) << notes[0];
    arm.fp32_modules = "head;blocks.1.attn";
    auto small = models::makeModel(spec.model, tokenShape());
    EXPECT_EQ(train::NumericsRecorder(spec, arm, arm.precision, *small).startNotes().at(0),
              "FP32 islands (autocast off, inputs in fp32): blocks.1.attn, head");
}
