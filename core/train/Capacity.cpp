#include "core/train/Capacity.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/analysis/Format.h"
#include "core/config/SpecJson.h"
#include "core/probe/MemoryProbe.h"
#include "core/store/BatchSearchStore.h"
#include "core/train/Trainer.h"

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

}  // namespace

int64_t defaultCpuBudget() {
    return probe::physicalMemoryBytes() / 2;
}

BudgetCheck checkBudget(const std::string& device, int64_t requested) {
    BudgetCheck out;
    const bool cpu = device == "cpu";
    out.bytes = requested > 0 ? requested : (cpu ? defaultCpuBudget() : 0);
    const int64_t total = probe::deviceMemoryBytes(c10::Device(device));
    if (requested > 0 && total > 0 && requested > total) {
        out.warning = "the budget of " + analysis::formatBytes(requested) + " is more than " +
                      device + " has (" + analysis::formatBytes(total) + "); using " +
                      analysis::formatBytes(total);
        out.bytes = total;
    }
    if (cpu) {
        const int64_t resident = probe::residentBytes();
        if (resident > 0 && out.bytes <= resident) {
            out.error = "the budget of " + analysis::formatBytes(out.bytes) +
                        " is below what this process already holds before any trial (" +
                        analysis::formatBytes(resident) +
                        " resident, LibTorch included): no batch can fit; give a budget above " +
                        analysis::formatBytes(resident);
        }
    }
    return out;
}

BatchTrial runBatchTrial(const config::ExperimentSpec& spec, int arm_index, int64_t batch,
                         int64_t budget_bytes, int trial_steps, const CancelToken& cancel) {
    auto s = spec;
    const auto& arm = spec.arms.at(static_cast<size_t>(arm_index));
    s.arms = {arm};
    s.micro_batch = static_cast<int>(batch);
    s.epochs = 0;
    s.micro_steps = static_cast<int64_t>(std::max(1, trial_steps)) * arm.accumulation;
    s.warmup_steps = 0;
    s.eval_interval = 0;
    TrialObserver obs;
    TrainOptions opts;
    opts.final_eval = false;
    auto out = trainRun(s, 0, spec.seeds.empty() ? 1 : spec.seeds.front(), obs, cancel, opts);
    BatchTrial t;
    t.batch = batch;
    t.peak_bytes = obs.peak;
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
        t.message = "peak " + std::to_string(t.peak_bytes) + " bytes is over the budget of " +
                    std::to_string(budget_bytes);
    }
    if (resolveDevice(spec.device) != "cpu") {
        probe::MemoryProbe(c10::Device(resolveDevice(spec.device))).releaseCache();
    }
    return t;
}

ArmCapacity findArmCapacity(const config::ExperimentSpec& spec, int arm_index,
                            const CapacityOptions& options, const CancelToken& cancel,
                            store::Database* db, int64_t experiment_id,
                            const std::function<void(const BatchTrial&)>& on_trial) {
    const auto& arm = spec.arms.at(static_cast<size_t>(arm_index));
    ArmCapacity cap;
    cap.arm = arm.name;
    cap.device = resolveDevice(spec.device);
    const bool cpu = cap.device == "cpu";
    cap.precision = config::toString(resolvePrecision(arm.precision, !cpu));
    cap.checkpointing = arm.checkpointing;
    const BudgetCheck budget = checkBudget(cap.device, options.budget_bytes);
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
    int index = 0;
    auto trial = [&](int64_t batch) {
        if (cpu && cap.budget_bytes > 0 && !fitted.empty()) {
            const auto& a = fitted.front();
            const auto& b = fitted.back();
            double per_sample =
                b.batch != a.batch ? double(b.peak_bytes - a.peak_bytes) / double(b.batch - a.batch)
                                   : double(b.peak_bytes) / double(b.batch);
            double predicted = double(b.peak_bytes) + per_sample * double(batch - b.batch);
            // One point: a line through zero, an upper bound; doubling from a fit
            // then stays under 2x the budget. Two points: the fitted line.
            const double limit = fitted.size() == 1 ? 2.0 : 1.5;
            if (predicted > limit * double(cap.budget_bytes)) {
                BatchTrial t;
                t.batch = batch;
                t.outcome = TrialOutcome::PredictedOverBudget;
                t.peak_bytes = static_cast<int64_t>(predicted);
                t.message = "not run: extrapolated peak is far over the budget";
                return t;
            }
        }
        auto t =
            runBatchTrial(spec, arm_index, batch, cap.budget_bytes, options.trial_steps, cancel);
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
        if (on_trial) {
            on_trial(t);
        }
    };
    if (budget.error.empty()) {
        cap.result = findMaxBatch(trial, options.finder, &cancel, record);
    } else {
        cap.result.error = budget.error;  // checked before any trial: none could fit
        cap.result.budget_error = true;
    }
    const auto overBudget = [](const BatchTrial& t) {
        return t.outcome == TrialOutcome::OverBudget ||
               t.outcome == TrialOutcome::PredictedOverBudget;
    };
    if (cap.result.max_batch == 0 && cap.result.error.empty() && !cap.result.cancelled &&
        !cap.result.trials.empty() && cpu && cap.result.trials.back().batch == 1 &&
        overBudget(cap.result.trials.back())) {
        cap.result.error = "the budget of " + analysis::formatBytes(cap.budget_bytes) +
                           " is below what one sample needs (batch 1 peaked at " +
                           analysis::formatBytes(cap.result.trials.back().peak_bytes) + ")";
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
    const std::function<void(int, const BatchTrial&)>& on_trial) {
    std::vector<ArmCapacity> out;
    for (size_t i = 0; i < spec.arms.size() && !cancel.cancelled(); ++i) {
        const int arm = static_cast<int>(i);
        out.push_back(findArmCapacity(spec, arm, options, cancel, db, experiment_id,
                                      [&](const BatchTrial& t) {
                                          if (on_trial) {
                                              on_trial(arm, t);
                                          }
                                      }));
    }
    return out;
}

}  // namespace ampbench::train
