// The advice's measuring phases: each candidate timed alone in a pass (an end when a
// script refuses the batches), then the leaders' quality check on several seeds.
#include <algorithm>
#include <chrono>

#include "core/config/PlannedArm.h"
#include "core/train/private/Advisor.h"
#include "core/train/private/FastVerdict.h"
#include "core/train/private/PassCollector.h"
#include "core/util/Format.h"

namespace ampbench::train::detail {

/// Each candidate alone: warm-up and timed steps as a run of its own (a pass), fewer
/// timed steps where the budget's share for passes would not hold them.
void Advisor::passes() {
    std::vector<int> todo;
    for (size_t i = 0; i < result_.candidates.size(); ++i) {
        if (result_.candidates[i].role != config::CandidateRole::Unsupported) {
            todo.push_back(static_cast<int>(i));
        }
    }
    int64_t timed = opt_.timed_steps;
    const int64_t warmup = passWarmup(spec_);
    if (opt_.budget_s > 0 && probe_step_ms_ > 0) {
        // Each pass as the probe: its set-up, then its steps at its own batch.
        double per_step = 0, setup = 0;
        for (int i : todo) {
            const auto& arm = spec_.arms[static_cast<size_t>(i)];
            per_step += probe_step_ms_ / 1000.0 * config::microBatchOf(spec_, arm) *
                        arm.accumulation / spec_.micro_batch;
            setup += probe_seconds_ - kProbeSteps * probe_step_ms_ / 1000.0;
        }
        const double room = leftFor(kSearchShare + kPassShare) - setup;
        if (per_step > 0) {
            const auto fit = static_cast<int64_t>(room / per_step) - warmup;
            timed = std::clamp<int64_t>(fit, AdviseOptions::kLeastTimedSteps, timed);
        }
    }
    if (timed < opt_.timed_steps) {
        note("passes: " + std::to_string(timed) + " timed steps each (the budget's share for " +
             "passes holds no more)");
    }
    int done = 0;
    for (int i : todo) {
        if (stopped()) {
            return;
        }
        const auto& arm = spec_.arms[static_cast<size_t>(i)];
        progress(AdvisePhase::Pass, arm.name, done, static_cast<int>(todo.size()));
        const config::ExperimentSpec pass = passSpec(spec_, i, false, timed);
        const PlannedRun r =
            planRun(i, spec_.seeds.front(), plannedOptimizerSteps(pass, arm, train_size_), true);
        run::AloneTiming timing;
        PassCollector collector(timing);
        run::TrainObserver* extra = hooks_.starting ? hooks_.starting(r) : nullptr;
        std::vector<run::TrainObserver*> targets{&collector};
        if (extra) {
            targets.push_back(extra);
        }
        ObserverFanout fanout(targets);
        const run::RunOutcome outcome = trainer_.pass(pass, r, cancel_, &fanout);
        result_.any_failed = result_.any_failed || outcome.status == run::RunStatus::Failed;
        if (hooks_.finished) {
            hooks_.finished(r, outcome);
        }
        config::PassFigure f;
        f.candidate = i;
        f.ms_per_sample = timing.msPerSample();
        f.effective_batch = static_cast<int64_t>(config::microBatchOf(spec_, arm)) *
                            arm.accumulation * std::max(1, arm.ranks);
        f.ok = outcome.status == run::RunStatus::Finished && f.ms_per_sample > 0;
        if (f.ok) {
            if (const std::string why =
                    config::batchRefused(timing.step_samples, f.effective_batch);
                !why.empty()) {
                note(arm.name + ": " + why);
                f.ok = false;
                refused_.push_back(i);
            }
        }
        figures_.push_back(f);
        ++done;
    }
    refusedEnd();
}

/// A script that trained the baseline, or every other candidate, at another batch than it
/// was given gives no advice: the end says so (its passes are recorded, ruled out).
void Advisor::refusedEnd() {
    if (refused_.empty()) {
        return;
    }
    int others = 0;
    bool baseline = false;
    for (const auto& f : figures_) {
        others += f.candidate != 0 ? 1 : 0;
    }
    int refused_others = 0;
    for (int i : refused_) {
        baseline = baseline || i == 0;
        refused_others += i != 0 ? 1 : 0;
    }
    if (baseline || refused_others == others) {
        result_.end = AdviseEnd::ScriptRefused;
        result_.message = "the training script did not take the candidates' settings: " +
                          std::string(baseline ? "even fp32's batch" : "every candidate's batch") +
                          " came out other than given (the advice lists each); make it read "
                          "AMPBENCH_MICRO_BATCH and AMPBENCH_ACCUMULATION (README: Your own "
                          "training script)";
    }
}

/// The baseline and the leading candidates on the quality check's seeds, as an
/// experiment's runs train (each arm's seeds fused where they can be).
void Advisor::quality() {
    const double left = opt_.budget_s > 0 ? std::max(1e-3, opt_.budget_s - spent()) : 0.0;
    const config::QualityPlan q =
        config::planQuality(figures_, 0, opt_.leaders, opt_.seeds, user_.micro_batch, left);
    if (q.candidates.empty()) {
        if (std::isfinite(q.least_seconds) && q.least_seconds > 0) {
            note("no quality check: the " + util::roughDuration(left) +
                 " left of the budget is short of the " + util::roughDuration(q.least_seconds) +
                 " that fp32 and one candidate need on " + std::to_string(opt_.seeds) +
                 " seeds; give a larger --budget to check it");
        } else {
            note("no quality check: no candidate beside the baseline finished its pass");
        }
        return;
    }
    // Every arm of the stored spec makes more optimizer steps than its warm-up.
    int64_t micro_steps = q.micro_steps;
    for (const auto& c : result_.candidates) {
        const int64_t batch =
            static_cast<int64_t>(config::microBatchOf(user_, c.arm)) * c.arm.accumulation;
        micro_steps = std::max<int64_t>(
            micro_steps, (user_.warmup_steps + 2) * batch / std::max(1, user_.micro_batch) + 1);
    }
    storeSpec(micro_steps);
    std::vector<std::string> names;
    for (int c : q.candidates) {
        names.push_back(spec_.arms[static_cast<size_t>(c)].name);
    }
    note("quality check: " + joined(names, ", ") + " on " + std::to_string(opt_.seeds) +
         " seeds, " + std::to_string(micro_steps * user_.micro_batch) + " samples each (about " +
         util::roughDuration(q.seconds) + ")");
    ExperimentPlan plan;
    plan.experiment_id = result_.experiment_id;
    plan.device = choice_;
    for (uint64_t seed : spec_.seeds) {  // round-robin, seed by seed, as experiments train
        for (int c : q.candidates) {
            const auto& arm = spec_.arms[static_cast<size_t>(c)];
            plan.runs.push_back(
                planRun(c, seed, plannedOptimizerSteps(spec_, arm, train_size_), false));
        }
    }
    std::vector<config::FieldError> errors;
    auto valid = config::ValidSpec::check(spec_, errors);
    if (!valid) {
        throw SpecError(std::move(errors));
    }
    int done = 0;
    const int total = static_cast<int>(plan.runs.size());
    const double estimate = q.seconds;
    const auto started = Clock::now();
    ExperimentHooks h;
    h.starting = [&](const PlannedRun& r) -> run::TrainObserver* {
        const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
        progress(AdvisePhase::Quality, r.arm + " seed " + std::to_string(r.seed), done, total,
                 std::max(0.0, estimate - elapsed));
        return hooks_.starting ? hooks_.starting(r) : nullptr;
    };
    h.finished = [&](const PlannedRun& r, const run::RunOutcome& o) {
        ++done;
        if (hooks_.finished) {
            hooks_.finished(r, o);
        }
    };
    h.note = hooks_.note;
    const ExperimentResult trained = trainer_.quality(*valid, plan, cancel_, h);
    result_.any_failed = result_.any_failed || trained.any_failed;
}

}  // namespace ampbench::train::detail
