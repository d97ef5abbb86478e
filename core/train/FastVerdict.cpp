#include "core/train/private/FastVerdict.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/probe/MemoryProbe.h"
#include "core/train/private/PassCollector.h"
#include "core/train/private/RunLoop.h"
#include "core/train/private/SpreadRuns.h"
#include "core/train/private/StepGraph.h"
#include "core/util/Format.h"

namespace ampbench::train {
namespace {

std::string passText(const config::ArmSpec& arm, const AlonePass& p) {
    if (!p.ok) {
        return "arm '" + arm.name + "' alone, " + p.timing.mode + ": " + p.error;
    }
    const double ms = p.timing.medianStepMs();
    char step[32];
    std::snprintf(step, sizeof step, "%.3g ms", ms);
    char took[32];
    std::snprintf(took, sizeof took, " (%.1f s)", p.wall_s);
    std::string text = "arm '" + arm.name + "' alone, " + p.timing.mode + ": median step " + step +
                       ", peak " + util::formatBytes(p.timing.peak_allocated) + took;
    if (p.timing.mode == "graph" && !p.captured) {
        text += " (its step could not be captured: it trains eagerly)";
    }
    return text;
}

}  // namespace

int64_t passWarmup(const config::ExperimentSpec& spec) {
    return std::max<int64_t>(spec.warmup_steps, kEagerStepsBeforeCapture + 2);
}

config::ExperimentSpec passSpec(const config::ExperimentSpec& spec, int arm_index, bool graph,
                                int64_t timed) {
    config::ExperimentSpec t = spec;
    const int64_t warmup = passWarmup(spec);
    t.epochs = 0;
    t.eval_interval = 0;
    t.eval_batches = 1;
    t.numerics_every = 0;
    t.save_weights.clear();
    t.warmup_steps = static_cast<int>(warmup);
    auto& arm = t.arms.at(static_cast<size_t>(arm_index));
    // Micro-steps count the experiment's micro-batches: an arm with one of its own
    // trains as many samples, so its share is asked for in the experiment's.
    const int64_t own = config::microBatchOf(t, arm);
    t.micro_steps = ((warmup + timed) * arm.accumulation * own + t.micro_batch - 1) / t.micro_batch;
    arm.cuda_graph = graph;
    return t;
}

TrainOptions passOptions(const TrainOptions& options) {
    TrainOptions o = options;
    o.final_eval = false;
    o.save_model_to.clear();
    o.shared_device = {};
    o.opening_events = {};
    o.parameters_out = nullptr;
    return o;
}

std::vector<AlonePass> timeArmsAlone(const config::ExperimentSpec& spec, const DeviceChoice& device,
                                     const run::CancelToken& cancel, const TrainOptions& options,
                                     const std::function<void(const std::string&)>& note) {
    std::vector<AlonePass> out;
    const int64_t warmup = passWarmup(spec);
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        const config::ArmSpec& arm = spec.arms[i];
        if (arm.ranks > 1) {
            continue;  // a data-parallel arm has its GPUs to itself already
        }
        std::vector<bool> modes = {false};
        if (StepGraph::available()) {
            modes.push_back(true);
        }
        for (const bool graph : modes) {
            if (cancel.cancelled()) {
                return out;
            }
            const config::ExperimentSpec t = passSpec(spec, static_cast<int>(i), graph);
            AlonePass pass;
            pass.arm_index = static_cast<int>(i);
            pass.timing.mode = graph ? "graph" : "eager";
            pass.timing.warmup_steps = warmup;
            PassCollector collector(pass.timing);
            const TrainOptions o = passOptions(options);
            StepGraph::releasePools();  // the pass's reserved memory is its own
            const auto t0 = std::chrono::steady_clock::now();
            const run::RunOutcome r =
                trainRun(t, planRun(t, static_cast<int>(i), spec.seeds.front(), device), collector,
                         cancel, o);
            pass.wall_s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            pass.ok = r.status == run::RunStatus::Finished;
            pass.captured = graph && pass.ok && !collector.fellBack();
            pass.error = r.error.empty() ? run::toString(r.status) : r.error;
            if (r.status == run::RunStatus::Cancelled) {
                return out;
            }
            if (note) {
                note(passText(arm, pass));
            }
            out.push_back(std::move(pass));
        }
    }
    StepGraph::releasePools();
    return out;
}

config::ExperimentSpec fastVerdictSpec(const config::ExperimentSpec& spec,
                                       const std::vector<AlonePass>& passes,
                                       const std::vector<SharingPass>& sharing, int gpus,
                                       const std::function<void(const std::string&)>& note) {
    config::ExperimentSpec out = spec;
    // Resolved here, so that the stored spec says what the runs (and the passes) did.
    const std::string cudnn = config::cudnnBenchmarkText(spec);
    out.cudnn_benchmark = config::cudnnBenchmark(spec) ? config::Switch::On : config::Switch::Off;
    std::vector<std::string> graphed, eager;
    for (size_t i = 0; i < out.arms.size(); ++i) {
        auto& arm = out.arms[i];
        for (const auto& p : passes) {
            if (p.arm_index == static_cast<int>(i) && p.timing.mode == "graph" && p.captured) {
                arm.cuda_graph = true;
            }
        }
        (arm.cuda_graph ? graphed : eager).push_back(arm.name);
    }
    int64_t device_bytes = 0;
    if (!passes.empty()) {
        device_bytes = probe::deviceMemoryBytes(c10::Device(c10::DeviceType::CUDA, 0));
    }
    const SharingChoice choice = chooseSharing(out, passes, sharing, gpus, device_bytes);
    out.fuse_seeds = choice.fuse ? config::Switch::On : config::Switch::Off;
    out.runs_per_gpu = choice.per_gpu;
    if (note) {
        auto list = [](const std::vector<std::string>& names) {
            std::string t;
            for (const auto& n : names) {
                t += (t.empty() ? "" : ", ") + n;
            }
            return t.empty() ? std::string("none") : t;
        };
        double passes_s = 0;
        for (const auto& p : passes) {
            passes_s += p.wall_s;
        }
        for (const auto& p : sharing) {
            passes_s += p.wall_s;
        }
        const int64_t runs = static_cast<int64_t>(out.arms.size() * out.seeds.size());
        char took[64];
        std::snprintf(took, sizeof took, "; the passes took %.1f s", passes_s);
        const std::string packed =
            choice.fuse ? " runs (each arm's seeds fused into one model where it can), " +
                              std::to_string(out.runs_per_gpu) + " models or runs at a time per GPU"
                        : " runs, " + std::to_string(out.runs_per_gpu) + " at a time per GPU";
        std::string why;
        for (const std::string& w : {choice.fuse_why, choice.pack_why}) {
            if (!w.empty()) {
                why += (why.empty() ? " (" : "; ") + w;
            }
        }
        if (!why.empty()) {
            why += ")";
        }
        note("fast verdict: " + std::to_string(runs) + packed + why + "; CUDA graphs for " +
             list(graphed) + "; eager for " + list(eager) + "; cuDNN autotuning " + cudnn + took);
    }
    return out;
}

std::vector<run::EventRecord> fastVerdictEvents(const config::ExperimentSpec& spec,
                                                const std::vector<AlonePass>& passes, int arm_index,
                                                uint64_t seed) {
    std::vector<run::EventRecord> out;
    const auto& arm = spec.arms.at(static_cast<size_t>(arm_index));
    run::EventRecord info;
    info.kind = run::EventKind::Info;
    info.message = std::string("fast verdict: trained ") +
                   (arm.cuda_graph ? "in CUDA-graph mode" : "eagerly") + ", up to " +
                   std::to_string(spec.runs_per_gpu) +
                   " runs at a time per GPU, cuDNN autotuning " +
                   (config::cudnnBenchmark(spec) && !spec.deterministic ? "on" : "off") +
                   "; the speed and memory figures come from a pass of the arm alone on the GPU";
    out.push_back(info);
    if (seed != spec.seeds.front()) {
        return out;
    }
    for (const auto& p : passes) {
        if (p.arm_index == arm_index && p.ok && !(p.timing.mode == "graph" && !p.captured)) {
            out.push_back(run::aloneTimingEvent(p.timing));
        }
    }
    return out;
}

}  // namespace ampbench::train
