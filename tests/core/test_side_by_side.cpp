// The loop that trains an experiment's runs side by side (train::trainSideBySide), on
// its own: a fake run stands in for the built-in trainer and the training script, so
// neither LibTorch nor a GPU is needed. What both callers rely on: room on each GPU,
// the hooks in plan order, a run cancelled alone, errors that wait for the threads.
#include <gtest/gtest.h>

#ifdef __linux__
#include <pthread.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "tests/core/ScratchDir.h"

using namespace ampbench;

namespace {

run::RunOutcome endedAs(run::RunStatus status) {
    run::RunOutcome o;
    o.status = status;
    if (status == run::RunStatus::Cancelled) {
        o.failure = run::FailureKind::Cancelled;
    }
    return o;
}

class SideBySide : public test::ScratchDirTest {
  protected:
    /// A fresh file with `runs` runs planned, queued: never trained, so the spec's
    /// defaults serve, on data that needs no file.
    train::ExperimentResult plan(int runs) {
        config::ExperimentSpec spec;
        spec.data.name = "synthetic-images";
        spec.arms.resize(1);
        spec.arms[0].name = "fp32";
        spec.seeds.clear();
        for (int i = 1; i <= runs; ++i) {
            spec.seeds.push_back(static_cast<uint64_t>(i));
        }
        db_ = store::Database::open(file("e" + std::to_string(++files_) + ".db"));
        train::ExperimentResult result;
        result.plan = train::planExperiment(*db_, spec);
        return result;
    }
    run::RunStatus statusOf(int64_t id) const { return db_->run(id)->status; }
    std::string errorOf(int64_t id) const { return db_->run(id)->error; }

    int files_ = 0;
    std::unique_ptr<store::Database> db_;
};

/// A front end's observer that notices two calls at once.
struct OneAtATime : run::TrainObserver {
    std::atomic<int> inside{0};
    std::atomic<bool> overlapped{false};
    std::atomic<int> steps{0};
    void onStep(const run::StepRecord&) override {
        if (++inside > 1) {
            overlapped = true;
        }
        ++steps;
        std::this_thread::yield();
        --inside;
    }
};

}  // namespace

TEST_F(SideBySide, RunsTrainAtOnceUpToTheRoomOnEachGpuOnThreadsOfTheirOwn) {
    auto result = plan(6);
    run::CancelToken cancel;
    std::mutex m;  // guards every figure below: the runs' threads write them
    std::condition_variable changed;
    int started = 0;
    int running = 0;
    int peak = 0;
    std::map<int, int> on_gpu;
    int peak_on_a_gpu = 0;
    std::vector<std::string> names;
    train::SideBySide places;
    places.gpus = 2;
    places.runs_per_gpu = 2;
    train::trainSideBySide(
        *db_, cancel, {}, places,
        [&](const train::PlannedRun&, int gpu, const run::CancelToken&, run::TrainObserver*,
            const std::function<bool()>&) {
            std::unique_lock<std::mutex> lock(m);
#ifdef __linux__
            char name[32] = {};
            pthread_getname_np(pthread_self(), name, sizeof name);
            names.push_back(name);
#endif
            ++started;
            peak = std::max(peak, ++running);
            peak_on_a_gpu = std::max(peak_on_a_gpu, ++on_gpu[gpu]);
            changed.notify_all();
            // The first four wait for each other: there is room for all of them at once.
            changed.wait_for(lock, std::chrono::seconds(120), [&] { return started >= 4; });
            --running;
            --on_gpu[gpu];
            return endedAs(run::RunStatus::Finished);
        },
        result);
    EXPECT_EQ(started, 6);
    EXPECT_EQ(peak, 4) << "two GPUs, two runs on each";
    EXPECT_EQ(peak_on_a_gpu, 2);
    EXPECT_FALSE(result.cancelled);
    EXPECT_FALSE(result.any_failed);
#ifdef __linux__
    for (const auto& name : names) {
        EXPECT_EQ(name, "ampbench-run");
    }
#endif
}

TEST_F(SideBySide, HooksAreAskedInPlanOrderAndARunLeftOutNeverStarts) {
    auto result = plan(4);
    const auto& runs = result.plan.runs;
    run::CancelToken cancel;
    std::mutex m;  // guards log, tokens and observers: hooks and runs write them
    std::vector<std::string> log;
    std::map<int64_t, std::unique_ptr<run::CancelToken>> tokens;
    OneAtATime observer;
    auto say = [&](const std::string& what, const train::PlannedRun& run) {
        std::lock_guard<std::mutex> lock(m);
        log.push_back(what + std::to_string(run.run_id));
    };
    train::ExperimentHooks hooks;
    hooks.skip = [&](const train::PlannedRun& run) {
        say("skip ", run);
        return run.run_id == runs[1].run_id;
    };
    hooks.run_cancel = [&](const train::PlannedRun& run) -> const run::CancelToken* {
        say("run_cancel ", run);
        std::lock_guard<std::mutex> lock(m);
        auto& t = tokens[run.run_id];
        t = std::make_unique<run::CancelToken>();
        return t.get();
    };
    hooks.starting = [&](const train::PlannedRun& run) -> run::TrainObserver* {
        say("starting ", run);
        return &observer;
    };
    hooks.finished = [&](const train::PlannedRun& run, const run::RunOutcome&) {
        say("finished ", run);
    };
    train::SideBySide places;
    places.runs_per_gpu = 2;
    bool own_tokens = true;
    bool observed = true;
    train::trainSideBySide(
        *db_, cancel, hooks, places,
        [&](const train::PlannedRun& run, int, const run::CancelToken& token,
            run::TrainObserver* extra, const std::function<bool()>&) {
            say("train ", run);
            {
                std::lock_guard<std::mutex> lock(m);
                own_tokens = own_tokens && &token == tokens.at(run.run_id).get();
            }
            observed = observed && extra != nullptr;
            return endedAs(run::RunStatus::Finished);
        },
        result);

    auto at = [&](const std::string& entry) {
        return std::find(log.begin(), log.end(), entry) - log.begin();
    };
    auto id = [&](size_t i) { return std::to_string(runs[i].run_id); };
    for (size_t i = 0; i + 1 < runs.size(); ++i) {
        EXPECT_LT(at("skip " + id(i)), at("skip " + id(i + 1))) << "skip in plan order";
    }
    for (const std::string hook : {"run_cancel ", "starting "}) {
        EXPECT_LT(at(hook + id(0)), at(hook + id(2))) << hook << "in plan order";
        EXPECT_LT(at(hook + id(2)), at(hook + id(3))) << hook << "in plan order";
    }
    for (size_t i : {0u, 2u, 3u}) {
        EXPECT_LT(at("skip " + id(i)), at("run_cancel " + id(i)));
        EXPECT_LT(at("run_cancel " + id(i)), at("starting " + id(i)));
        EXPECT_LT(at("starting " + id(i)), at("train " + id(i)));
        EXPECT_LT(at("train " + id(i)), at("finished " + id(i)));
    }
    for (const std::string hook : {"run_cancel ", "starting ", "train ", "finished "}) {
        EXPECT_EQ(at(hook + id(1)), static_cast<long>(log.size())) << hook << "of the run left out";
    }
    EXPECT_EQ(statusOf(runs[1].run_id), run::RunStatus::Cancelled);
    EXPECT_EQ(errorOf(runs[1].run_id), "removed from the queue before it started");
    EXPECT_TRUE(own_tokens) << "each run trains on the token the front end gave it";
    EXPECT_TRUE(observed) << "each run tells the observer starting returned";
    EXPECT_FALSE(result.cancelled);
}

// A hook that throws stops the queue: the run already training is waited for (before,
// a thread still joinable ended the process), what never started is recorded
// cancelled and the hook's error reaches the caller.
TEST_F(SideBySide, AHookThatThrowsWaitsForTheRunsStartedAndRethrows) {
    for (const std::string throwing : {"skip", "run_cancel", "starting"}) {
        SCOPED_TRACE(throwing);
        auto result = plan(3);
        const auto& runs = result.plan.runs;
        run::CancelToken cancel;
        auto maybeThrow = [&](const std::string& hook, const train::PlannedRun& run) {
            if (hook == throwing && run.run_id == runs[1].run_id) {
                throw std::runtime_error("the front end cannot show this run");
            }
        };
        std::atomic<bool> first_ended{false};
        std::atomic<int> trained{0};
        std::atomic<int> finished{0};
        train::ExperimentHooks hooks;
        hooks.skip = [&](const train::PlannedRun& run) {
            maybeThrow("skip", run);
            return false;
        };
        hooks.run_cancel = [&](const train::PlannedRun& run) -> const run::CancelToken* {
            maybeThrow("run_cancel", run);
            return nullptr;
        };
        hooks.starting = [&](const train::PlannedRun& run) -> run::TrainObserver* {
            maybeThrow("starting", run);
            return nullptr;
        };
        hooks.finished = [&](const train::PlannedRun&, const run::RunOutcome&) { ++finished; };
        train::SideBySide places;
        places.runs_per_gpu = 3;
        try {
            train::trainSideBySide(
                *db_, cancel, hooks, places,
                [&](const train::PlannedRun&, int, const run::CancelToken&, run::TrainObserver*,
                    const std::function<bool()>&) {
                    ++trained;
                    std::this_thread::sleep_for(std::chrono::milliseconds(200));
                    first_ended = true;
                    return endedAs(run::RunStatus::Finished);
                },
                result);
            ADD_FAILURE() << "the hook's error did not reach the caller";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "the front end cannot show this run");
        }
        EXPECT_TRUE(first_ended) << "the run started was waited for";
        EXPECT_EQ(trained, 1);
        EXPECT_EQ(finished, 1);
        for (size_t i : {1u, 2u}) {
            EXPECT_EQ(statusOf(runs[i].run_id), run::RunStatus::Cancelled);
            EXPECT_EQ(errorOf(runs[i].run_id), "cancelled before it started");
        }
    }
}

TEST_F(SideBySide, ARunThatThrowsStopsTheQueueAndItsErrorIsRethrown) {
    auto result = plan(3);
    run::CancelToken cancel;
    std::atomic<int> trained{0};
    train::SideBySide places;
    EXPECT_THROW(train::trainSideBySide(
                     *db_, cancel, {}, places,
                     [&](const train::PlannedRun&, int, const run::CancelToken&,
                         run::TrainObserver*, const std::function<bool()>&) -> run::RunOutcome {
                         ++trained;
                         throw std::runtime_error("the run's file cannot be opened");
                     },
                     result),
                 std::runtime_error);
    EXPECT_EQ(trained, 1);
    EXPECT_EQ(statusOf(result.plan.runs[2].run_id), run::RunStatus::Cancelled);
}

// One run's cancel is not the experiment's: the others train; a run cancelled by the
// experiment's token (no token of its own) stops the queue.
TEST_F(SideBySide, ARunCancelledByItsOwnTokenEndsAloneTheOthersGoOn) {
    for (const bool own : {true, false}) {
        SCOPED_TRACE(own ? "its own token" : "the experiment's token");
        auto result = plan(3);
        const int64_t first = result.plan.runs[0].run_id;
        run::CancelToken cancel;
        run::CancelToken first_alone;
        train::ExperimentHooks hooks;
        if (own) {
            hooks.run_cancel = [&](const train::PlannedRun& run) -> const run::CancelToken* {
                return run.run_id == first ? &first_alone : nullptr;
            };
        }
        std::atomic<int> trained{0};
        train::SideBySide places;  // one at a time: the next waits for the first's end
        train::trainSideBySide(
            *db_, cancel, hooks, places,
            [&](const train::PlannedRun& run, int, const run::CancelToken& token,
                run::TrainObserver*, const std::function<bool()>&) {
                ++trained;
                if (run.run_id == first) {
                    (own ? first_alone : cancel).cancel();  // "cancel this run" or all
                    return endedAs(run::RunStatus::Cancelled);
                }
                return endedAs(token.cancelled() ? run::RunStatus::Cancelled
                                                 : run::RunStatus::Finished);
            },
            result);
        EXPECT_EQ(result.cancelled, !own);
        EXPECT_EQ(trained, own ? 3 : 1);
        EXPECT_FALSE(result.any_failed);
    }
}

// The experiment's cancel while a run waits for a GPU: it never starts, the
// experiment is marked cancelled and the run is left queued for the caller.
TEST_F(SideBySide, TheExperimentsCancelStopsTheWaitAndMarksItCancelled) {
    auto result = plan(3);
    run::CancelToken cancel;
    std::atomic<int> trained{0};
    train::SideBySide places;
    train::trainSideBySide(
        *db_, cancel, {}, places,
        [&](const train::PlannedRun&, int, const run::CancelToken&, run::TrainObserver*,
            const std::function<bool()>&) {
            ++trained;
            cancel.cancel();  // as it ends: its own outcome is Finished
            return endedAs(run::RunStatus::Finished);
        },
        result);
    EXPECT_EQ(trained, 1);
    EXPECT_TRUE(result.cancelled);
    EXPECT_EQ(statusOf(result.plan.runs[1].run_id), run::RunStatus::Queued);
}

TEST_F(SideBySide, ARunNeedingMoreGpusThanAllowedIsAnErrorBeforeItStarts) {
    auto result = plan(2);
    run::CancelToken cancel;
    bool trained = false;
    bool asked = false;
    train::ExperimentHooks hooks;
    hooks.skip = [&](const train::PlannedRun&) {
        asked = true;
        return false;
    };
    train::SideBySide places;
    places.gpus = 2;
    places.ranks = [](const train::PlannedRun&) { return 3; };
    try {
        train::trainSideBySide(
            *db_, cancel, hooks, places,
            [&](const train::PlannedRun&, int, const run::CancelToken&, run::TrainObserver*,
                const std::function<bool()>&) {
                trained = true;
                return endedAs(run::RunStatus::Finished);
            },
            result);
        ADD_FAILURE() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("needs 3 GPUs, 2 are allowed"), std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(trained);
    EXPECT_FALSE(asked);
}

// Runs that trained at once on one GPU each say so; the front end's observer hears
// them one call at a time.
TEST_F(SideBySide, RunsSharingAGpuKnowItAndTheObserverHearsOneCallAtATime) {
    auto result = plan(3);
    run::CancelToken cancel;
    OneAtATime observer;
    train::ExperimentHooks hooks;
    hooks.starting = [&](const train::PlannedRun&) -> run::TrainObserver* { return &observer; };
    std::mutex m;  // guards started and shared: the runs' threads write them
    std::condition_variable all_started;
    int started = 0;
    std::map<int64_t, bool> shared;
    train::SideBySide places;
    places.runs_per_gpu = 3;
    train::trainSideBySide(
        *db_, cancel, hooks, places,
        [&](const train::PlannedRun& run, int, const run::CancelToken&, run::TrainObserver* extra,
            const std::function<bool()>& shared_device) {
            {
                std::unique_lock<std::mutex> lock(m);
                ++started;
                all_started.notify_all();
                all_started.wait_for(lock, std::chrono::seconds(120), [&] { return started == 3; });
            }
            for (int i = 0; i < 2000; ++i) {
                extra->onStep({});
            }
            const bool was_shared = shared_device();
            std::lock_guard<std::mutex> lock(m);
            shared[run.run_id] = was_shared;
            return endedAs(run::RunStatus::Finished);
        },
        result);
    EXPECT_EQ(observer.steps, 6000);
    EXPECT_FALSE(observer.overlapped);
    ASSERT_EQ(shared.size(), 3u);
    for (const auto& [id, was] : shared) {
        EXPECT_TRUE(was) << "run " << id;
    }
}
