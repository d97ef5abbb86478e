// Runs trained side by side (spread over GPUs; here CPU threads stand in for them)
// can be cancelled one at a time and taken out of the queue, as runs trained one
// after another can: the front end's hooks reach every run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/run/RemoveTree.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/private/SpreadRuns.h"

using namespace ampbench;

namespace {

config::ExperimentSpec tinySpec(int64_t micro_steps) {
    config::ExperimentSpec s;
    s.name = "side-by-side";
    s.model.name = "mlp";
    s.model.width = 16;
    s.model.depth = 1;
    s.data.name = "synthetic-images";
    s.data.channels = 1;
    s.data.height = s.data.width = 8;
    s.micro_batch = 8;
    s.micro_steps = micro_steps;
    s.eval_interval = 0;
    s.warmup_steps = 0;
    s.cpu_threads = 1;
    s.device = config::DeviceKind::Cpu;
    s.arms = {{"fp32"}};
    return s;
}

/// Cancels `token` (when given) as its run starts training: steps reach observers
/// in batches, a fast run's all at its end.
struct CancelAtStart : run::TrainObserver {
    run::CancelToken* token = nullptr;
    void onStart(const run::RunInfo&) override {
        if (token) {
            token->cancel();
        }
    }
};

class SpreadCancel : public ::testing::Test {
  protected:
    void SetUp() override {
        char dir[] = "/tmp/ampbench-spread-XXXXXX";
        ASSERT_NE(::mkdtemp(dir), nullptr);
        dir_ = dir;
    }
    void TearDown() override { run::removeTree(dir_); }
    std::string dir_;
};

}  // namespace

TEST_F(SpreadCancel, OneRunSideBySideStopsAloneAndAQueuedOneIsRemoved) {
    auto spec = tinySpec(400);
    spec.seeds = {1, 2, 3};
    spec.runs_per_gpu = 2;  // runs 1 and 2 train at once, run 3 waits for a place
    auto db = store::Database::open(dir_ + "/e.db");
    train::ExperimentResult result;
    result.plan = train::planExperiment(*db, spec);
    ASSERT_EQ(result.plan.runs.size(), 3u);
    const int64_t first = result.plan.runs[0].run_id;
    const int64_t second = result.plan.runs[1].run_id;
    const int64_t third = result.plan.runs[2].run_id;

    run::CancelToken cancel;
    std::mutex mutex;
    std::map<int64_t, std::unique_ptr<run::CancelToken>> tokens;
    std::map<int64_t, CancelAtStart> observers;
    int skipped = 0;
    train::ExperimentHooks hooks;
    hooks.run_cancel = [&](const train::PlannedRun& run) -> const run::CancelToken* {
        std::lock_guard<std::mutex> lock(mutex);
        auto& t = tokens[run.run_id];
        t = std::make_unique<run::CancelToken>();
        return t.get();
    };
    hooks.starting = [&](const train::PlannedRun& run) -> run::TrainObserver* {
        std::lock_guard<std::mutex> lock(mutex);
        CancelAtStart& o = observers[run.run_id];
        if (run.run_id == first) {
            o.token = tokens.at(run.run_id).get();  // the first stops itself
        }
        return &o;
    };
    hooks.skip = [&](const train::PlannedRun& run) {
        if (run.run_id == third) {
            ++skipped;
            return true;  // taken out of the queue while it waited
        }
        return false;
    };
    train::trainSpread(*db, spec, cancel, hooks, {}, 1, result);

    EXPECT_FALSE(result.cancelled) << "one run's cancel is not the experiment's";
    EXPECT_EQ(skipped, 1);
    EXPECT_EQ(tokens.count(third), 0u) << "a run taken out gets no token: it never starts";
    const auto one = db->run(first);
    const auto two = db->run(second);
    const auto three = db->run(third);
    ASSERT_TRUE(one && two && three);
    EXPECT_EQ(one->status, run::RunStatus::Cancelled) << one->error;
    EXPECT_LT(db->steps(first).size(), 400u);
    EXPECT_EQ(two->status, run::RunStatus::Finished) << two->error;
    EXPECT_EQ(db->steps(second).size(), 400u) << "the run beside it trained to its end";
    EXPECT_EQ(three->status, run::RunStatus::Cancelled);
    EXPECT_NE(three->error.find("removed from the queue"), std::string::npos) << three->error;
    EXPECT_TRUE(db->steps(third).empty());
}

// The experiment's cancel still stops every run side by side when the front end
// sets the runs' own tokens with it, and marks the experiment cancelled.
TEST_F(SpreadCancel, CancellingEverythingStopsEveryRunSideBySide) {
    auto spec = tinySpec(100000);
    spec.seeds = {1, 2};
    spec.runs_per_gpu = 2;
    auto db = store::Database::open(dir_ + "/e.db");
    train::ExperimentResult result;
    result.plan = train::planExperiment(*db, spec);
    run::CancelToken cancel;
    std::mutex mutex;
    std::map<int64_t, std::unique_ptr<run::CancelToken>> tokens;
    auto cancelAll = [&] {
        cancel.cancel();
        std::lock_guard<std::mutex> lock(mutex);
        for (auto& [id, t] : tokens) {
            t->cancel();
        }
    };
    struct CancelAllAt : run::TrainObserver {
        std::function<void()> stop;
        void onStart(const run::RunInfo&) override { stop(); }
    } observer;
    observer.stop = cancelAll;
    train::ExperimentHooks hooks;
    hooks.run_cancel = [&](const train::PlannedRun& run) -> const run::CancelToken* {
        std::lock_guard<std::mutex> lock(mutex);
        auto& t = tokens[run.run_id];
        t = std::make_unique<run::CancelToken>();
        if (cancel.cancelled()) {
            t->cancel();
        }
        return t.get();
    };
    hooks.starting = [&](const train::PlannedRun&) -> run::TrainObserver* { return &observer; };
    train::trainSpread(*db, spec, cancel, hooks, {}, 1, result);
    EXPECT_TRUE(result.cancelled);
    train::cancelQueued(*db, result.plan);  // as runExperiment ends a cancelled experiment
    for (const auto& row : db->runs()) {
        EXPECT_EQ(row.status, run::RunStatus::Cancelled) << "run " << row.id;
        EXPECT_LT(db->steps(row.id).size(), 100000u);
    }
}

// A front end's hook that throws as the second run starts: the first run, already
// training on its thread, is waited for, and the error reaches the caller (before,
// the exception left the loop with a thread still joinable: the process ended).
TEST_F(SpreadCancel, AHookThatThrowsAsARunStartsWaitsForTheRunsStartedAndRethrows) {
    auto spec = tinySpec(40);
    spec.seeds = {1, 2};
    spec.runs_per_gpu = 2;
    auto db = store::Database::open(dir_ + "/e.db");
    train::ExperimentResult result;
    result.plan = train::planExperiment(*db, spec);
    run::CancelToken cancel;
    int starts = 0;
    train::ExperimentHooks hooks;
    hooks.starting = [&](const train::PlannedRun&) -> run::TrainObserver* {
        if (++starts == 2) {
            throw std::runtime_error("the front end cannot show this run");
        }
        return nullptr;
    };
    EXPECT_THROW(
        {
            try {
                train::trainSpread(*db, spec, cancel, hooks, {}, 1, result);
            } catch (const std::runtime_error& e) {
                EXPECT_STREQ(e.what(), "the front end cannot show this run");
                throw;
            }
        },
        std::runtime_error);
    const auto first = db->run(result.plan.runs.at(0).run_id);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->status, run::RunStatus::Finished) << "the run that started trained to its end";
}
