// The fast verdict's choice of how its runs share the GPU, from passes that measure it:
// an arm's seeds fused into one model against one run alone, then two units side by
// side against one. Small models leave most of an H200 idle (fused seeds: 2.9x at 3,
// 7.1x at 9, recipe CNN in PyTorch); a GPT-2-sized decoder keeps it busy, and four
// such runs packed took 97 s where one at a time takes about 75 s.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "core/train/private/FastVerdict.h"
#include "core/train/private/FusedRuns.h"
#include "core/train/private/PassCollector.h"
#include "core/train/private/SpreadRuns.h"
#include "core/util/Format.h"

namespace ampbench::train {
namespace {

using Clock = std::chrono::steady_clock;

/// The pass of arm `i` in the mode it trains in: its graph pass where that was
/// captured, else its eager one; null when neither trained to its end.
const AlonePass* trainedPass(const std::vector<AlonePass>& alone, int i) {
    const AlonePass *graph = nullptr, *eager = nullptr;
    for (const auto& p : alone) {
        if (p.arm_index == i && p.ok) {
            (p.timing.mode == "graph" ? graph : eager) = &p;
        }
    }
    return graph && graph->captured ? graph : eager;
}

double samplesPerS(const run::AloneTiming& t) {
    const double ms = t.msPerSample();
    return std::isfinite(ms) && ms > 0 ? 1000.0 / ms : std::numeric_limits<double>::quiet_NaN();
}

std::string times(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", x);
    return text;
}

/// Holds the units of a side-by-side pass at their first micro-batch until each has reached it
/// or ended, so that their timed steps overlap whatever their set-up costs.
class StartLine {
  public:
    explicit StartLine(int units) : waiting_for_(units) {}
    void arrive() {
        std::unique_lock<std::mutex> lock(mutex_);
        if (--waiting_for_ <= 0) {
            all_.notify_all();
            return;
        }
        all_.wait_for(lock, std::chrono::minutes(2), [&] { return waiting_for_ <= 0; });
    }

  private:
    std::mutex mutex_;  // guards waiting_for_
    std::condition_variable all_;
    int waiting_for_;
};

/// One unit of arm `i` (its seeds fused, or one run) trained under `options`; its
/// members' timings are appended to `timings`.
std::vector<run::RunOutcome> trainUnit(const config::ExperimentSpec& t, const DeviceChoice& device,
                                       int i, bool fused, std::vector<run::AloneTiming>& timings,
                                       const run::CancelToken& cancel, const TrainOptions& o) {
    const auto& arm = t.arms.at(static_cast<size_t>(i));
    const std::vector<uint64_t> seeds =
        fused ? config::seedsForArm(t, arm) : std::vector<uint64_t>{t.seeds.front()};
    timings.assign(seeds.size(), {});
    std::vector<std::unique_ptr<PassCollector>> collectors;
    for (auto& timing : timings) {
        collectors.push_back(std::make_unique<PassCollector>(timing));
    }
    if (!fused) {
        return {trainRun(t, planRun(t, i, seeds.front(), device), *collectors.front(), cancel, o)};
    }
    std::vector<FusedMember> members;
    for (size_t m = 0; m < seeds.size(); ++m) {
        members.push_back({seeds[m], collectors[m].get(), nullptr});
    }
    return trainFused(t, planRun(t, i, seeds.front(), device), members, cancel, o);
}

/// Fills the pass's rate, memory and end from its units' timings and outcomes.
void settle(SharingPass& pass, const std::vector<std::vector<run::AloneTiming>>& units,
            const std::vector<std::vector<run::RunOutcome>>& outcomes) {
    pass.ok = true;
    double rate = 0;
    for (size_t u = 0; u < units.size(); ++u) {
        int64_t reserved = 0;
        for (const auto& t : units[u]) {
            rate += samplesPerS(t);
            reserved = std::max(reserved, t.peak_reserved);
        }
        pass.peak_reserved += reserved;  // the members of a unit share one allocator count
        for (const auto& o : outcomes[u]) {
            if (o.status != run::RunStatus::Finished && pass.ok) {
                pass.ok = false;
                pass.error = o.error.empty() ? run::toString(o.status) : o.error;
            }
        }
    }
    pass.samples_per_s = rate;
    if (pass.ok && !(std::isfinite(rate) && rate > 0)) {
        pass.ok = false;
        pass.error = "no step was timed";
    }
}

std::string passText(const config::ArmSpec& arm, const SharingPass& p) {
    std::string what = p.members > 1 ? std::to_string(p.members) + " seeds fused" : "one run";
    if (p.copies > 1) {
        what = std::to_string(p.copies) + " x (" + what + ") side by side";
    }
    if (!p.ok) {
        return "arm '" + arm.name + "', " + what + ": " + p.error;
    }
    char text[96];
    std::snprintf(text, sizeof text, ": %.0f samples/s, peak %s (%.1f s)", p.samples_per_s,
                  util::formatBytes(p.peak_reserved).c_str(), p.wall_s);
    return "arm '" + arm.name + "', " + what + text;
}

/// The fused pass of arm `i`, if any was made.
const SharingPass* fusedPass(const std::vector<SharingPass>& sharing, int i) {
    for (const auto& p : sharing) {
        if (p.arm_index == i && p.members > 1 && p.copies == 1) {
            return &p;
        }
    }
    return nullptr;
}

/// The pass of plain runs side by side, if any was made.
const SharingPass* streamsPass(const std::vector<SharingPass>& sharing) {
    for (const auto& p : sharing) {
        if (p.members == 1 && p.copies > 1 && p.ok) {
            return &p;
        }
    }
    return nullptr;
}

struct FuseDecision {
    bool fuse = false;
    std::string why;
};

FuseDecision decideFusion(const config::ExperimentSpec& spec, const std::vector<AlonePass>& alone,
                          const std::vector<SharingPass>& sharing) {
    if (spec.fuse_seeds != config::Switch::Auto) {
        const bool on = spec.fuse_seeds == config::Switch::On;
        return {on, std::string("fuse_seeds ") + (on ? "true" : "false") + " (as the spec says)"};
    }
    double log_gain = 0;
    int measured = 0;
    std::string each;
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        const SharingPass* fused = fusedPass(sharing, static_cast<int>(i));
        const AlonePass* one = trainedPass(alone, static_cast<int>(i));
        if (!fused || !fused->ok || !one) {
            continue;
        }
        const double gain = fused->samples_per_s / samplesPerS(one->timing);
        if (!std::isfinite(gain) || gain <= 0) {
            continue;
        }
        log_gain += std::log(gain);
        ++measured;
        each += (each.empty() ? "" : ", ") + spec.arms[i].name + " " + times(gain);
    }
    if (measured == 0) {
        // Nothing measured: no arm can fuse (the plan says why) or its pass failed.
        return {config::fuseSeeds(spec), {}};
    }
    const double gain = std::exp(log_gain / measured);
    const std::string fused_text = "an arm's seeds trained " + times(gain) +
                                   " one run's samples/s as one model (" + each + ")";
    if (gain < kSharingPays) {
        return {false, "seeds not fused: " + fused_text + ", under the " + times(kSharingPays) +
                           " that pays"};
    }
    // The same runs on streams, side by side, may do better still (small kernels that
    // several streams keep the GPU full with): fused where fusing beats them.
    if (const SharingPass* streams = streamsPass(sharing)) {
        const SharingPass* fused = fusedPass(sharing, streams->arm_index);
        const AlonePass* one = trainedPass(alone, streams->arm_index);
        if (fused && fused->ok && one && streams->copies == fused->members) {
            const double fused_gain = fused->samples_per_s / samplesPerS(one->timing);
            const double streams_gain = streams->samples_per_s / samplesPerS(one->timing);
            const std::string name = spec.arms[static_cast<size_t>(streams->arm_index)].name;
            if (streams_gain > fused_gain) {
                return {false, "seeds not fused: " + fused_text + ", but " +
                                   std::to_string(streams->copies) + " runs of arm '" + name +
                                   "' side by side trained " + times(streams_gain) +
                                   " against its fused " + times(fused_gain)};
            }
        }
    }
    return {true, "seeds fused: " + fused_text};
}

/// The arm whose unit keeps the GPU busiest: the longest step of a unit alone.
int heaviestArm(const config::ExperimentSpec& spec, const std::vector<AlonePass>& alone,
                const std::vector<SharingPass>& sharing, bool fuse) {
    int heaviest = -1;
    double longest = 0;
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        const AlonePass* one = trainedPass(alone, static_cast<int>(i));
        if (!one || spec.arms[i].ranks > 1) {
            continue;
        }
        double ms = one->timing.medianStepMs();
        const SharingPass* fused = fusedPass(sharing, static_cast<int>(i));
        if (fuse && fused && fused->ok) {
            ms *= fused->members;  // as much work as its members alone, at the least
        }
        if (std::isfinite(ms) && ms > longest) {
            longest = ms;
            heaviest = static_cast<int>(i);
        }
    }
    return heaviest;
}

/// `copies` units of arm `arm` (its `members` seeds fused, or one run) side by side,
/// each on a thread of its own as packed runs train, held at their first micro-batch
/// until all are there.
SharingPass sideBySide(const config::ExperimentSpec& spec, const DeviceChoice& device, int arm,
                       int members, int copies, bool graph, const run::CancelToken& cancel,
                       const TrainOptions& o, const std::function<void(const std::string&)>& note) {
    SharingPass pass;
    pass.arm_index = arm;
    pass.members = members;
    pass.copies = copies;
    const config::ExperimentSpec t = passSpec(spec, arm, graph);
    StartLine line(copies);
    TrainOptions side = o;
    side.shared_device = [] { return true; };
    side.before_micro_batch = [&line](int64_t count) {
        if (count == 1) {
            line.arrive();
        }
    };
    const auto n = static_cast<size_t>(copies);
    std::vector<std::vector<run::AloneTiming>> timings(n);
    std::vector<std::vector<run::RunOutcome>> outcomes(n);
    StepGraph::releasePools();
    const auto t0 = Clock::now();
    std::vector<std::thread> threads;
    for (size_t c = 0; c < n; ++c) {
        threads.emplace_back([&, c] {
            auto& mine = outcomes[c];
            mine = trainUnit(t, device, arm, members > 1, timings[c], cancel, side);
            if (mine.empty() || mine.front().steps_done == 0) {
                line.arrive();  // one that never began keeps nobody waiting
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    pass.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    settle(pass, timings, outcomes);
    StepGraph::releasePools();
    if (note) {
        note(passText(spec.arms[static_cast<size_t>(arm)], pass));
    }
    return pass;
}

}  // namespace

std::vector<SharingPass> timeSharing(const config::ExperimentSpec& spec, const DeviceChoice& device,
                                     const std::vector<AlonePass>& alone,
                                     const run::CancelToken& cancel, const TrainOptions& options,
                                     const std::function<void(const std::string&)>& note) {
    std::vector<SharingPass> out;
    const TrainOptions o = passOptions(options);
    auto graphOf = [&](int i) {
        const AlonePass* p = trainedPass(alone, i);
        return p && p->timing.mode == "graph";
    };
    if (spec.fuse_seeds != config::Switch::Off) {
        for (size_t i = 0; i < spec.arms.size() && !cancel.cancelled(); ++i) {
            const int arm = static_cast<int>(i);
            if (!fusionProblem(spec, arm, true).empty() || !trainedPass(alone, arm)) {
                continue;
            }
            SharingPass pass;
            pass.arm_index = arm;
            pass.members = static_cast<int>(config::seedsForArm(spec, spec.arms[i]).size());
            std::vector<std::vector<run::AloneTiming>> timings(1);
            StepGraph::releasePools();
            const auto t0 = Clock::now();
            const auto outcomes = trainUnit(passSpec(spec, arm, graphOf(arm)), device, arm, true,
                                            timings[0], cancel, o);
            pass.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
            settle(pass, timings, {outcomes});
            if (note) {
                note(passText(spec.arms[i], pass));
            }
            out.push_back(std::move(pass));
        }
    }
    if (cancel.cancelled() || !canTrainSideBySide(spec)) {
        StepGraph::releasePools();
        return out;
    }
    size_t runs = 0;
    for (const auto& arm : spec.arms) {
        runs += config::seedsForArm(spec, arm).size();
    }
    // Plain runs of the heaviest arm side by side: as many as its seeds where they could
    // fuse (the same work as its fused pass), else two.
    const int heavy = heaviestArm(spec, alone, out, false);
    if (heavy >= 0 && runs >= 2) {
        const SharingPass* f = fusedPass(out, heavy);
        const int copies = f ? f->members : 2;
        out.push_back(sideBySide(spec, device, heavy, 1, copies, graphOf(heavy), cancel, o, note));
    }
    const bool fuse = decideFusion(spec, alone, out).fuse;
    size_t units = 0;
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        const SharingPass* f = fusedPass(out, static_cast<int>(i));
        units += fuse && f && f->ok ? 1 : config::seedsForArm(spec, spec.arms[i]).size();
    }
    // Fused: two units of the heaviest arm's fused seeds side by side, for the packing.
    const int arm = heaviestArm(spec, alone, out, true);
    const SharingPass* f = arm >= 0 ? fusedPass(out, arm) : nullptr;
    if (fuse && f && f->ok && units >= 2 && !cancel.cancelled()) {
        out.push_back(sideBySide(spec, device, arm, f->members, 2, graphOf(arm), cancel, o, note));
    }
    StepGraph::releasePools();
    return out;
}

SharingChoice chooseSharing(const config::ExperimentSpec& spec, const std::vector<AlonePass>& alone,
                            const std::vector<SharingPass>& sharing, int gpus,
                            int64_t device_bytes) {
    SharingChoice c;
    const FuseDecision fusion = decideFusion(spec, alone, sharing);
    c.fuse = fusion.fuse;
    c.fuse_why = fusion.why;
    // The units that train: an arm's fused seeds are one; their memory, the most any holds.
    int64_t units = 0, largest = 0;
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        const int arm = static_cast<int>(i);
        const SharingPass* f = fusedPass(sharing, arm);
        const bool fused = c.fuse && fusionProblem(spec, arm, true).empty();
        units += fused ? 1 : static_cast<int64_t>(config::seedsForArm(spec, spec.arms[i]).size());
        if (fused && f && f->ok) {
            largest = std::max(largest, f->peak_reserved);
        } else if (const AlonePass* one = trainedPass(alone, arm)) {
            largest = std::max(largest, one->timing.peak_reserved);
        }
    }
    gpus = std::max(1, gpus);
    int64_t per_gpu = std::max<int64_t>(1, (units + gpus - 1) / gpus);
    if (spec.runs_per_gpu > 1) {
        per_gpu = std::min<int64_t>(per_gpu, spec.runs_per_gpu);  // the user's own limit
    }
    // Units side by side against one alone, as they train under this choice: the fused
    // seeds' pair, or the plain runs on streams.
    const SharingPass* packed = nullptr;
    for (const auto& p : sharing) {
        if (p.copies > 1 && p.ok && (p.members > 1) == c.fuse) {
            packed = &p;
        }
    }
    if (packed && per_gpu > 1) {
        double one = std::numeric_limits<double>::quiet_NaN();
        if (packed->members > 1) {
            if (const SharingPass* f = fusedPass(sharing, packed->arm_index)) {
                one = f->samples_per_s;
            }
        } else if (const AlonePass* a = trainedPass(alone, packed->arm_index)) {
            one = samplesPerS(a->timing);
        }
        const double gain = packed->samples_per_s / one;
        if (std::isfinite(gain)) {
            const std::string unit = "arm '" +
                                     spec.arms[static_cast<size_t>(packed->arm_index)].name + "'" +
                                     (packed->members > 1 ? "'s fused seeds" : "");
            const std::string measured = std::to_string(packed->copies) + " of " + unit +
                                         " side by side trained " + times(gain) + " one alone";
            if (gain < kSharingPays) {
                per_gpu = 1;
                c.pack_why = measured + ": one keeps the GPU busy, so they train one after another";
            } else if (gain < kPackingPaysWide) {
                per_gpu = std::min<int64_t>(per_gpu, packed->copies);
                c.pack_why = measured + ", so " + std::to_string(per_gpu) + " at a time";
            } else {
                c.pack_why = measured;
            }
        }
    }
    if (largest > 0 && device_bytes > 0) {
        const auto fit = static_cast<int64_t>(0.85 * static_cast<double>(device_bytes) /
                                              static_cast<double>(largest));
        if (fit < per_gpu) {
            per_gpu = std::max<int64_t>(1, fit);
            c.pack_why += std::string(c.pack_why.empty() ? "" : "; ") + "what 85 % of the GPU's " +
                          "memory holds at " + util::formatBytes(largest) + " each";
        }
    }
    if (!canTrainSideBySide(spec)) {
        per_gpu = 1;
        c.pack_why = "its arms differ in TF32, a switch of the whole process";
    }
    c.per_gpu = static_cast<int>(std::clamp<int64_t>(per_gpu, 1, 16));
    return c;
}

}  // namespace ampbench::train
