#pragma once
// Measurement hung on the training step: the step recorder times each optimizer
// step, samples memory, keeps each step's device-side values (loss, norms, loss
// scale, skip flag) pending, reads them back in batches, meters its own host cost
// and thins out a costly gradient norm. The loop only tells it when a step starts
// and ends; it needs no model, so it is tested with plain tensors.
#include <ATen/ATen.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/probe/DeviceBusy.h"
#include "core/probe/MemoryProbe.h"
#include "core/probe/StepTimer.h"
#include "core/run/TrainObserver.h"
#include "core/train/Trainer.h"

namespace ampbench::train {

/// One optimizer step whose device-side values have not been read back yet.
struct PendingStep {
    run::StepRecord rec;
    at::Tensor loss;                     ///< mean loss of the step's micro-batches, on the device
    at::Tensor norm;                     ///< unscaled global gradient norm
    at::Tensor scale;                    ///< loss scale used for the backward
    at::Tensor found_inf;                ///< set when the skip is decided on the device
    std::vector<at::Tensor> norm_parts;  ///< per-gradient norms when `norm` is deferred
};

/// Lives on the training thread, for one run.
class StepRecorder {
  public:
    /// `timer` and `memory` belong to the caller and must outlive the recorder.
    /// With `loss_scaling` a non-finite loss is a skipped step, not a divergence;
    /// `backoff` is the scaler's backoff factor (for the skipped-step event).
    StepRecorder(run::TrainObserver& observer, const TrainOptions& options, probe::StepTimer& timer,
                 probe::MemoryProbe& memory, bool loss_scaling, double backoff);

    /// Runs `f`, adding its host time to one part of the recording's cost when the
    /// caller asked for it (TrainOptions::recording_cost).
    template <class F>
    void metered(double RecordingCost::*part, F&& f) {
        if (!opt_.recording_cost) {
            f();
            return;
        }
        const auto t = Clock::now();
        f();
        cost_.*part += std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    }

    /// The run's clock starts (wall_s of each step counts from here).
    void begin();
    /// Step `s` starts: its timer runs (when instrumented); a probe step of the
    /// device's busy share is held first (see probeDeviceBusy).
    void startStep(int64_t s);
    /// Measures how busy the device keeps during a step (probe::DeviceBusy) on a few
    /// steps after the warm-up and the gradient-norm probes; those steps are left
    /// out of the step-time medians. CUDA only, and only when instrumented.
    void probeDeviceBusy(c10::Device device, int64_t warmup_steps);
    /// After the last step: the device time of one step as a DeviceBusy event, or
    /// an Info event saying why it could not be measured (also when the run `shared`
    /// its GPU with other runs: their work then sits between the step's kernels).
    /// Nothing when not probed.
    void reportDeviceBusy(bool shared);
    /// A cancelled partial step: it has no step time.
    void discardStep();
    /// Whether the gradient norm is recorded at step `s` (every k-th step once thinned).
    bool wantsNorm(int64_t s) const;
    /// Whether step `s` is one of the probe steps that measure the norm's cost.
    bool probing(int64_t s) const;
    /// A probe step's gradient norm took `norm_host_ms` of host time; `device_behind`
    /// when the device had not reached the end of the backward pass by then.
    void probed(double norm_host_ms, bool device_behind);
    /// Host time of a norm computed at the step, outside the probes.
    void addNormCost(double ms) { cost_.grad_norm_ms += ms; }
    /// Called before step `s`: after the probe steps, decides every how many steps
    /// the norm is recorded, and says so in an Info event.
    void beforeStep(int64_t s);
    /// A step ended: stops its timer, samples memory and queues it for read-back.
    void completeStep(run::StepRecord rec, PendingStep pending, int64_t samples);
    /// Time to read back (enough steps, and not too soon after the last read-back).
    bool flushDue() const;
    /// Reads every pending step back from the device and reports it. Returns the
    /// first step whose loss is not finite in a run without loss scaling (the run
    /// has diverged), if any.
    std::optional<int64_t> flush();
    /// The step timer's chain breaks (an evaluation runs between two steps).
    void breakChain();

    int64_t stepsDone() const { return steps_done_; }
    const RecordingCost& cost() const { return cost_; }
    double wallSeconds() const;

  private:
    using Clock = std::chrono::steady_clock;

    run::TrainObserver& obs_;
    TrainOptions opt_;
    probe::StepTimer& timer_;
    probe::MemoryProbe& memory_;
    bool loss_scaling_;
    double backoff_;
    Clock::time_point t0_, last_flush_, probe_t0_;
    std::vector<PendingStep> pending_;
    RecordingCost cost_;
    /// The gradient norm is recorded at steps 1, 1 + k, 1 + 2k, ... (see
    /// TrainOptions::grad_norm_limit).
    int64_t norm_every_ = 1;
    double probe_norm_ms_ = 0;
    int64_t probe_behind_ = 0;  // probe steps where the device lagged the host
    std::unique_ptr<probe::DeviceBusy> busy_;
    int64_t busy_first_ = 0;  // the first step held for the device's busy share
    int64_t busy_held_ = 0;   // the step held now, 0 when none
    int64_t steps_done_ = 0;
};

}  // namespace ampbench::train
