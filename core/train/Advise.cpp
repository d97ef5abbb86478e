// The advice (advise()): the device's formats, the max-batch searches, the candidates
// and their runs planned and stored; the built-in trainer and the advice's spec.
#include "core/train/Advise.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "core/amp/Precision.h"
#include "core/config/PlannedArm.h"
#include "core/config/SpecJson.h"
#include "core/data/InputRecord.h"
#include "core/probe/Environment.h"
#include "core/train/SetupCheck.h"
#include "core/train/private/Advisor.h"
#include "core/train/private/FastVerdict.h"
#include "core/util/Format.h"

namespace ampbench::train {
namespace detail {

/// A probe of fp32 at the user's batch, unrecorded: how long a step takes, and so whether
/// the budget holds a search and a pass of fp32 and one more format. False (nothing
/// recorded) when it does not.
bool Advisor::probeBudget() {
    if (!trainer_.searches) {
        return true;  // a script's steps are timed in its passes
    }
    config::ExperimentSpec s = user_;
    s.arms = {formats_.front().arm};
    const BatchTrial t =
        runBatchTrial(s, 0, user_.micro_batch, opt_.memory_bytes, kProbeSteps, cancel_);
    if (!t.fits() || !(t.step_ms > 0)) {
        return true;  // the searches say what fits; nothing to size the budget by
    }
    probe_step_ms_ = t.step_ms;
    probe_seconds_ = t.seconds;
    int supported = 0;
    for (const auto& f : formats_) {
        supported += f.unsupported.empty() ? 1 : 0;
    }
    const int formats = std::min(supported, 2);
    const double pass =
        t.seconds + (passWarmup(user_) + AdviseOptions::kLeastTimedSteps) * t.step_ms / 1000.0;
    // A search doubles from the user's batch: some five trials, the larger ones dearer.
    const double least = formats * (5 * t.seconds + pass);
    if (opt_.budget_s > 0 && opt_.budget_s < least) {
        char text[512];
        std::snprintf(text, sizeof text,
                      "the budget of %s is too small for even one candidate: %d steps of fp32 at "
                      "batch %d took %.1f s here (set-up included), and the least advice (a "
                      "max-batch search and a pass of fp32 and one more format) needs about %s; "
                      "give --budget %.0fs or more, or leave it out and the advice takes what "
                      "it needs (nothing was recorded)",
                      util::roughDuration(opt_.budget_s).c_str(), kProbeSteps, user_.micro_batch,
                      t.seconds, util::roughDuration(least).c_str(), std::ceil(least));
        result_.end = AdviseEnd::BudgetTooSmall;
        result_.message = text;
        return false;
    }
    return true;
}

void Advisor::createExperiment() {
    spec_ = user_;
    spec_.name = user_.name + "-advice";
    config::ArmSpec baseline = formats_.front().arm;
    spec_.arms = {baseline};
    result_.experiment_id = db_.createExperiment(spec_.name, config::specToJsonText(spec_));
    if (hooks_.started) {
        hooks_.started(result_.experiment_id);
    }
}

/// Each supported format's largest batch, recorded under the experiment; then, where
/// one falls short of the user's batch and the model can checkpoint, with checkpointing.
void Advisor::search() {
    if (!trainer_.searches) {
        note(
            "max batch: not searched (a training script holds its own memory); every "
            "format at your batch of " +
            std::to_string(user_.micro_batch));
        return;
    }
    CapacityOptions o;
    o.budget_bytes = opt_.memory_bytes;
    o.trial_steps = kProbeSteps;
    o.finder.start = user_.micro_batch;
    o.finder.upper_bound = std::max<int64_t>(
        user_.micro_batch, opt_.max_batch > 0 ? opt_.max_batch : int64_t{8} * user_.micro_batch);
    if (train_size_ > 0) {
        o.finder.upper_bound = std::min(o.finder.upper_bound, train_size_);
    }
    o.finder.resolution = 0.1;
    o.finder.max_trials = 12;
    if (!cuda_) {
        o.cpu_base_bytes = measureCpuBase(user_);
    }
    struct Job {
        const config::AdviceFormat* format;
        bool checkpointing;
    };
    std::vector<Job> jobs;
    for (const auto& f : formats_) {
        if (f.unsupported.empty()) {
            jobs.push_back({&f, false});
        }
    }
    for (size_t i = 0; i < jobs.size() && !cancel_.cancelled(); ++i) {
        const Job job = jobs[i];
        const std::string name = config::searchName(job.format->name, job.checkpointing);
        if (opt_.budget_s > 0 && leftFor(kSearchShare) <= 0) {
            note("max batch of " + name + ": not searched (the budget's share for searches is " +
                 "spent); it trains at your batch");
            continue;
        }
        progress(AdvisePhase::Search, name, static_cast<int>(i), static_cast<int>(jobs.size()));
        config::ExperimentSpec s = user_;
        s.arms = {job.format->arm};
        s.arms[0].name = name;
        s.arms[0].checkpointing = job.checkpointing;
        ArmCapacity c = findArmCapacity(s, 0, o, cancel_, &db_, result_.experiment_id,
                                        [&](const BatchTrial& t, const SearchOutlook& outlook) {
                                            if (hooks_.trial) {
                                                CapacityProgress p;
                                                p.arm = static_cast<int>(i);
                                                p.arms = static_cast<int>(jobs.size());
                                                p.trial = t;
                                                p.seconds_left = outlook.seconds_left;
                                                hooks_.trial(p);
                                            }
                                            progress(AdvisePhase::Search, name, static_cast<int>(i),
                                                     static_cast<int>(jobs.size()));
                                        });
        config::FormatCapacity cap;
        cap.format = job.format->name;
        cap.checkpointing = job.checkpointing;
        // At the upper bound nothing failed: the bound fits, no margin below a limit to keep.
        cap.safe_batch = c.result.reached_upper_bound ? c.result.max_batch : c.result.safe_batch;
        cap.reached_upper_bound = c.result.reached_upper_bound;
        cap.error = c.result.budget_error ? std::string() : c.result.error;
        note("max batch of " + name + ": " + c.result.summary());
        searches_.push_back(c);
        capacities_.push_back(cap);
        if (!job.checkpointing && config::wantsCheckpointSearch(user_, *job.format, cap)) {
            jobs.push_back({job.format, true});
        }
    }
}

/// The candidates from the searches; false (NothingFits) when no format fit batch 1.
bool Advisor::chooseCandidates() {
    result_.candidates = config::adviceCandidates(user_, formats_, capacities_, opt_.lr_rule);
    const bool any = std::any_of(result_.candidates.begin(), result_.candidates.end(),
                                 [](const config::AdviceCandidate& c) {
                                     return c.role != config::CandidateRole::Unsupported;
                                 });
    if (!any) {
        std::vector<std::string> why;
        for (const auto& s : searches_) {
            why.push_back(s.arm + ": " +
                          (s.result.error.empty() ? s.result.summary() : s.result.error));
        }
        result_.end = AdviseEnd::NothingFits;
        result_.message =
            "nothing fits: no format trains even batch 1 of this model" +
            std::string(opt_.memory_bytes > 0
                            ? " within the memory budget of " + util::formatBytes(opt_.memory_bytes)
                            : std::string()) +
            " (" + joined(why, "; ") +
            "); a smaller model, a larger --memory, or a device with more memory (the searches "
            "are recorded in experiment " +
            std::to_string(result_.experiment_id) + ")";
        return false;
    }
    std::vector<std::string> mixed;
    for (const auto& f : formats_) {
        if (f.name != "fp32" && f.name != "tf32") {
            mixed.push_back(f.name + ": " + (f.unsupported.empty() ? "runs" : f.unsupported));
        }
    }
    const bool none = std::all_of(formats_.begin(), formats_.end(), [](const auto& f) {
        return f.name == "fp32" || f.name == "tf32" || !f.unsupported.empty();
    });
    if (none) {
        result_.end = AdviseEnd::NoMixedPrecision;
        result_.message = "no mixed precision trains here (" + joined(mixed, "; ") +
                          "): the advice compares fp32 settings only";
        note(result_.message);
    }
    return true;
}

void Advisor::storeSpec(int64_t micro_steps) {
    spec_ = adviceSpec(user_, result_.candidates, opt_.seeds, micro_steps);
    db_.setExperimentSpec(result_.experiment_id, config::specToJsonText(spec_));
}

PlannedRun Advisor::planRun(int arm_index, uint64_t seed, int64_t steps, bool pass) {
    const config::ArmSpec& arm = spec_.arms.at(static_cast<size_t>(arm_index));
    PlannedRun r;
    // Planned once, here, on the advice's device: what trains it takes the plan as given.
    static_cast<RunPlan&>(r) = train::planRun(spec_, arm_index, seed, choice_);
    r.planned.timing_pass = pass;
    r.arm = arm.name;
    r.planned_steps = steps;
    r.run_id = db_.createRun(result_.experiment_id, arm.name, arm_index, seed,
                             config::plannedArmToJson(r.planned), steps, inputs_json_);
    return r;
}

/// A format the device cannot train: one failed run of its candidate, in the words of
/// this build's own check, so that every listing (and the report) shows why.
void Advisor::recordUnsupported() {
    for (size_t i = 0; i < result_.candidates.size(); ++i) {
        const auto& c = result_.candidates[i];
        if (c.role != config::CandidateRole::Unsupported) {
            continue;
        }
        const PlannedRun r = planRun(static_cast<int>(i), spec_.seeds.front(), 0, true);
        db_.finishRun(r.run_id, run::RunStatus::Failed,
                      "arm '" + c.arm.name + "': " + c.unsupported, run::FailureKind::Setup);
    }
}

AdviseResult Advisor::run() {
    choice_ = chooseDevice(user_.device);
    if (!choice_.problem.empty()) {
        throw std::runtime_error(choice_.problem);
    }
    device_ = choice_.placement.str();
    cuda_ = choice_.placement.isCuda();
    facts_ = trainer_.device ? *trainer_.device : adviceDevice(device_);
    formats_ = config::adviceFormats(user_, facts_);
    if (!probeBudget()) {
        return result_;
    }
    try {
        train_size_ = trainingSetSize(user_.data);
    } catch (const std::exception&) {
        train_size_ = 0;  // a script reads its own data
    }
    inputs_json_ = run::inputsToJson(data::recordInputs(user_));
    createExperiment();
    search();
    if (stopped() || !chooseCandidates()) {
        return result_;
    }
    storeSpec(user_.micro_steps);
    recordUnsupported();
    passes();
    if (stopped() || result_.end == AdviseEnd::ScriptRefused) {
        return result_;
    }
    quality();
    stopped();
    return result_;
}

}  // namespace detail

std::string toString(AdvisePhase phase) {
    switch (phase) {
        case AdvisePhase::Search:
            return "max batch";
        case AdvisePhase::Pass:
            return "timing";
        case AdvisePhase::Quality:
            return "quality check";
    }
    return "?";
}

config::AdviceDevice adviceDevice(const std::string& device) {
    const c10::Device d(device);
    config::AdviceDevice out;
    out.cuda = d.is_cuda();
    const config::ArmSpec arm;
    out.fp16 = amp::Precision::make(config::Precision::AmpFp16, arm, d)->unsupported();
    out.bf16 = amp::Precision::make(config::Precision::AmpBf16, arm, d)->unsupported();
    out.fp8 = amp::Precision::make(config::Precision::Fp8, arm, d)->unsupported();
    if (out.cuda) {
        const std::string cc = probe::probeEnvironment(device).compute_capability;
        out.tf32 = !cc.empty() && std::atoi(cc.c_str()) >= 8;
    }
    return out;
}

config::ExperimentSpec adviceSpec(const config::ExperimentSpec& user,
                                  const std::vector<config::AdviceCandidate>& candidates, int seeds,
                                  int64_t micro_steps) {
    config::ExperimentSpec s = user;
    s.name = user.name + "-advice";
    s.arms.clear();
    for (const auto& c : candidates) {
        s.arms.push_back(c.arm);
    }
    s.seeds.clear();
    for (int i = 0; i < std::max(1, seeds); ++i) {
        s.seeds.push_back(user.seeds.empty() ? static_cast<uint64_t>(i + 1)
                                             : user.seeds.front() + static_cast<uint64_t>(i));
    }
    s.epochs = 0;
    s.micro_steps = micro_steps;
    s.eval_interval = 0;  // at the end: the final metric the verdict judges
    s.numerics_every = 0;
    s.fuse_seeds = config::Switch::On;  // where the model can: the seeds cost less together
    s.save_weights.clear();
    return s;
}

AdviseTrainer builtInTrainer(store::Database& db, const TrainOptions& options) {
    AdviseTrainer t;
    t.pass = [&db, options](const config::ExperimentSpec& spec, const PlannedRun& run,
                            const run::CancelToken& cancel, run::TrainObserver* observer) {
        return executeRun(db, spec, run, cancel, observer, passOptions(options));
    };
    t.quality = [&db, options](const config::ValidSpec& spec, ExperimentPlan plan,
                               const run::CancelToken& cancel, const ExperimentHooks& hooks) {
        return trainPlanned(db, spec, std::move(plan), cancel, hooks, options);
    };
    return t;
}

AdviseResult advise(store::Database& db, const config::ValidSpec& spec,
                    const AdviseOptions& options, const run::CancelToken& cancel,
                    const AdviseHooks& hooks, const AdviseTrainer& trainer) {
    db.requireIntact();  // nothing is added to a damaged file
    if (!hooks.setup_checked && trainer.searches) {
        SetupReport report = checkSetup(spec.spec());
        if (!report.ok()) {
            throw SetupError(std::move(report));
        }
    }
    AdviseTrainer t = trainer;
    if (!t.pass || !t.quality) {  // the built-in trainer, with what the caller says of the device
        const AdviseTrainer built_in = builtInTrainer(db);
        t.pass = t.pass ? t.pass : built_in.pass;
        t.quality = t.quality ? t.quality : built_in.quality;
    }
    detail::Advisor advisor(db, spec.spec(), options, cancel, hooks, t);
    return advisor.run();
}

}  // namespace ampbench::train
