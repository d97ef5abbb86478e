#include "core/train/private/StepRecorder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ampbench::train {
namespace {

using run::EventKind;
using run::StepRecord;

/// The steps over which the gradient norm's share of step time is measured (the
/// first step, with cuDNN's algorithm search, is left out).
constexpr int64_t kNormProbeFirst = 2, kNormProbeLast = 11;
/// Steps held for the device's busy share: this many, every kBusyEvery-th step from
/// the first after the warm-up and the norm probes.
constexpr int kBusyProbes = 5, kBusyEvery = 3;
/// Steps read back at once at most, whatever flush_min_interval_ms says.
constexpr size_t kMaxPendingSteps = 1000;

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// The global gradient norms of the steps that deferred theirs, read back: one
/// stack-and-norm for all of them when each step has the same number of parts.
at::Tensor deferredNorms(const std::vector<PendingStep>& pending,
                         const std::vector<at::Tensor>& parts, size_t part_count, bool even) {
    if (parts.empty()) {
        return {};
    }
    if (even) {
        const auto steps = static_cast<int64_t>(parts.size() / part_count);
        return at::stack(parts)
            .to(at::kFloat)
            .view({steps, static_cast<int64_t>(part_count)})
            .norm(2, {1})
            .to(at::kCPU, at::kDouble);
    }
    std::vector<at::Tensor> each;
    for (const auto& p : pending) {
        if (!p.norm_parts.empty()) {
            each.push_back(at::stack(p.norm_parts).norm().to(at::kFloat));
        }
    }
    return at::stack(each).to(at::kCPU, at::kDouble);
}

}  // namespace

StepRecorder::StepRecorder(run::TrainObserver& observer, const TrainOptions& options,
                           probe::StepTimer& timer, probe::MemoryProbe& memory, bool loss_scaling,
                           double backoff)
    : obs_(observer),
      opt_(options),
      timer_(timer),
      memory_(memory),
      loss_scaling_(loss_scaling),
      backoff_(backoff) {
    begin();
}

void StepRecorder::begin() {
    t0_ = Clock::now();
    last_flush_ = t0_;
}

double StepRecorder::wallSeconds() const {
    return std::chrono::duration<double>(Clock::now() - t0_).count();
}

void StepRecorder::startStep(int64_t s) {
    if (!opt_.instrument) {
        return;
    }
    if (busy_ && s >= busy_first_ && (s - busy_first_) % kBusyEvery == 0 &&
        busy_->probes() < kBusyProbes) {
        busy_->hold();
        busy_held_ = s;
    }
    metered(&RecordingCost::timers_ms, [&] { timer_.start(); });
}

void StepRecorder::discardStep() {
    if (opt_.instrument) {
        timer_.discard();  // a partial step has no step time
    }
    if (busy_held_ != 0) {
        busy_->release(/*count=*/false);  // a partial step is no measure of a step
        busy_held_ = 0;
    }
}

void StepRecorder::probeDeviceBusy(c10::Device device, int64_t warmup_steps) {
    if (!opt_.instrument || !device.is_cuda()) {
        return;
    }
    busy_ = std::make_unique<probe::DeviceBusy>(device);
    if (!busy_->available()) {
        busy_.reset();
        return;
    }
    busy_first_ = std::max<int64_t>(kNormProbeLast + 2, warmup_steps + 1);
}

void StepRecorder::reportDeviceBusy(bool shared) {
    if (!busy_ || busy_->probes() == 0) {
        return;
    }
    if (shared) {
        obs_.onEvent({steps_done_, EventKind::Info,
                      "how busy the device keeps during a step was not measured: other runs "
                      "shared the GPU, so their work ran between this run's kernels",
                      0.0});
        return;
    }
    const std::optional<double> ms = busy_->stepDeviceMs();
    char msg[400];
    if (ms) {
        std::snprintf(msg, sizeof msg,
                      "device time of one step's work, queued ahead of the device so that "
                      "nothing kept it waiting: %.3f ms (median of %d probe steps, left out of "
                      "the step-time medians)",
                      *ms, busy_->counted());
        obs_.onEvent({steps_done_, EventKind::DeviceBusy, msg, *ms});
        return;
    }
    std::snprintf(msg, sizeof msg,
                  "how busy the device keeps during a step was not measured: in each of %d "
                  "probe steps the host did not finish queueing the step within %.0f ms of "
                  "the device waiting for it (a read-back inside the step, or more kernels "
                  "than the launch queue holds)",
                  busy_->probes(), probe::DeviceBusy::kHoldTimeoutMs);
    obs_.onEvent({steps_done_, EventKind::Info, msg, 0.0});
}

bool StepRecorder::wantsNorm(int64_t s) const {
    return opt_.instrument && (s - 1) % norm_every_ == 0;
}

bool StepRecorder::probing(int64_t s) const {
    return opt_.instrument && s >= kNormProbeFirst && s <= kNormProbeLast;
}

void StepRecorder::probed(double norm_host_ms, bool device_behind) {
    probe_norm_ms_ += norm_host_ms;
    if (device_behind) {
        ++probe_behind_;  // the device is still on the backward pass: it sets the pace
    }
}

void StepRecorder::beforeStep(int64_t s) {
    if (s == kNormProbeFirst) {
        probe_t0_ = Clock::now();
        return;
    }
    if (s != kNormProbeLast + 1) {
        return;
    }
    // Where the device sets the pace (it was still on the backward pass when the
    // host had queued the optimizer step), the norm's host time overlaps the
    // device's work and costs the step nothing; its host time then includes waiting
    // for room in the launch queue, so it is no measure of its cost either.
    const int64_t probe_steps = kNormProbeLast - kNormProbeFirst + 1;
    if (probe_behind_ * 5 > probe_steps) {
        return;
    }
    const double wall_ms = msSince(probe_t0_);
    const double share = wall_ms > 0 ? probe_norm_ms_ / wall_ms : 0.0;
    if (opt_.grad_norm_limit <= 0 || share <= opt_.grad_norm_limit) {
        return;
    }
    const double target = opt_.grad_norm_budget > 0
                              ? std::min(opt_.grad_norm_budget, opt_.grad_norm_limit)
                              : opt_.grad_norm_limit;
    norm_every_ = static_cast<int64_t>(std::ceil(share / target));
    const double step_ms = wall_ms / static_cast<double>(probe_steps);
    char msg[320];
    std::snprintf(msg, sizeof msg,
                  "gradient norm recorded every %lld optimizer steps from step %lld: computing it "
                  "took %.1f%% of this arm's %.2f ms step, where the host sets the pace (each "
                  "LibTorch call's host cost shows on a model this small); the steps between "
                  "record none",
                  static_cast<long long>(norm_every_), static_cast<long long>(s), 100.0 * share,
                  step_ms);
    obs_.onEvent({s, EventKind::Info, msg, static_cast<double>(norm_every_)});
}

bool StepRecorder::flushDue() const {
    if (pending_.size() >= kMaxPendingSteps) {
        return true;
    }
    return static_cast<int>(pending_.size()) >= opt_.flush_every &&
           (opt_.flush_min_interval_ms <= 0 || msSince(last_flush_) >= opt_.flush_min_interval_ms);
}

void StepRecorder::completeStep(StepRecord rec, PendingStep pending, int64_t samples) {
    if (busy_held_ != 0) {
        busy_->release(/*count=*/true);  // every kernel of the step is queued by now
        busy_held_ = 0;
        rec.timed = false;  // its time includes the hold
    }
    if (opt_.instrument) {
        metered(&RecordingCost::timers_ms, [&] { timer_.stop(); });
        metered(&RecordingCost::memory_ms, [&] {
            auto mem = memory_.sample();
            rec.mem_allocated = mem.allocated;
            rec.mem_reserved = mem.reserved;
            rec.mem_peak = mem.peak;
        });
    }
    rec.samples = samples;
    rec.wall_s = wallSeconds();
    pending.rec = rec;
    pending_.push_back(std::move(pending));
    steps_done_ = rec.step;
}

void StepRecorder::breakChain() {
    if (opt_.instrument) {
        timer_.breakChain();  // the evaluation is no part of the next step
    }
}

std::optional<int64_t> StepRecorder::flush() {
    last_flush_ = Clock::now();
    if (pending_.empty()) {
        return std::nullopt;
    }
    std::vector<at::Tensor> losses, norms, scales, infs, parts;
    size_t part_count = 0;  // per step, when every deferred step has the same count
    bool parts_even = true;
    for (auto& p : pending_) {
        if (p.found_inf.defined()) {
            infs.push_back(p.found_inf.reshape({}));
        }
        losses.push_back(p.loss.to(at::kFloat));
        if (p.norm.defined()) {
            norms.push_back(p.norm.to(at::kFloat));
        }
        if (!p.norm_parts.empty()) {
            parts_even = parts_even && (part_count == 0 || part_count == p.norm_parts.size());
            part_count = p.norm_parts.size();
            parts.insert(parts.end(), p.norm_parts.begin(), p.norm_parts.end());
        }
        if (p.scale.defined()) {
            scales.push_back(p.scale.reshape({}));
        }
    }
    // One device-to-host copy per quantity for the whole batch of steps. The
    // first waits for the device.
    at::Tensor l, n, np, sc, fi;
    metered(&RecordingCost::readback_ms, [&] {
        l = at::stack(losses).to(at::kCPU, at::kDouble);
        if (!scales.empty()) {
            sc = at::stack(scales).to(at::kCPU, at::kDouble);
        }
        if (infs.size() == pending_.size()) {
            fi = at::stack(infs).to(at::kCPU, at::kDouble);
        }
    });
    if (!norms.empty() || !parts.empty()) {
        metered(&RecordingCost::grad_norm_ms, [&] {
            if (!norms.empty()) {
                n = at::stack(norms).to(at::kCPU, at::kDouble);
            }
            np = deferredNorms(pending_, parts, part_count, parts_even);
        });
    }
    std::vector<double> times;
    if (opt_.instrument) {
        metered(&RecordingCost::timers_ms, [&] { times = timer_.collect(); });
    }
    auto la = l.accessor<double, 1>();
    const double* norm_values = n.defined() ? n.data_ptr<double>() : nullptr;
    const double* part_values = np.defined() ? np.data_ptr<double>() : nullptr;
    const double* scale_values = sc.defined() ? sc.data_ptr<double>() : nullptr;
    const double* inf_values = fi.defined() ? fi.data_ptr<double>() : nullptr;
    size_t next_norm = 0, next_part = 0, next_scale = 0;
    std::optional<int64_t> bad_step;
    auto batch = std::move(pending_);
    pending_.clear();
    for (size_t i = 0; i < batch.size(); ++i) {
        StepRecord rec = batch[i].rec;
        rec.loss = la[static_cast<int64_t>(i)];
        rec.grad_norm = batch[i].norm.defined()        ? norm_values[next_norm++]
                        : !batch[i].norm_parts.empty() ? part_values[next_part++]
                                                       : std::nan("");
        rec.loss_scale = batch[i].scale.defined() ? scale_values[next_scale++] : 1.0;
        rec.step_ms = i < times.size() ? times[i] : 0.0;
        if (inf_values) {
            rec.skipped = inf_values[i] != 0.0;
        }
        metered(&RecordingCost::observer_ms, [&] {
            obs_.onStep(rec);
            if (rec.skipped) {
                obs_.onEvent(
                    {rec.step, EventKind::SkippedStep,
                     "gradients held inf/NaN: optimizer step skipped, loss scale backed off",
                     rec.loss_scale * backoff_});
            }
        });
        // With loss scaling a non-finite loss is a skipped step, not a divergence.
        if (!std::isfinite(rec.loss) && !loss_scaling_ && !bad_step) {
            bad_step = rec.step;
        }
    }
    // Releasing the steps' device tensors (losses, per-gradient norms) is part of
    // the read-back's cost too.
    metered(&RecordingCost::readback_ms, [&] { batch.clear(); });
    return bad_step;
}

}  // namespace ampbench::train
