// The max-batch search against a fake trial function, and on a real model
// under a CPU memory budget.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "core/store/BatchSearchStore.h"
#include "core/train/BatchFinder.h"
#include "core/train/Capacity.h"
#include "core/train/Trainer.h"

using namespace ampbench;
using train::BatchTrial;
using train::TrialOutcome;

namespace {

/// Fits up to `limit`; everything above runs out of memory.
train::TrialFunction boundaryAt(int64_t limit, std::vector<int64_t>* tried = nullptr) {
    return [=](int64_t b) {
        if (tried) {
            tried->push_back(b);
        }
        BatchTrial t;
        t.outcome = b <= limit ? TrialOutcome::Fits : TrialOutcome::OutOfMemory;
        t.peak_bytes = 1000 * b;
        return t;
    };
}

}  // namespace

TEST(BatchFinder, FindsTheBoundaryExactly) {
    for (int64_t limit : {1, 7, 8, 9, 100, 1000, 1023, 1024, 5000}) {
        train::FinderOptions o;
        o.start = 8;
        auto r = train::findMaxBatch(boundaryAt(limit), o);
        EXPECT_EQ(r.max_batch, limit) << "limit " << limit;
        EXPECT_EQ(r.first_failure, limit + 1) << "limit " << limit;
        EXPECT_EQ(r.peak_at_max, 1000 * limit);
        EXPECT_TRUE(r.error.empty());
        EXPECT_FALSE(r.trials_exhausted);
    }
}

TEST(BatchFinder, ResolutionStopsEarlyWithinTheGap) {
    train::FinderOptions o;
    o.resolution = 0.05;
    auto exact = train::findMaxBatch(boundaryAt(3000), train::FinderOptions{});
    auto coarse = train::findMaxBatch(boundaryAt(3000), o);
    EXPECT_LT(coarse.trials.size(), exact.trials.size());
    EXPECT_LE(coarse.max_batch, 3000);
    EXPECT_GE(coarse.max_batch, 3000 * 0.95);
    EXPECT_LE(coarse.first_failure - coarse.max_batch, coarse.max_batch * 0.05);
}

TEST(BatchFinder, MarginAndUpperBound) {
    train::FinderOptions o;
    o.margin = 0.10;
    auto r = train::findMaxBatch(boundaryAt(1000), o);
    EXPECT_EQ(r.safe_batch, 900);
    o.upper_bound = 300;
    std::vector<int64_t> tried;
    auto capped = train::findMaxBatch(boundaryAt(1000, &tried), o);
    EXPECT_EQ(capped.max_batch, 300);
    EXPECT_TRUE(capped.reached_upper_bound);
    for (auto b : tried) {
        EXPECT_LE(b, 300) << "never tries above the upper bound";
    }
    EXPECT_NE(capped.summary().find("upper bound"), std::string::npos);
}

TEST(BatchFinder, SurvivesAnOutOfMemoryAtAnyTrial) {
    // The first trial itself runs out of memory: the search halves, then bisects.
    train::FinderOptions o;
    o.start = 512;
    auto r = train::findMaxBatch(boundaryAt(37), o);
    EXPECT_EQ(r.max_batch, 37);
    EXPECT_EQ(r.trials.front().outcome, TrialOutcome::OutOfMemory);
    // Nothing fits at all.
    auto none = train::findMaxBatch(boundaryAt(0), o);
    EXPECT_EQ(none.max_batch, 0);
    EXPECT_EQ(none.first_failure, 1);
    EXPECT_EQ(none.safe_batch, 0);
}

TEST(BatchFinder, StopsWithinTheTrialBudget) {
    train::FinderOptions o;
    o.max_trials = 5;
    auto r = train::findMaxBatch(boundaryAt(100000), o);
    EXPECT_EQ(r.trials.size(), 5u);
    EXPECT_TRUE(r.trials_exhausted);
    EXPECT_GT(r.max_batch, 0) << "the best so far is kept";
    EXPECT_NE(r.summary().find("trial limit"), std::string::npos);
}

TEST(BatchFinder, ANonMemoryErrorIsReportedNotCalledALimit) {
    auto r = train::findMaxBatch(
        [](int64_t b) {
            BatchTrial t;
            if (b >= 32) {
                t.outcome = TrialOutcome::Error;
                t.message = "shape mismatch in layer 3";
            }
            return t;
        },
        {});
    EXPECT_EQ(r.max_batch, 16);
    EXPECT_EQ(r.first_failure, 0) << "an error is not a memory boundary";
    EXPECT_NE(r.error.find("shape mismatch"), std::string::npos);
    EXPECT_NE(r.summary().find("not a memory limit"), std::string::npos);
}

TEST(BatchFinder, CancelKeepsPartialResults) {
    run::CancelToken cancel;
    int calls = 0;
    auto r = train::findMaxBatch(
        [&](int64_t b) {
            if (++calls == 3) {
                cancel.cancel();
            }
            return boundaryAt(1000)(b);
        },
        {}, &cancel);
    EXPECT_TRUE(r.cancelled);
    EXPECT_EQ(r.trials.size(), 3u);
    EXPECT_EQ(r.max_batch, 32);
}

// A cancel that lands during a trial stops that trial's training: the search is
// cancelled (not failed) and the interrupted trial is not counted as a result.
TEST(BatchFinder, CancelDuringATrialIsACancelNotAnError) {
    run::CancelToken cancel;
    int calls = 0;
    auto r = train::findMaxBatch(
        [&](int64_t b) {
            if (++calls == 3) {
                cancel.cancel();
                train::BatchTrial t;
                t.outcome = train::TrialOutcome::Error;
                t.message = "cancelled";
                return t;
            }
            return boundaryAt(1000)(b);
        },
        {}, &cancel);
    EXPECT_TRUE(r.cancelled);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.trials.size(), 2u);
    EXPECT_EQ(r.max_batch, 16);
}

// A real model on CPU: the finder stays under the budget it is given and records
// every trial in the store.
TEST(Capacity, CpuBudgetIsRespectedOnARealModel) {
    if (train::resolveDevice(config::DeviceKind::Auto) != "cpu") {
        GTEST_SKIP() << "CPU budget check";
    }
    config::ExperimentSpec s;
    s.model.name = "mlp";
    s.model.width = 512;
    s.model.depth = 2;
    s.data.name = "synthetic-images";
    s.data.channels = 3;
    s.data.height = s.data.width = 64;
    s.device = config::DeviceKind::Cpu;
    s.cpu_threads = 1;
    s.arms = {{"fp32"}};
    // Measure the baseline (batch 1), then allow it plus ~60 MB.
    run::CancelToken cancel;
    auto one = train::runBatchTrial(s, 0, 1, 0, 1, cancel);
    ASSERT_EQ(one.outcome, TrialOutcome::Fits) << one.message;
    train::CapacityOptions o;
    o.budget_bytes = one.peak_bytes + (60 << 20);
    o.trial_steps = 1;
    o.finder.start = 64;
    o.finder.upper_bound = 1 << 15;
    auto db_path = std::filesystem::temp_directory_path() /
                   ("ampbench-capacity-test-" + std::to_string(getpid()) + ".db");
    std::filesystem::remove(db_path);
    auto db = store::Database::open(db_path.string());
    auto cap = train::findArmCapacity(s, 0, o, cancel, db.get());
    ASSERT_TRUE(cap.result.error.empty()) << cap.result.error;
    EXPECT_GT(cap.result.max_batch, 64);
    EXPECT_LT(cap.result.max_batch, 1 << 15);
    for (const auto& t : cap.result.trials) {
        if (t.fits()) {
            EXPECT_LE(t.peak_bytes, o.budget_bytes) << "batch " << t.batch;
        }
    }
    auto rows = store::BatchSearchStore(*db).searches();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].status, "finished");
    EXPECT_EQ(rows[0].max_batch, cap.result.max_batch);
    EXPECT_EQ(rows[0].trials.size(), cap.result.trials.size());
    std::filesystem::remove(db_path);
}

TEST(Capacity, BudgetBelowOneSampleSaysSo) {
    if (train::resolveDevice(config::DeviceKind::Auto) != "cpu") {
        GTEST_SKIP() << "CPU budget check";
    }
    config::ExperimentSpec s;
    s.model.name = "mlp";
    s.data.name = "synthetic-images";
    s.data.channels = 1;
    s.data.height = s.data.width = 8;
    s.cpu_threads = 1;
    s.arms = {{"fp32"}};
    train::CapacityOptions o;
    o.budget_bytes = 1 << 20;  // 1 MiB: less than the process itself
    o.trial_steps = 1;
    run::CancelToken cancel;
    auto cap = train::findArmCapacity(s, 0, o, cancel);
    EXPECT_EQ(cap.result.max_batch, 0);
    // Found before any trial: the process alone holds more than the budget.
    EXPECT_TRUE(cap.result.trials.empty());
    EXPECT_NE(cap.result.error.find("no batch can fit"), std::string::npos) << cap.result.summary();
    EXPECT_EQ(cap.result.summary().find("not a memory limit"), std::string::npos);
}
