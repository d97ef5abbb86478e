#pragma once
// Per-layer numerics and FP32 islands for one run: the tap on the model, the
// records every `numerics_every` optimizer steps, and what they cost.
#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/amp/LossScaler.h"
#include "core/config/ExperimentSpec.h"
#include "core/models/Models.h"
#include "core/numerics/NumericsTap.h"
#include "core/probe/HostReadback.h"
#include "core/run/TrainObserver.h"

namespace ampbench::train {

class NumericsRecorder {
  public:
    /// Sets a tap on `model` when the arm has FP32 islands or the spec asks for
    /// numerics, measuring against the number format of `precision` (the arm's, as
    /// planned: never amp). std::invalid_argument naming the arm for islands on a model
    /// file or a pattern that matches no module (the message lists the model's modules).
    NumericsRecorder(const config::ExperimentSpec& spec, const config::ArmSpec& arm,
                     config::Precision precision, models::Network& model);

    bool due(int64_t step) const { return every_ > 0 && step % every_ == 0; }
    /// Around the forward of micro-batch `k` of `step`: the first one's module outputs
    /// are observed on a step that is due.
    void beforeForward(int64_t step, int k, const amp::LossScaler* scaler);
    void afterForward();
    /// Every gradient as the backward left it (before unscaling: unscaled × the loss
    /// scale in use) and the outputs observed: their statistics are computed and start
    /// for the host without waiting for the device; deliver() hands them on.
    void record(int64_t step, const std::vector<at::Tensor>& params, const amp::LossScaler* scaler);
    /// The records made since the last delivery, to `observer` (waits for their copies:
    /// call it where the host waits for the device anyway).
    void deliver(run::TrainObserver& observer);
    /// Whether a non-finite step is replayed to find where it broke: with numerics on,
    /// for the first kMaxLocated such steps of a run.
    bool locating() const { return every_ > 0 && located_ < kMaxLocated; }
    static constexpr int kMaxLocated = 20;
    using Batches = std::vector<std::pair<at::Tensor, at::Tensor>>;  // (input, target) each
    /// After step `step`'s optimizer update, while locating: keeps its micro-batches and
    /// starts reading, without waiting for the device, whether it broke (inf/NaN found
    /// in its gradients — `found_inf` or `skipped` —, or a non-finite `loss_sum`) and the
    /// loss scale it used.
    void watch(int64_t step, Batches batches, const at::Tensor& found_inf, bool skipped,
               const at::Tensor& loss_sum, const at::Tensor& scale_used);
    struct BrokenStep {
        int64_t step = 0;
        Batches batches;
        double loss_scale = 1.0;
    };
    /// The step watched last, when it broke. Called with the next step's forward and
    /// backward already queued (or at the run's end), the wait for its flag costs the
    /// host none of its lead over the device.
    std::optional<BrokenStep> takeBroken();
    using LossOf = std::function<at::Tensor(const at::Tensor& input, const at::Tensor& target)>;
    /// Replays a non-finite step's micro-batches (input, target) through `loss_of` (the
    /// arm's forward and loss) and a backward at `loss_scale` / K, watching every
    /// module output, output gradient and parameter gradient, and says where the
    /// first inf or NaN appeared (describe(run::OverflowOrigin)). Gradients are set to
    /// none after it and the model's buffers (BatchNorm statistics) restored.
    std::string locate(int64_t step, const Batches& batches, const LossOf& loss_of,
                       double loss_scale, const std::vector<at::Tensor>& params);
    /// Info lines for the run's start: the islands, what a model file lets be observed.
    std::vector<std::string> startNotes() const;
    /// "per-layer numerics every N steps: ..." with the host time spent; empty when off.
    std::string costNote(double run_ms) const;
    double hostMs() const { return host_ms_; }

  private:
    int64_t every_;
    models::Network& model_;
    std::vector<std::string> param_names_;  // parallel to the model's parameters()
    std::vector<std::string> islands_;
    std::unique_ptr<numerics::NumericsTap> tap_;
    std::optional<numerics::Observation> activations_;  // of the step being recorded
    std::vector<numerics::Observation> pending_;        // recorded, not delivered
    bool observing_ = false;
    double host_ms_ = 0;
    int64_t records_ = 0;
    int located_ = 0;
    probe::HostReadback watched_flag_;  // (broke, loss scale) of the step watched last
    int64_t watched_step_ = 0;
    Batches watched_batches_;
};

}  // namespace ampbench::train
