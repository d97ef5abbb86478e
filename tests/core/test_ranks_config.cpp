// Data-parallel arms in the spec: the `ranks` field, its checks against the
// machine, and what the plan records (world size, backend, global batch, lr).
#include <gtest/gtest.h>

#include <cmath>

#include "core/config/ExperimentSpec.h"
#include "core/config/PlannedArm.h"
#include "core/config/Presets.h"
#include "core/config/SpecJson.h"
#include "core/config/Validation.h"

namespace {

using namespace ampbench::config;

ExperimentSpec twoRankSpec() {
    ExperimentSpec s;
    ArmSpec a;
    a.name = "fp32-dp";
    a.ranks = 2;
    a.accumulation = 2;
    s.arms = {a};
    s.micro_batch = 32;
    s.micro_steps = 40;
    return s;
}

TEST(Ranks, ReadFromJsonAndWrittenBack) {
    std::vector<FieldError> errors;
    const ExperimentSpec s = specFromJsonText(
        R"({"arms": [{"name": "fp32", "precision": "fp32", "ranks": 4}]})", errors);
    ASSERT_TRUE(errors.empty());
    ASSERT_EQ(s.arms.size(), 1u);
    EXPECT_EQ(s.arms[0].ranks, 4);
    std::vector<FieldError> again;
    EXPECT_EQ(specFromJsonText(specToJsonText(s), again), s);
}

TEST(Ranks, OutOfRangeNamesTheArmField) {
    ExperimentSpec s = twoRankSpec();
    s.arms[0].ranks = 0;
    const auto errors = validate(s);
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors[0].field, "arms[0].ranks");
    EXPECT_NE(errors[0].message.find("between 1 and 64"), std::string::npos) << errors[0].message;
}

TEST(Ranks, CudaGraphNeedsOneRank) {
    ExperimentSpec s = twoRankSpec();
    s.arms[0].accumulation = 1;
    s.arms[0].cuda_graph = true;
    bool found = false;
    for (const auto& e : validate(s)) {
        found = found ||
                (e.field == "arms[0].cuda_graph" && e.message.find("ranks 1") != std::string::npos);
    }
    EXPECT_TRUE(found);
}

TEST(Ranks, MoreRanksThanGpusNamesBothNumbers) {
    const auto errors =
        checkRanks(twoRankSpec(), {/*cuda=*/true, /*gpus=*/1, /*nccl=*/true, false});
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].field, "arms[0].ranks");
    EXPECT_NE(errors[0].message.find("2 ranks asked for, 1 GPU visible"), std::string::npos)
        << errors[0].message;
    EXPECT_TRUE(checkRanks(twoRankSpec(), {true, 2, true, false}).empty());
}

TEST(Ranks, CpuRunsAnyCountOverGloo) {
    ExperimentSpec s = twoRankSpec();
    s.arms[0].ranks = 8;
    EXPECT_TRUE(checkRanks(s, {/*cuda=*/false, 0, false, /*gloo=*/true}).empty());
    const auto errors = checkRanks(s, {false, 0, false, /*gloo=*/false});
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].message.find("Gloo"), std::string::npos);
}

TEST(Ranks, OneRankNeedsNoBackend) {
    ExperimentSpec s = twoRankSpec();
    s.arms[0].ranks = 1;
    EXPECT_TRUE(checkRanks(s, {true, 0, false, false}).empty());
}

TEST(Ranks, PlanRecordsWorldSizeBackendAndGlobalBatch) {
    ExperimentSpec s = twoRankSpec();
    s.optimizer.lr = 0.01;
    s.arms[0].lr_rule = LrRule::Linear;
    const PlannedArm cpu = planArm(s, s.arms[0], /*cuda=*/false);
    EXPECT_EQ(cpu.world_size, 2);
    EXPECT_EQ(cpu.backend, "gloo");
    EXPECT_EQ(cpu.effective_batch, 32 * 2 * 2);
    EXPECT_DOUBLE_EQ(cpu.lr, 0.01 * 4);  // linear in K × ranks
    EXPECT_EQ(planArm(s, s.arms[0], /*cuda=*/true).backend, "nccl");
    s.arms[0].lr_rule = LrRule::Sqrt;
    EXPECT_DOUBLE_EQ(planArm(s, s.arms[0], false).lr, 0.01 * 2);

    const PlannedArm back = plannedArmFromJson(plannedArmToJson(cpu));
    EXPECT_EQ(back.world_size, 2);
    EXPECT_EQ(back.backend, "gloo");
    EXPECT_EQ(back.arm, cpu.arm);
}

TEST(Ranks, SingleRankPlanKeepsItsFormerJson) {
    ExperimentSpec s = twoRankSpec();
    s.arms[0].ranks = 1;
    const std::string text = plannedArmToJson(planArm(s, s.arms[0], false));
    EXPECT_EQ(text.find("world_size"), std::string::npos);
    EXPECT_EQ(plannedArmFromJson(text).world_size, 1);
    EXPECT_TRUE(plannedArmFromJson(text).backend.empty());
}

}  // namespace
