// The CLI's progress lines: every run has its own observer, so runs that train side
// by side on a GPU each print their own label, count and seed.
#include <gtest/gtest.h>

#include <string>

#include "cli/Progress.h"

using namespace ampbench;

namespace {

run::EvalRecord evalAt(int64_t step, double accuracy) {
    run::EvalRecord e;
    e.step = step;
    e.val_loss = 0.5;
    e.val_accuracy = accuracy;
    return e;
}

}  // namespace

TEST(CliProgress, RunsSideBySideEachPrintTheirOwnLabel) {
    cli::Progress progress(3, /*terminal=*/false, /*quiet=*/false);
    testing::internal::CaptureStderr();
    run::TrainObserver* fp32 = progress.beginRun(0, "fp32", 1, 4210);
    run::TrainObserver* accum = progress.beginRun(1, "amp-accum4", 2, 1052);
    run::TrainObserver* amp = progress.beginRun(2, "amp", 3, 4210);
    fp32->onEval(evalAt(421, 0.81));  // the first run reports after the last started
    accum->onEval(evalAt(105, 0.74));
    run::RunOutcome done;
    done.status = run::RunStatus::Finished;
    done.steps_done = 4210;
    fp32->onFinish(done);
    amp->onFinish(done);
    const std::string out = testing::internal::GetCapturedStderr();
    EXPECT_NE(out.find("[run 1/3] fp32 step 421: val loss 0.5000, val acc 81.00%"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("[run 2/3] amp-accum4 step 105:"), std::string::npos) << out;
    EXPECT_NE(out.find("[run 1/3] fp32 seed 1: finished after 4210 steps"), std::string::npos)
        << out;
    EXPECT_NE(out.find("[run 3/3] amp seed 3: finished after 4210 steps"), std::string::npos)
        << out;
    EXPECT_EQ(out.find("[run 3/3] amp seed 3: finished after 1052"), std::string::npos) << out;
}

TEST(CliProgress, QuietPrintsNothing) {
    cli::Progress progress(1, false, /*quiet=*/true);
    testing::internal::CaptureStderr();
    run::TrainObserver* r = progress.beginRun(0, "fp32", 1, 10);
    r->onEval(evalAt(5, 0.5));
    r->onFinish(run::RunOutcome{});
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}
