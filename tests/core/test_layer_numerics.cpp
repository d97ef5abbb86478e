// Per-layer numerics summed up over a run: the worst layers by underflow and headroom.
#include <gtest/gtest.h>

#include <cmath>

#include "core/analysis/Finding.h"
#include "core/analysis/Health.h"
#include "core/analysis/IslandCost.h"
#include "core/analysis/LayerNumerics.h"
#include "core/config/Validation.h"

using namespace ampbench;
using run::NumericsKind;
using run::NumericsRecord;

namespace {

NumericsRecord row(int64_t step, const std::string& name, double sub, double normal,
                   double headroom, int64_t nonfinite = 0, NumericsKind kind = NumericsKind::Grad) {
    NumericsRecord r;
    r.step = step;
    r.kind = kind;
    r.name = name;
    r.underflow_subnormal = sub;
    r.underflow_normal = normal;
    r.headroom_log2 = headroom;
    r.nonfinite = nonfinite;
    r.numel = 100;
    r.dtype = "float32";
    return r;
}

}  // namespace

TEST(LayerNumerics, WorstLayersByUnderflowAndHeadroom) {
    const std::vector<NumericsRecord> rows = {
        row(10, "a.weight", 0.10, 0.30, 12.0),
        row(20, "a.weight", 0.30, 0.50, 9.0),
        row(10, "b.weight", 0.00, 0.20, 3.0),
        row(20, "b.weight", 0.00, 0.10, 4.0),
        row(10, "c.weight", 0.00, 0.00, 20.0),
        row(20, "c.weight", 0.00, 0.00, -INFINITY, 4),
        row(10, "blocks.0", 0.0, 0.0, 1.5, 0, NumericsKind::Activation),
    };
    const auto s = analysis::summarizeNumerics(rows);
    ASSERT_EQ(s.layers.size(), 4u);
    EXPECT_EQ(s.steps, (std::vector<int64_t>{10, 20}));
    EXPECT_EQ(s.layers[0].name, "a.weight");
    EXPECT_EQ(s.layers[0].observations, 2);
    EXPECT_DOUBLE_EQ(s.layers[0].max_underflow_subnormal, 0.30);
    EXPECT_DOUBLE_EQ(s.layers[0].mean_underflow_subnormal, 0.20);
    EXPECT_DOUBLE_EQ(s.layers[0].min_headroom_log2, 9.0);
    EXPECT_EQ(s.layers[0].min_headroom_step, 20);
    EXPECT_EQ(s.layers[3].kind, NumericsKind::Activation);  // outputs after gradients

    const auto under = analysis::worstUnderflow(s, 10);
    ASSERT_EQ(under.size(), 2u);  // c has none
    EXPECT_EQ(under[0].name, "a.weight");
    EXPECT_EQ(under[1].name, "b.weight");

    const auto head = analysis::leastHeadroom(s, 2);
    ASSERT_EQ(head.size(), 2u);
    EXPECT_EQ(head[0].name, "c.weight");  // non-finite first
    EXPECT_EQ(head[0].nonfinite_steps, 1);
    EXPECT_EQ(head[0].first_nonfinite_step, 20);
    EXPECT_EQ(head[1].name, "blocks.0");

    const std::string text = analysis::worstLayersText(s, 5);
    EXPECT_NE(text.find("a.weight (grad)"), std::string::npos) << text;
    EXPECT_NE(text.find("none (non-finite)"), std::string::npos) << text;
    EXPECT_NE(text.find("blocks.0 (output)"), std::string::npos) << text;
}

TEST(LayerNumerics, HeadroomText) {
    EXPECT_EQ(analysis::formatHeadroom(12.345), "12.3");
    EXPECT_EQ(analysis::formatHeadroom(-INFINITY), "none (non-finite)");
    EXPECT_EQ(analysis::formatHeadroom(INFINITY), "\u221e (all zero)");
}

// The locator's events reach the arm's health, and the verdict's finding cites the
// place, dtype, step and loss scale.
TEST(LayerNumerics, LocatedOverflowsAreCitedByTheVerdict) {
    analysis::RunData run;
    run.row.seed = 2;
    run::OverflowOrigin o;
    o.step = 812;
    o.name = "blocks.3.qkv";
    o.where = "output";
    o.dtype = "float16";
    o.loss_scale = 65536;
    run.events.push_back({812, run::EventKind::Warning, run::describe(o), 0.0});
    run.events.push_back({900, run::EventKind::Warning, "something else", 0.0});
    const auto h = analysis::armHealth({&run});
    ASSERT_EQ(h.overflow_origins.size(), 1u);
    EXPECT_EQ(h.overflow_origins[0].seed, 2u);
    EXPECT_EQ(h.overflow_origins[0].origin.name, "blocks.3.qkv");

    analysis::Finding f;
    f.code = analysis::FindingCode::OverflowOrigin;
    using K = analysis::FindingKey;
    f.values = {
        {K::Step, 812}, {K::LossScale, 65536}, {K::Seed, 2}, {K::Count, 3}, {K::Located, 5}};
    f.names = {{K::Name, "blocks.3.qkv"}, {K::Where, "output"}, {K::Dtype, "float16"}};
    EXPECT_EQ(analysis::describe(f),
              "overflow first in `blocks.3.qkv` output (float16) at step 812, loss scale 65536 "
              "(seed 2; 3 of 5 replayed non-finite steps broke there)");
}

// The heatmap's grid: a row per tensor, a column per step, missing cells null; the
// tooltip gives the cell's numbers.
TEST(LayerNumerics, GridForTheHeatmap) {
    const std::vector<NumericsRecord> rows = {
        row(10, "b.weight", 0.0, 0.25, 3.0), row(20, "b.weight", 0.5, 0.75, 4.0),
        row(20, "a.weight", 0.0, 0.0, 7.5),
        row(10, "out", 0.0, 0.0, 1.0, 0, NumericsKind::Activation)};
    const auto g = analysis::numericsGrid(rows);
    EXPECT_EQ(g.names,
              (std::vector<std::string>{"a.weight (grad)", "b.weight (grad)", "out (output)"}));
    EXPECT_EQ(g.steps, (std::vector<int64_t>{10, 20}));
    EXPECT_EQ(g.cells[0][0], nullptr);  // a.weight not observed at step 10
    ASSERT_NE(g.cells[1][1], nullptr);
    EXPECT_DOUBLE_EQ(
        analysis::metricValue(*g.cells[1][1], analysis::NumericsMetric::UnderflowNormal), 0.75);
    EXPECT_DOUBLE_EQ(analysis::metricValue(*g.cells[1][0], analysis::NumericsMetric::Headroom),
                     3.0);
    const std::string text = analysis::cellText(g, 1, 1);
    EXPECT_NE(text.find("b.weight (grad), step 20"), std::string::npos) << text;
    EXPECT_NE(text.find("< 2^-24 50.00%"), std::string::npos) << text;
    EXPECT_NE(text.find("headroom 4.0"), std::string::npos) << text;
    EXPECT_EQ(analysis::cellText(g, 0, 0), "a.weight (grad), step 10: not observed");
}

// An FP8 arm's rows: bf16 gradients and e4m3/e5m2 casts. Each row of the worst-layer
// tables names its format and saturated share; the cast tensors are listed with their
// format, scale, abs-max, saturated and underflow shares.
TEST(LayerNumerics, CastTensorsAndFormatsAreNamed) {
    auto cast = [](int64_t step, const std::string& name, const std::string& format,
                   double saturated, double scale) {
        NumericsRecord r = row(step, name, 0.01, 0.02, 0.5, 0, NumericsKind::Cast);
        r.format = format;
        r.saturated = saturated;
        r.scale = scale;
        r.absmax = 300.0 * static_cast<double>(step) / 10.0;
        r.dtype = "bfloat16";
        return r;
    };
    NumericsRecord grad = row(10, "head.weight", 0.0, 0.0, 120.0);
    grad.format = "bf16";
    const std::vector<NumericsRecord> rows = {
        grad, cast(10, "blocks.0.qkv:input", "e4m3", 0.0, 2.0),
        cast(20, "blocks.0.qkv:input", "e4m3", 0.25, 0.5),
        cast(20, "blocks.0.qkv:grad_output", "e5m2", 0.0, 1024.0)};
    const auto s = analysis::summarizeNumerics(rows);
    ASSERT_EQ(s.layers.size(), 3u);
    EXPECT_EQ(analysis::formatsOf(s), (std::vector<std::string>{"bf16", "e5m2", "e4m3"}));
    const auto casts = analysis::castTensors(s);
    ASSERT_EQ(casts.size(), 2u);
    EXPECT_EQ(casts[1].name, "blocks.0.qkv:input");
    EXPECT_EQ(casts[1].format, "e4m3");
    EXPECT_DOUBLE_EQ(casts[1].max_saturated, 0.25);
    EXPECT_DOUBLE_EQ(casts[1].mean_saturated, 0.125);
    EXPECT_DOUBLE_EQ(casts[1].last_scale, 0.5);  // its latest step's
    EXPECT_DOUBLE_EQ(casts[1].max_absmax, 600.0);
    const std::string text = analysis::worstLayersText(s, 5);
    EXPECT_NE(text.find("log2(largest/absmax) least"), std::string::npos) << text;
    EXPECT_NE(text.find("e4m3's largest, 448"), std::string::npos) << text;
    EXPECT_NE(text.find("bf16's largest, 3.38953e+38"), std::string::npos) << text;
    EXPECT_NE(text.find("blocks.0.qkv:input (cast)"), std::string::npos) << text;
    EXPECT_NE(text.find("saturated worst"), std::string::npos) << text;
    EXPECT_NE(text.find("25.00%"), std::string::npos) << text;
    EXPECT_NE(text.find("abs-max scaled"), std::string::npos) << text;
    EXPECT_EQ(text.find("65504"), std::string::npos) << text;  // no fp16 row here
    const auto g = analysis::numericsGrid(rows);
    EXPECT_EQ(g.names[2], "blocks.0.qkv:input (cast)");
    const std::string cell = analysis::cellText(g, 2, 1);
    EXPECT_NE(cell.find("e4m3: < 2^-9 1.00%, < 2^-6 2.00%, saturated 25.00%"), std::string::npos)
        << cell;
    EXPECT_NE(cell.find("(to 448)"), std::string::npos) << cell;
    EXPECT_NE(cell.find("scale 0.5"), std::string::npos) << cell;
    EXPECT_DOUBLE_EQ(analysis::metricValue(*g.cells[2][1], analysis::NumericsMetric::Saturated),
                     0.25);
}

// Rows of one format put its limits in the column heads; the metric labels name the
// formats present, never a fixed 65504.
TEST(LayerNumerics, LabelsNameTheFormatsPresent) {
    const auto fp16 = analysis::summarizeNumerics({row(10, "w", 0.1, 0.2, 3.0)});
    const std::string text = analysis::worstLayersText(fp16, 5);
    EXPECT_NE(text.find("log2(65504/absmax) least"), std::string::npos) << text;
    EXPECT_NE(text.find("< 2^-24 worst"), std::string::npos) << text;
    EXPECT_NE(text.find("fp16's largest, 65504"), std::string::npos) << text;
    using analysis::NumericsMetric;
    EXPECT_EQ(analysis::metricLabel(NumericsMetric::UnderflowSubnormal, {"fp16"}),
              "share under fp16's smallest subnormal (2^-24)");
    EXPECT_EQ(analysis::metricLabel(NumericsMetric::UnderflowNormal, {"bf16", "e4m3"}),
              "share under bf16's smallest normal (2^-126) / e4m3's smallest normal (2^-6)");
    EXPECT_EQ(analysis::metricLabel(NumericsMetric::Headroom, {"e5m2"}),
              "headroom to e5m2's largest, 57344 (log2 largest/abs-max)");
    EXPECT_EQ(analysis::metricLabel(NumericsMetric::Saturated, {"e4m3"}),
              "saturated share: past e4m3's largest, 448");
    EXPECT_EQ(analysis::metricLabel(NumericsMetric::Headroom, {}),
              "headroom to fp16's largest, 65504 (log2 largest/abs-max)");
    EXPECT_EQ(analysis::headroomTarget("fp16"), "headroom to fp16's largest, 65504");
    EXPECT_EQ(analysis::headroomTarget("e8m0"), "headroom to e8m0's largest");  // unknown: no value
    const auto none =
        analysis::worstLayersText(analysis::summarizeNumerics({row(10, "w", 0.0, 0.0, 3.0)}), 5);
    EXPECT_NE(none.find("no value under its format's smallest normal (fp16)"), std::string::npos)
        << none;
}

// FP32 islands on an arm without autocast are a warning (the run goes ahead).
TEST(LayerNumerics, IslandsOnAnArmWithoutAutocastAreAWarning) {
    config::ExperimentSpec spec;
    config::ArmSpec fp32;
    fp32.name = "fp32";
    fp32.fp32_modules = "head";
    config::ArmSpec amp = fp32;
    amp.name = "amp";
    amp.precision = config::Precision::Amp;
    spec.arms = {fp32, amp};
    const auto w = config::warnings(spec);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].field, "arms[0].fp32_modules");
    EXPECT_NE(w[0].message.find("has no effect on a fp32 arm"), std::string::npos) << w[0].message;
    EXPECT_TRUE(config::validate(spec).empty());
}

// FP32 islands are costed against the arm that differs only by them.
TEST(LayerNumerics, IslandCostAgainstThePlainArm) {
    config::ExperimentSpec spec;
    config::ArmSpec fp32, amp, head, accum;
    fp32.name = "fp32";
    amp.name = "amp";
    amp.precision = config::Precision::AmpFp16;
    head = amp;
    head.name = "amp-head";
    head.fp32_modules = "head";
    accum = head;
    accum.name = "accum-head";
    accum.accumulation = 4;
    spec.arms = {fp32, amp, head, accum};
    analysis::ExperimentAnalysis a;
    auto arm = [](const std::string& name, double ms, int64_t mem) {
        analysis::ArmSummary s;
        s.arm = name;
        s.median_step_ms = ms;
        s.ms_per_sample = ms / 64;
        s.peak_mem = mem;
        return s;
    };
    a.arms = {arm("fp32", 30, 1000), arm("amp", 20, 800), arm("amp-head", 25, 840),
              arm("accum-head", 100, 700)};
    const auto costs = analysis::islandCosts(spec, a);
    ASSERT_EQ(costs.size(), 2u);
    EXPECT_EQ(costs[0].arm, "amp-head");
    EXPECT_EQ(costs[0].plain, "amp");
    EXPECT_DOUBLE_EQ(costs[0].step_ratio, 1.25);
    EXPECT_DOUBLE_EQ(costs[0].memory_ratio, 1.05);
    EXPECT_EQ(costs[1].plain, "");  // no accumulation-4 arm without islands
    EXPECT_TRUE(std::isnan(costs[1].step_ratio));
}
