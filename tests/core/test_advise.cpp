// The advice's workflow on a tiny MLP (train::advise): how it ends where the device has no
// mixed precision, where nothing fits, where the budget holds no candidate and where it is
// cancelled, each with what it recorded; and an arm trained at a micro-batch of its own.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/analysis/Advice.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/config/PlannedArm.h"
#include "core/config/Presets.h"
#include "core/store/BatchSearchStore.h"
#include "core/store/Database.h"
#include "core/train/Advise.h"
#include "core/train/Trainer.h"
#include "tests/core/ScratchDir.h"

using namespace ampbench;

namespace {

/// A model and data that train in milliseconds a step: the workflow, not the model, is
/// under test.
config::ExperimentSpec tiny() {
    config::ExperimentSpec s = *config::preset("default");
    s.name = "tiny";
    s.model.name = "mlp";
    s.model.width = 8;
    s.model.depth = 1;
    s.data.name = "synthetic-images";
    s.data.channels = 1;
    s.data.height = 8;
    s.data.width = 8;
    s.micro_batch = 8;
    s.warmup_steps = 2;
    s.eval_batches = 1;
    s.cpu_threads = 1;
    return s;
}

train::AdviseOptions quick() {
    train::AdviseOptions o;
    o.max_batch = 16;
    o.timed_steps = 10;
    o.leaders = 1;
    return o;
}

struct Recorded {
    std::unique_ptr<store::Database> db;
    train::AdviseResult result;
};

Recorded adviseOn(const std::string& path, const train::AdviseOptions& o,
                  const train::AdviseTrainer& trainer = {},
                  const std::function<void(const train::PlannedRun&)>& after_run = {},
                  const run::CancelToken* outside = nullptr) {
    Recorded r;
    r.db = store::Database::open(path);
    static run::CancelToken never;
    train::AdviseHooks hooks;
    if (after_run) {
        hooks.finished = [&](const train::PlannedRun& run, const run::RunOutcome&) {
            after_run(run);
        };
    }
    r.result = train::advise(*r.db, train::validSpec(tiny()), o, outside ? *outside : never, hooks,
                             trainer);
    return r;
}

class Advise : public test::ScratchDirTest {};

}  // namespace

TEST_F(Advise, WithoutMixedPrecisionHereItAdvisesFp32SettingsAndSaysSo) {
    train::AdviseTrainer trainer;
    config::AdviceDevice none;
    none.fp16 = "no fp16 here";
    none.bf16 = "no bf16 here";
    none.fp8 = "no fp8 here";
    trainer.device = none;
    auto r = adviseOn(file("a.db"), quick(), trainer);
    EXPECT_EQ(r.result.end, train::AdviseEnd::NoMixedPrecision);
    EXPECT_NE(r.result.message.find("no bf16 here"), std::string::npos) << r.result.message;
    const auto data = analysis::loadExperiment(*r.db, r.result.experiment_id);
    ASSERT_TRUE(data);
    const analysis::Advice a = analysis::readAdvice(*data, analysis::analyzeExperiment(*data));
    int unsupported = 0, fp32 = 0;
    for (const auto& row : a.rows) {
        unsupported += row.status == analysis::RowStatus::Unsupported ? 1 : 0;
        fp32 += row.f.format == "fp32" && row.f.measured ? 1 : 0;
        if (row.f.arm == "amp-bf16") {
            EXPECT_EQ(row.f.unsupported, "no bf16 here");
        }
    }
    EXPECT_EQ(unsupported, 3);
    EXPECT_EQ(fp32, 2);  // fp32 at its batch and at the largest that fits
    ASSERT_NE(a.recommendation(), nullptr);
    EXPECT_EQ(a.recommendation()->f.format, "fp32");
}

TEST_F(Advise, NothingFitsEndsWithTheSearchesRecorded) {
    train::AdviseOptions o = quick();
    o.memory_bytes = 1024;  // below what one sample adds
    auto r = adviseOn(file("a.db"), o);
    EXPECT_EQ(r.result.end, train::AdviseEnd::NothingFits);
    EXPECT_NE(r.result.message.find("batch 1"), std::string::npos) << r.result.message;
    ASSERT_GT(r.result.experiment_id, 0);
    const auto searches = store::BatchSearchStore(*r.db).searches(r.result.experiment_id);
    EXPECT_FALSE(searches.empty());
    EXPECT_TRUE(r.db->runs(r.result.experiment_id).empty());
}

TEST_F(Advise, ABudgetShortOfOneCandidateRecordsNothing) {
    train::AdviseOptions o = quick();
    o.budget_s = 0.001;
    auto r = adviseOn(file("a.db"), o);
    EXPECT_EQ(r.result.end, train::AdviseEnd::BudgetTooSmall);
    EXPECT_EQ(r.result.experiment_id, 0);
    EXPECT_NE(r.result.message.find("--budget"), std::string::npos) << r.result.message;
    EXPECT_TRUE(r.db->experiments().empty());
}

TEST_F(Advise, ACancelKeepsThePassesMeasuredAndLeavesNothingQueued) {
    run::CancelToken cancel;
    int passes = 0;
    auto r = adviseOn(
        file("a.db"), quick(), {},
        [&](const train::PlannedRun&) {
            if (++passes == 2) {
                cancel.cancel();  // after the second pass: the rest is never measured
            }
        },
        &cancel);
    EXPECT_EQ(r.result.end, train::AdviseEnd::Cancelled);
    const auto runs = r.db->runs(r.result.experiment_id);
    int finished = 0;
    for (const auto& run : runs) {
        EXPECT_NE(run.status, run::RunStatus::Queued) << run.arm;
        EXPECT_NE(run.status, run::RunStatus::Running) << run.arm;
        finished += run.status == run::RunStatus::Finished ? 1 : 0;
        if (run.status == run::RunStatus::Finished) {
            EXPECT_TRUE(config::plannedArmFromJson(run.spec_json).timing_pass);
            EXPECT_GT(r.db->stepCount(run.id), 0);
        }
    }
    EXPECT_EQ(finished, 2);
    const auto data = analysis::loadExperiment(*r.db, r.result.experiment_id);
    const analysis::Advice a = analysis::readAdvice(*data, analysis::analyzeExperiment(*data));
    int measured = 0;
    for (const auto& row : a.rows) {
        measured += row.f.measured ? 1 : 0;
    }
    EXPECT_EQ(measured, 2);
}

TEST_F(Advise, AnArmOfItsOwnMicroBatchTrainsTheSameSamplesAtItsOwnRate) {
    config::ExperimentSpec s = tiny();
    s.micro_steps = 24;
    config::ArmSpec big;
    big.name = "big";
    big.micro_batch = 16;
    s.arms = {big};
    struct Seen : run::TrainObserver {
        run::RunInfo info;
        std::vector<run::StepRecord> steps;
        void onStart(const run::RunInfo& i) override { info = i; }
        void onStep(const run::StepRecord& st) override { steps.push_back(st); }
    } seen;
    run::CancelToken cancel;
    train::TrainOptions o;
    o.final_eval = false;
    const run::RunOutcome out = train::trainRun(s, 0, 1, seen, cancel, o);
    ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
    EXPECT_EQ(seen.info.micro_batch, 16);
    EXPECT_DOUBLE_EQ(seen.info.lr, s.optimizer.lr * 2);  // linear rule: 16 against 8
    ASSERT_EQ(seen.steps.size(), 12u);                   // 24 × 8 samples in batches of 16
    EXPECT_EQ(seen.steps.back().samples, 24 * 8);
}
