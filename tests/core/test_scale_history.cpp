// An FP8 arm's per-tensor scales over the steps: roles from the names, the median and
// band of each role, the saturated tensors worst first, and gaps where a scale is no
// point on a log2 axis.
#include <gtest/gtest.h>

#include <cmath>

#include "core/analysis/ScaleHistory.h"

using namespace ampbench;

namespace {

run::NumericsRecord cast(int64_t step, const std::string& name, double scale,
                         double saturated = 0) {
    run::NumericsRecord r;
    r.step = step;
    r.kind = run::NumericsKind::Cast;
    r.name = name;
    r.format = "e4m3";
    r.scale = scale;
    r.saturated = saturated;
    return r;
}

}  // namespace

TEST(ScaleHistory, RolesComeFromTheNamesAndOtherKindsAreLeftOut) {
    EXPECT_EQ(analysis::castRoleOf("blocks.0.qkv:input"), analysis::CastRole::Input);
    EXPECT_EQ(analysis::castRoleOf("blocks.0.qkv:weight"), analysis::CastRole::Weight);
    EXPECT_EQ(analysis::castRoleOf("blocks.0.qkv:grad_output"), analysis::CastRole::GradOutput);
    EXPECT_EQ(analysis::castRoleOf("blocks.0.qkv"), analysis::CastRole::Other);
    run::NumericsRecord grad;
    grad.step = 5;
    grad.name = "head.weight";
    grad.scale = 8;
    EXPECT_TRUE(analysis::scaleHistory({grad}).empty());
    EXPECT_EQ(analysis::scaleHistorySummary(analysis::scaleHistory({grad}), 3),
              "no FP8 cast recorded");
}

TEST(ScaleHistory, BandsHoldEachRolesMedianAndRangeWithGapsWhereNotAPoint) {
    const auto h = analysis::scaleHistory({
        cast(20, "b.1:weight", 0.25),
        cast(10, "b.0:input", 1),
        cast(10, "b.1:input", 4),
        cast(10, "b.2:input", 16),
        cast(20, "b.0:input", 2),
        cast(20, "b.1:input", 0),  // no scale to take the log of: a gap, not -inf
        cast(20, "b.2:input", NAN),
    });
    ASSERT_EQ(h.steps, (std::vector<int64_t>{10, 20}));
    ASSERT_EQ(h.curves.size(), 4u);
    EXPECT_EQ(h.curves[0].name, "b.0:input");  // by role, then name
    EXPECT_EQ(h.curves[3].name, "b.1:weight");
    ASSERT_EQ(h.bands.size(), 2u);
    const auto& input = h.bands[0];
    EXPECT_EQ(input.tensors, 3u);
    EXPECT_DOUBLE_EQ(input.median[0], 2.0);
    EXPECT_DOUBLE_EQ(input.min[0], 0.0);
    EXPECT_DOUBLE_EQ(input.max[0], 4.0);
    EXPECT_EQ(h.curves[input.max_curve[0]].name, "b.2:input");
    EXPECT_TRUE(std::isnan(h.curves[1].log2_scale[1]));
    EXPECT_DOUBLE_EQ(input.median[1], 1.0);  // only b.0 left at step 20
    const auto& weight = h.bands[1];
    EXPECT_TRUE(std::isnan(weight.median[0]));  // not observed at step 10
    EXPECT_DOUBLE_EQ(weight.median[1], -2.0);
    const std::string text = analysis::scaleStepText(h, 0);
    EXPECT_NE(text.find("input (3 tensors): median 2^2, least 2^0 (b.0:input), largest 2^4 "
                        "(b.2:input)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("weight (1 tensor): not observed"), std::string::npos) << text;
    EXPECT_EQ(analysis::scaleStepText(h, 2), "");
}

TEST(ScaleHistory, SaturatedTensorsAreNamedWorstFirstAndTheRestCounted) {
    const auto h = analysis::scaleHistory({
        cast(1, "a:input", 1, 0.01),
        cast(2, "a:input", 1, 0.01),
        cast(1, "b:weight", 1, 0.30),
        cast(1, "c:grad_output", 1, 0.01),
        cast(1, "d:input", 1, 0),
    });
    ASSERT_EQ(h.saturated.size(), 3u);
    EXPECT_EQ(h.curves[h.saturated[0]].name, "b:weight");  // largest share
    EXPECT_EQ(h.curves[h.saturated[1]].name, "a:input");   // then most steps
    EXPECT_EQ(h.curves[h.saturated[2]].name, "c:grad_output");
    EXPECT_EQ(h.curves[h.saturated[1]].saturated_steps, 2);
    const std::string summary = analysis::scaleHistorySummary(h, 2);
    EXPECT_EQ(summary,
              "4 cast tensors (2 input, 1 weight, 1 grad_output) at 2 steps; 3 saturated: "
              "b:weight (e4m3, worst 30.00%, 1 step, first at step 1), a:input (e4m3, worst "
              "1.00%, 2 steps, first at step 1), and 1 more");
    EXPECT_EQ(analysis::log2Text(-3), "2^-3");
    EXPECT_EQ(analysis::log2Text(1.5), "2^1.50");
}
