// The max-batch search against a fake trial function, and on a real model
// under a CPU memory budget.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
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

/// An MLP of `width` × `depth` on generated `channels`×`side`×`side` images, one CPU
/// thread, one fp32 arm: the CPU searches' model.
config::ExperimentSpec cpuMlp(int width, int depth, int channels, int side) {
    config::ExperimentSpec s;
    s.model.name = "mlp";
    s.model.width = width;
    s.model.depth = depth;
    s.data.name = "synthetic-images";
    s.data.channels = channels;
    s.data.height = s.data.width = side;
    s.device = config::DeviceKind::Cpu;
    s.cpu_threads = 1;
    s.arms = {config::ArmSpec{"fp32"}};
    return s;
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

/// A trial whose wall time is exactly `fixed` + `per_sample` × batch.
train::TrialFunction timedBoundaryAt(int64_t limit, double fixed, double per_sample) {
    return [=](int64_t b) {
        BatchTrial t = boundaryAt(limit)(b);
        t.batch = b;
        t.seconds = fixed + per_sample * static_cast<double>(b);
        return t;
    };
}

TEST(SearchOutlook, UnknownUntilItCanBeEstimated) {
    train::FinderOptions o;
    auto timed = timedBoundaryAt(3000, 0.5, 0.001);
    std::vector<BatchTrial> trials = {timed(8)};
    EXPECT_FALSE(train::searchOutlook({}, o).known());
    EXPECT_FALSE(train::searchOutlook(trials, o).known()) << "one trial: no time per sample";
    trials.push_back(timed(16));
    EXPECT_FALSE(train::searchOutlook(trials, o).known())
        << "doubling with nothing failed and no failure predicted: no bound worth giving";
    EXPECT_TRUE(train::searchOutlook(trials, o, 4000).known());
    EXPECT_EQ(train::formatSecondsLeft(NAN), "\xE2\x80\x94");
    EXPECT_TRUE(std::isnan(train::trialSecondsAt({timed(8), timed(8)}, 100)));
    EXPECT_NEAR(train::trialSecondsAt(trials, 1000), 1.5, 1e-9);
}

TEST(SearchOutlook, CountsTheBisectionThatIsLeft) {
    train::FinderOptions o;
    auto timed = timedBoundaryAt(1500, 1.0, 0.01);
    std::vector<BatchTrial> trials = {timed(512), timed(1024), timed(2048)};
    const auto outlook = train::searchOutlook(trials, o);
    ASSERT_TRUE(outlook.known());
    EXPECT_EQ(outlook.trials_left, 10);  // a gap of 1024 halved down to one sample
    EXPECT_GT(outlook.seconds_left, 10 * (1.0 + 0.01 * 1024));
    EXPECT_LT(outlook.seconds_left, 10 * (1.0 + 0.01 * 2048));
    o.resolution = 0.05;  // stops within 5% of the fit: 1024 → 51
    EXPECT_EQ(train::searchOutlook(trials, o).trials_left, 5);
    o.max_trials = 5;  // the limit caps it
    EXPECT_EQ(train::searchOutlook(trials, o).trials_left, 2);
}

// Over whole searches (doubling with the failure predicted, halving, bisection,
// resolutions, trial limits): the search never needs more trials or seconds than
// the outlook said after any of its trials, and the bound is not loose by more
// than the worst branch.
TEST(SearchOutlook, IsAnUpperBoundOfEveryRealSearch) {
    for (int64_t limit : {1, 5, 37, 100, 1000, 1023, 1500, 5000, 40000}) {
        for (int64_t start : {8, 512, 4096}) {
            for (double resolution : {0.0, 0.05}) {
                for (int max_trials : {6, 30}) {
                    train::FinderOptions o;
                    o.start = start;
                    o.resolution = resolution;
                    o.max_trials = max_trials;
                    std::vector<BatchTrial> seen;
                    std::vector<train::SearchOutlook> outlooks;
                    train::findMaxBatch(
                        timedBoundaryAt(limit, 0.2, 0.003), o, nullptr, [&](const BatchTrial& t) {
                            seen.push_back(t);
                            outlooks.push_back(train::searchOutlook(seen, o, limit + 1));
                        });
                    double after = 0;
                    for (size_t i = seen.size(); i-- > 0;) {
                        const int left = static_cast<int>(seen.size() - 1 - i);
                        const auto& outlook = outlooks[i];
                        const std::string where = "limit " + std::to_string(limit) + " start " +
                                                  std::to_string(start) + " trial " +
                                                  std::to_string(i);
                        if (outlook.known()) {
                            EXPECT_GE(outlook.trials_left, left) << where;
                            EXPECT_GE(outlook.seconds_left, after - 1e-9) << where;
                        } else {
                            EXPECT_LT(i, 2u) << where << ": known once two trials are timed";
                        }
                        after += seen[i].seconds;
                    }
                    ASSERT_FALSE(outlooks.empty());
                    EXPECT_EQ(outlooks.back().trials_left, 0) << "limit " << limit;
                }
            }
        }
    }
}

TEST(SearchOutlook, SaysAboutHowLong) {
    EXPECT_EQ(train::formatSecondsLeft(0.4), "about 5 s left");
    EXPECT_EQ(train::formatSecondsLeft(41), "about 40 s left");
    EXPECT_EQ(train::formatSecondsLeft(150), "about 3 min left");
    EXPECT_EQ(train::formatSecondsLeft(4200), "about 1 h 10 min left");
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
    // Narrow: a sample's memory is mostly its input, while its matrix products (the
    // search's time on a CPU: 40 s at width 512, 6 s at 64 on two cores) shrink with
    // the width.
    config::ExperimentSpec s = cpuMlp(64, 2, 3, 64);
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
    db.reset();  // closed first: SQLite removes its -wal and -shm files on the last close
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
    o.budget_bytes = 1;  // less than any trial adds
    o.trial_steps = 1;
    run::CancelToken cancel;
    auto cap = train::findArmCapacity(s, 0, o, cancel);
    EXPECT_EQ(cap.result.max_batch, 0);
    ASSERT_FALSE(cap.result.trials.empty());
    EXPECT_EQ(cap.result.trials.back().batch, 1);
    EXPECT_TRUE(cap.result.budget_error);
    EXPECT_NE(cap.result.error.find("below what one sample needs"), std::string::npos)
        << cap.result.summary();
    EXPECT_EQ(cap.result.summary().find("not a memory limit"), std::string::npos);
}

// A budget is what the search adds: the memory the process holds before it (LibTorch,
// a GUI's widgets) is not counted, so a budget below that set still finds batches.
TEST(Capacity, TheBudgetCountsWhatTheSearchAddsNotTheProcess) {
    if (train::resolveDevice(config::DeviceKind::Auto) != "cpu") {
        GTEST_SKIP() << "CPU budget check";
    }
    config::ExperimentSpec s = cpuMlp(64, 1, 1, 8);
    train::CapacityOptions o;
    o.cpu_base_bytes = train::measureCpuBase(s);
    ASSERT_GT(o.cpu_base_bytes, int64_t{64} << 20) << "LibTorch alone holds more than this";
    o.budget_bytes = o.cpu_base_bytes / 2;  // half of what the process holds already
    const auto check = train::checkBudget("cpu", o.budget_bytes, o.cpu_base_bytes);
    EXPECT_EQ(check.bytes, o.budget_bytes);
    EXPECT_TRUE(check.warning.empty()) << check.warning;
    o.trial_steps = 1;
    o.finder.upper_bound = 64;
    run::CancelToken cancel;
    auto cap = train::findArmCapacity(s, 0, o, cancel);
    EXPECT_TRUE(cap.result.error.empty()) << cap.result.summary();
    EXPECT_EQ(cap.result.max_batch, 64) << cap.result.summary();
    for (const auto& t : cap.result.trials) {
        EXPECT_TRUE(t.fits()) << "batch " << t.batch << ": " << t.message;
        EXPECT_LT(t.peak_bytes, o.budget_bytes) << "batch " << t.batch;
    }
}

// Each arm's trials are measured on their own: an arm finds the same max batch
// whether it is searched first or after an arm that reached larger batches and
// left freed heap behind, within the finder's resolution.
TEST(Capacity, AnArmFindsTheSameMaxBatchInEitherOrder) {
    if (train::resolveDevice(config::DeviceKind::Auto) != "cpu") {
        GTEST_SKIP() << "CPU budget check";
    }
    // Narrow, as above: the inputs fill the budget, and the products stay cheap.
    config::ExperimentSpec s = cpuMlp(64, 2, 3, 32);
    config::ArmSpec fp32{"fp32"};
    config::ArmSpec accum{"fp32-accum4"};
    accum.accumulation = 4;
    train::CapacityOptions o;
    o.trial_steps = 1;
    o.finder.start = 128;
    o.finder.resolution = 0.125;
    // Both searches count from the same base, so what differs is only what ran before.
    o.cpu_base_bytes = train::measureCpuBase(s);
    o.budget_bytes = 64 << 20;  // what each trial may add to that base
    run::CancelToken cancel;
    auto search = [&](std::vector<config::ArmSpec> arms) {
        s.arms = std::move(arms);
        std::map<std::string, train::ArmCapacity> out;
        for (auto& c : train::findCapacities(s, o, cancel)) {
            EXPECT_TRUE(c.result.error.empty()) << c.arm << ": " << c.result.error;
            EXPECT_GT(c.result.max_batch, 128) << c.arm;
            out[c.arm] = c;
        }
        return out;
    };
    auto forward = search({fp32, accum});
    auto backward = search({accum, fp32});
    for (const std::string arm : {"fp32", "fp32-accum4"}) {
        const int64_t a = forward[arm].result.max_batch;
        const int64_t b = backward[arm].result.max_batch;
        // Each answer is within `resolution` of the boundary below it.
        EXPECT_LE(
            std::abs(a - b),
            static_cast<int64_t>(o.finder.resolution * static_cast<double>(std::max(a, b))) + 1)
            << arm << ": " << a << " searched first, " << b << " searched second";
        // The same first trial peaks the same, whatever ran before it.
        ASSERT_FALSE(forward[arm].result.trials.empty() || backward[arm].result.trials.empty());
        const auto& x = forward[arm].result.trials.front();
        const auto& y = backward[arm].result.trials.front();
        EXPECT_EQ(x.batch, y.batch);
        EXPECT_NEAR(static_cast<double>(x.peak_bytes), static_cast<double>(y.peak_bytes),
                    double(16 << 20))
            << arm << " at batch " << x.batch;
    }
}

// The time left counts an arm not started by its accumulation K (a trial trains K
// micro-batches a step): after an fp32 arm, an accum-4 arm is put at four times its
// duration, not at the mean of the arms so far.
TEST(Capacity, TheTimeLeftWeighsArmsNotStartedByTheirAccumulation) {
    if (train::resolveDevice(config::DeviceKind::Auto) != "cpu") {
        GTEST_SKIP() << "CPU search";
    }
    config::ExperimentSpec s = cpuMlp(64, 1, 1, 8);
    config::ArmSpec accum{"fp32-accum4"};
    accum.accumulation = 4;
    s.arms = {config::ArmSpec{"fp32"}, accum};
    train::CapacityOptions o;
    o.trial_steps = 2;
    o.finder.start = 8;
    o.finder.upper_bound = 64;  // 8, 16, 32, 64 fit: the arm's rest is known, then 0
    // Measured here, so that the first arm starts as the search does: its duration
    // is then the time from the call to its last trial, on the clock the search uses.
    o.cpu_base_bytes = train::measureCpuBase(s);
    run::CancelToken cancel;
    using Clock = std::chrono::steady_clock;
    Clock::time_point last{};
    double left_after_first_arm = NAN;
    const auto start = Clock::now();
    train::findCapacities(s, o, cancel, nullptr, 0, [&](const train::CapacityProgress& p) {
        if (p.arm != 0) {
            return;
        }
        last = Clock::now();
        left_after_first_arm = p.seconds_left;
    });
    ASSERT_TRUE(std::isfinite(left_after_first_arm));
    const double first_arm = std::chrono::duration<double>(last - start).count();
    ASSERT_GT(first_arm, 0);
    // The search's own clock starts a moment after this one and reads a moment before
    // `last`, so how long the trials took (a busy machine) does not move the ratio.
    EXPECT_NEAR(left_after_first_arm / first_arm, 4.0, 0.5)
        << left_after_first_arm << " s left after a first arm of " << first_arm << " s";
}

// A failure extrapolated far beyond the batches tried gives no time left (the
// outlook would swing by minutes between trials); within reach of the largest fit,
// or of the upper bound, it does.
TEST(Capacity, AFailureFarBeyondTheTrialsSoFarGivesNoTimeLeft) {
    if (train::resolveDevice(config::DeviceKind::Auto) != "cpu") {
        GTEST_SKIP() << "CPU search";
    }
    config::ExperimentSpec s = cpuMlp(64, 1, 1, 8);
    train::CapacityOptions o;
    o.budget_bytes = int64_t{2} << 30;  // far above what batches up to 4096 add here
    o.trial_steps = 1;
    o.finder.start = 8;
    o.finder.upper_bound = 4096;
    run::CancelToken cancel;
    std::map<int64_t, train::SearchOutlook> outlooks;
    auto cap = train::findArmCapacity(
        s, 0, o, cancel, nullptr, 0, [&](const BatchTrial& t, const train::SearchOutlook& outlook) {
            outlooks[t.batch] = outlook;
        });
    ASSERT_EQ(cap.result.max_batch, 4096) << cap.result.summary();
    ASSERT_TRUE(outlooks.count(16) && outlooks.count(512));
    EXPECT_FALSE(outlooks[16].known()) << outlooks[16].seconds_left << " s from batches 8 and 16";
    EXPECT_TRUE(outlooks[512].known()) << "the upper bound is within reach of 512";
    EXPECT_EQ(outlooks[4096].trials_left, 0);
}
