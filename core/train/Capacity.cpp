#include "core/train/Capacity.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/config/SpecJson.h"
#include "core/data/Datasets.h"
#include "core/probe/MemoryProbe.h"
#include "core/store/BatchSearchStore.h"
#include "core/train/Trainer.h"
#include "core/util/Format.h"

namespace ampbench::train {

using namespace run;  // the records a run emits
namespace {

struct TrialObserver : TrainObserver {
    int64_t peak = 0;
    std::vector<double> ms;
    bool oom = false;
    void onStep(const StepRecord& s) override {
        peak = std::max(peak, s.mem_peak);
        if (s.step_ms > 0) {
            ms.push_back(s.step_ms);
        }
    }
    void onEvent(const EventRecord& e) override { oom = oom || e.kind == EventKind::OutOfMemory; }
};

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

/// "peak 1.03 GiB is 30.5 MiB over the 1.00 GiB budget"
std::string overBudgetText(int64_t peak, int64_t budget) {
    return "peak " + util::formatBytes(peak) + " is " + util::formatBytes(peak - budget) +
           " over the " + util::formatBytes(budget) + " budget";
}

}  // namespace

int64_t measureCpuBase(const config::ExperimentSpec& spec) {
    try {
        (void)data::openDataset(spec.data);  // a file read once per process stays resident
    } catch (const std::exception&) {
        // The first trial reports it.
    }
    probe::releaseFreedHeap();
    return probe::residentBytes();
}

int64_t defaultCpuBudget() {
    return probe::physicalMemoryBytes() / 2;
}

BudgetCheck checkBudget(const std::string& device, int64_t requested, int64_t cpu_base) {
    BudgetCheck out;
    const bool cpu = device == "cpu";
    out.bytes = requested > 0 ? requested : (cpu ? defaultCpuBudget() : 0);
    const int64_t total = probe::deviceMemoryBytes(c10::Device(device));
    // On CPU a trial adds to what the process holds: the budget is the memory beside it.
    const int64_t resident =
        !cpu ? 0 : std::max<int64_t>(0, cpu_base > 0 ? cpu_base : probe::residentBytes());
    const int64_t room = total - resident;
    if (total > 0 && room > 0 && out.bytes > room) {
        out.warning = "the budget of " + util::formatBytes(out.bytes) + " is more than " + device +
                      " has (" + util::formatBytes(total) +
                      (cpu ? ", " + util::formatBytes(resident) + " of it held by this process"
                           : std::string()) +
                      "); using " + util::formatBytes(room);
        out.bytes = room;
    }
    return out;
}

BatchTrial runBatchTrial(const config::ExperimentSpec& spec, int arm_index, int64_t batch,
                         int64_t budget_bytes, int trial_steps, const CancelToken& cancel) {
    return runBatchTrial(spec, arm_index, batch, budget_bytes, trial_steps, cancel,
                         chooseDevice(spec.device));
}

BatchTrial runBatchTrial(const config::ExperimentSpec& spec, int arm_index, int64_t batch,
                         int64_t budget_bytes, int trial_steps, const CancelToken& cancel,
                         const DeviceChoice& device) {
    const auto started = Clock::now();
    const bool cpu = !device.placement.isCuda();
    auto s = spec;
    const auto& arm = spec.arms.at(static_cast<size_t>(arm_index));
    s.arms = {arm};
    s.arms[0].ranks = 1;        // a data-parallel arm's batch is per rank: one rank measures it
    s.arms[0].micro_batch = 0;  // the trial's batch is the experiment's
    s.micro_batch = static_cast<int>(batch);
    s.epochs = 0;
    s.micro_steps = static_cast<int64_t>(std::max(1, trial_steps)) * arm.accumulation;
    s.warmup_steps = 0;
    s.eval_interval = 0;
    BatchTrial t;
    t.batch = batch;
    probe::CpuPeakWindow window;
    if (cpu) {
        window = probe::startCpuPeakWindow(kCpuPeakResetTolerance);
        if (!window.ok()) {
            t.outcome = TrialOutcome::Error;
            t.message = "cannot measure a trial's peak memory on its own: " + window.problem;
            return t;
        }
    }
    TrialObserver obs;
    TrainOptions opts;
    opts.final_eval = false;
    auto out = trainRun(s, planRun(s, 0, spec.seeds.empty() ? 1 : spec.seeds.front(), device), obs,
                        cancel, opts);
    t.peak_bytes = obs.peak;
    if (cpu) {
        // What the trial added to the resident set it started from (the run resets
        // the peak again after its set-up, which stays resident).
        const int64_t peak = std::max(obs.peak, probe::peakResidentBytes());
        t.peak_bytes = std::max<int64_t>(0, peak - window.resident);
    }
    // The first step includes one-time set-up (cuDNN algorithm search): take the last.
    t.step_ms = obs.ms.empty() ? 0.0 : obs.ms.back();
    if (out.status == RunStatus::Cancelled) {
        t.outcome = TrialOutcome::Error;
        t.message = "cancelled";
    } else if (out.status == RunStatus::Failed) {
        t.outcome = obs.oom ? TrialOutcome::OutOfMemory : TrialOutcome::Error;
        t.message = out.error;
    } else if (budget_bytes > 0 && t.peak_bytes > budget_bytes) {
        t.outcome = TrialOutcome::OverBudget;
        t.message = overBudgetText(t.peak_bytes, budget_bytes);
    }
    if (!cpu && device.problem.empty()) {
        probe::MemoryProbe(c10::Device(device.placement.str())).releaseCache();
    }
    t.seconds = secondsSince(started);
    return t;
}

ArmCapacity findArmCapacity(
    const config::ExperimentSpec& spec, int arm_index, const CapacityOptions& options,
    const CancelToken& cancel, store::Database* db, int64_t experiment_id,
    const std::function<void(const BatchTrial&, const SearchOutlook&)>& on_trial) {
    const auto& arm = spec.arms.at(static_cast<size_t>(arm_index));
    ArmCapacity cap;
    cap.arm = arm.name;
    // The search's one plan of the device and the arm: every trial takes them as given.
    const DeviceChoice device = chooseDevice(spec.device);
    if (!device.problem.empty()) {
        throw std::runtime_error(device.problem);
    }
    cap.device = device.placement.str();
    const bool cpu = !device.placement.isCuda();
    cap.precision = config::toString(*config::planArm(spec, arm, !cpu).precision);
    cap.checkpointing = arm.checkpointing;
    const int64_t cpu_base =
        !cpu ? 0 : (options.cpu_base_bytes > 0 ? options.cpu_base_bytes : measureCpuBase(spec));
    const BudgetCheck budget = checkBudget(cap.device, options.budget_bytes, cpu_base);
    cap.budget_bytes = budget.bytes;

    std::unique_ptr<store::BatchSearchStore> st;
    if (db) {
        st = std::make_unique<store::BatchSearchStore>(*db);
        store::BatchSearchRow row;
        row.experiment_id = experiment_id;
        row.arm = cap.arm;
        row.precision = cap.precision;
        row.checkpointing = cap.checkpointing;
        row.device = cap.device;
        row.budget_bytes = cap.budget_bytes;
        row.margin = options.finder.margin;
        auto single = spec;
        single.arms = {arm};
        row.spec_json = config::specToJsonText(single);
        cap.search_id = st->create(row);
    }
    std::vector<BatchTrial> fitted;  // for extrapolating the CPU peak
    std::vector<BatchTrial> done;    // every trial so far, for the outlook
    int index = 0;
    const auto predictedPeak = [&](int64_t batch) {
        const auto& a = fitted.front();
        const auto& b = fitted.back();
        double per_sample = b.batch != a.batch
                                ? double(b.peak_bytes - a.peak_bytes) / double(b.batch - a.batch)
                                : double(b.peak_bytes) / double(b.batch);
        return double(b.peak_bytes) + per_sample * double(batch - b.batch);
    };
    // The smallest batch the fitted peaks put over the budget (0: none fitted yet).
    const auto predictedFailure = [&]() -> int64_t {
        if (fitted.empty()) {
            return 0;
        }
        const auto& a = fitted.front();
        const auto& b = fitted.back();
        // Peaks of small batches a few MiB apart put the failure anywhere: extrapolated
        // beyond three more doublings the outlook stays unknown instead of swinging by
        // minutes, unless the upper bound, which ends the doubling anyway, is in reach.
        const double reach = double(kOutlookReach) * double(b.batch);
        const int64_t bound =
            double(options.finder.upper_bound) <= reach ? options.finder.upper_bound + 1 : 0;
        if (!cpu || cap.budget_bytes <= 0 || fitted.size() < 2) {
            return bound;
        }
        const double per_sample = double(b.peak_bytes - a.peak_bytes) / double(b.batch - a.batch);
        if (per_sample <= 0) {
            return bound;  // peaks that do not grow (noise on a small model) say nothing
        }
        const double room = double(cap.budget_bytes - b.peak_bytes) / per_sample;
        if (b.batch + room > reach) {
            return bound;
        }
        return b.batch + std::max<int64_t>(1, static_cast<int64_t>(std::floor(room)) + 1);
    };
    auto trial = [&](int64_t batch) {
        if (cpu && cap.budget_bytes > 0 && !fitted.empty()) {
            const double predicted = predictedPeak(batch);
            // One point: a line through zero, an upper bound; doubling from a fit
            // then stays under 2x the budget. Two points: the fitted line.
            const double limit = fitted.size() == 1 ? 2.0 : 1.5;
            if (predicted > limit * double(cap.budget_bytes)) {
                BatchTrial t;
                t.batch = batch;
                t.outcome = TrialOutcome::PredictedOverBudget;
                t.peak_bytes = static_cast<int64_t>(predicted);
                t.message = "not run: the peaks so far extrapolate to " +
                            util::formatBytes(t.peak_bytes) + ", far over the " +
                            util::formatBytes(cap.budget_bytes) + " budget";
                return t;
            }
        }
        auto t = runBatchTrial(spec, arm_index, batch, cap.budget_bytes, options.trial_steps,
                               cancel, device);
        if (t.fits()) {
            fitted.push_back(t);
            std::sort(fitted.begin(), fitted.end(),
                      [](const BatchTrial& x, const BatchTrial& y) { return x.batch < y.batch; });
        }
        return t;
    };
    auto record = [&](const BatchTrial& t) {
        if (st) {
            st->addTrial(cap.search_id, index,
                         {t.batch, toString(t.outcome), t.peak_bytes, t.step_ms, t.message});
        }
        ++index;
        done.push_back(t);
        if (on_trial) {
            on_trial(t, searchOutlook(done, options.finder, predictedFailure()));
        }
    };
    cap.result = findMaxBatch(trial, options.finder, &cancel, record);
    const auto overBudget = [](const BatchTrial& t) {
        return t.outcome == TrialOutcome::OverBudget ||
               t.outcome == TrialOutcome::PredictedOverBudget;
    };
    if (cap.result.max_batch == 0 && cap.result.error.empty() && !cap.result.cancelled &&
        !cap.result.trials.empty() && cpu && cap.result.trials.back().batch == 1 &&
        overBudget(cap.result.trials.back())) {
        const auto& one = cap.result.trials.back();
        cap.result.error =
            "the budget is below what one sample needs: batch 1 " +
            std::string(one.outcome == TrialOutcome::PredictedOverBudget ? "would peak"
                                                                         : "peaked") +
            " at " + util::formatBytes(one.peak_bytes) + ", above the " +
            util::formatBytes(cap.budget_bytes) + " budget";
        cap.result.budget_error = true;
    }
    if (st) {
        store::BatchSearchRow row;
        row.max_batch = cap.result.max_batch;
        row.safe_batch = cap.result.safe_batch;
        row.first_failure = cap.result.first_failure;
        row.peak_at_max = cap.result.peak_at_max;
        row.status = cap.result.cancelled ? "cancelled"
                                          : (!cap.result.error.empty() ? "failed" : "finished");
        row.note = cap.result.summary();
        st->finish(cap.search_id, row);
    }
    return cap;
}

std::vector<ArmCapacity> findCapacities(
    const config::ExperimentSpec& spec, const CapacityOptions& options, const CancelToken& cancel,
    store::Database* db, int64_t experiment_id,
    const std::function<void(const CapacityProgress&)>& on_trial) {
    CapacityOptions o = options;
    if (o.cpu_base_bytes <= 0 && !chooseDevice(spec.device).placement.isCuda()) {
        o.cpu_base_bytes = measureCpuBase(spec);
    }
    std::vector<ArmCapacity> out;
    double finished_seconds = 0;  // of the arms done
    const int arms = static_cast<int>(spec.arms.size());
    // A trial trains trial_steps × K micro-batches, so an arm's search costs in
    // proportion to its accumulation K: arms not started are estimated from the
    // seconds per unit of K of the arms so far (an accum-4 arm takes about 4 times
    // an fp32 arm's time, which a plain mean of the arms put at 1).
    const auto weight = [&](int arm) {
        return static_cast<double>(std::max(1, spec.arms[static_cast<size_t>(arm)].accumulation));
    };
    double finished_weight = 0;  // of the arms done
    for (int arm = 0; arm < arms && !cancel.cancelled(); ++arm) {
        const auto started = Clock::now();
        out.push_back(findArmCapacity(
            spec, arm, o, cancel, db, experiment_id,
            [&](const BatchTrial& t, const SearchOutlook& outlook) {
                if (!on_trial) {
                    return;
                }
                CapacityProgress p;
                p.arm = arm;
                p.arms = arms;
                p.trial = t;
                if (outlook.known()) {
                    const double this_arm = secondsSince(started) + outlook.seconds_left;
                    const double per_weight =
                        (finished_seconds + this_arm) / (finished_weight + weight(arm));
                    double later = 0;
                    for (int next = arm + 1; next < arms; ++next) {
                        later += weight(next);
                    }
                    p.seconds_left = outlook.seconds_left + per_weight * later;
                }
                on_trial(p);
            }));
        finished_seconds += secondsSince(started);
        finished_weight += weight(arm);
    }
    return out;
}

}  // namespace ampbench::train
