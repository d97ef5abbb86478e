#pragma once
// Private to train/: one run's training loop, shared by Trainer.cpp (set-up, the
// eager step, evaluation, the run) and GraphStep.cpp (the step replayed from CUDA
// graphs).
#include <ATen/ATen.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/amp/Precision.h"
#include "core/config/ExperimentSpec.h"
#include "core/data/Datasets.h"
#include "core/data/Prefetcher.h"
#include "core/models/Models.h"
#include "core/parallel/Communicator.h"
#include "core/parallel/GradientSync.h"
#include "core/parallel/RankSummary.h"
#include "core/probe/MemoryProbe.h"
#include "core/probe/StepTimer.h"
#include "core/run/TrainObserver.h"
#include "core/train/Trainer.h"
#include "core/train/private/NumericsRecorder.h"
#include "core/train/private/ParameterUpdater.h"
#include "core/train/private/RunStream.h"
#include "core/train/private/StepGraph.h"
#include "core/train/private/StepRecorder.h"
#include "core/train/private/TaskHead.h"

namespace ampbench::train {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// A run that must stop with status Failed and this message: by default an arm
/// that cannot run as asked here; NonFinite when it diverged.
struct RunFailure : std::runtime_error {
    explicit RunFailure(const std::string& message, run::FailureKind why = run::FailureKind::Setup)
        : std::runtime_error(message), kind(why) {}
    run::FailureKind kind;
};

/// The process-wide switches `arm` asks for on `device` (determinism, TF32, cuDNN
/// benchmark), as a run sets them before it builds its model.
void applyProcessSwitches(const config::ExperimentSpec& spec, const config::ArmSpec& arm,
                          c10::Device device);

/// The model a run of `seed` starts from, its weights drawn from the seed with no other
/// run of this process drawing in between. `generator`, when given, receives a copy of
/// the device's default generator as the draws left it: a fused member's dropout goes
/// on from there, as its own run's would.
std::shared_ptr<models::Network> seededModel(const config::ModelSpec& spec,
                                             const data::InputShape& shape, c10::Device device,
                                             uint64_t seed, at::Generator* generator = nullptr);

/// A few batches of generated data kept on the device, drawn from `seed`: what a run on
/// synthetic data trains on. `global` samples a micro-step over `world` ranks; each
/// rank keeps its own shard.
std::vector<data::Batch> syntheticPool(const data::Dataset& dataset, int64_t global, uint64_t seed,
                                       c10::Device device, int rank = 0, int world = 1);

/// Every batch an evaluation of `spec` reads (its split, eval_batches), on `device` as
/// `arm` feeds its model (the precision's input, channels_last), one call each.
void forEachEvalBatch(const config::ExperimentSpec& spec, const config::ArmSpec& arm,
                      const data::Dataset& dataset, const amp::Precision& precision,
                      c10::Device device,
                      const std::function<void(const at::Tensor&, const at::Tensor&)>& f);

/// An evaluation's record from its sums (NaN where nothing was counted).
run::EvalRecord evalRecordOf(int64_t step, int64_t samples, const TaskHead::Sums& sums,
                             double wall_s);

/// What a run's first record says of it (its environment probed on `device`).
run::RunInfo runInfoOf(const config::ArmSpec& arm, const amp::Precision& precision,
                       const std::string& device, uint64_t seed, int64_t planned, int micro_batch,
                       double lr);

/// The events at step 0 every run of the arm opens with: how 'amp' resolved, the
/// optimizer, the precision's own notes and, for autocast on CUDA, a warning where the
/// fused kernels failed their check on this GPU (checkFusedKernels; run before the
/// first step).
std::vector<run::EventRecord> armEvents(const config::ArmSpec& arm, const amp::Precision& precision,
                                        const ParameterUpdater& updater, c10::Device device);

/// How a run that threw ends: the event it records, its failure kind and message.
struct FailureOf {
    run::EventKind event = run::EventKind::Warning;
    run::FailureKind kind = run::FailureKind::Runtime;
    std::string message;
};
/// The failure of the exception in flight (call inside a catch block).
FailureOf currentFailure();

class RunLoop {
  public:
    /// `plan`'s device must be there (trainRun fails the run where planning found it
    /// missing).
    RunLoop(const config::ExperimentSpec& spec, const RunPlan& plan, run::TrainObserver& observer,
            const run::CancelToken& cancel, const TrainOptions& options,
            parallel::RankSummaryObserver* ranked = nullptr)
        : ranked_(ranked),
          spec_(spec),
          plan_(plan),
          arm_(spec.arms.at(static_cast<size_t>(plan.arm_index))),
          arm_index_(plan.arm_index),
          seed_(plan.seed),
          obs_(observer),
          cancel_(cancel),
          opt_(options),
          device_(plan.device.placement.str()) {}

    run::RunOutcome run();
    /// Reports the steps that completed but were not flushed yet (after a failure).
    void salvage() noexcept {
        try {
            if (numerics_) {
                numerics_->deliver(obs_);
            }
            if (recorder_) {
                recorder_->flush();
            }
        } catch (...) {
        }
    }
    int64_t stepsDone() const { return recorder_ ? recorder_->stepsDone() : 0; }
    /// Tells the other ranks why this one stops, so theirs fail with the reason.
    void announceFailure(const std::string& why) noexcept {
        if (comm_) {
            comm_->announceFailure(why);
        }
    }

  private:
    void setUp();  // the four parts below, in order
    void setUpDevice();
    void setUpModel();
    void setUpData();
    void setUpMeasures();
    void start();                             // RunInfo and the events at step 0
    void finish(const run::RunOutcome& out);  // what follows the last step
    data::Batch nextBatch(double& wait_ms);
    /// The loader's next batch as it gave it (on the CPU, pinned for a CUDA run).
    data::Batch nextHostBatch(double& wait_ms);
    /// The step's next micro-batch on the device as the arm feeds the model (its
    /// precision's input, channels_last); the wait for it is added to `rec`.
    data::Batch microBatch(run::StepRecord& rec);
    /// A micro-batch begins: counted, and TrainOptions::before_micro_batch told.
    void countMicroBatch();
    at::Tensor lossOf(const at::Tensor& logits, const at::Tensor& target) const;
    /// False when a cancel came between micro-batches: the partial step is dropped.
    bool trainStep(int64_t s);
    bool locateWatched();
    /// The step from the graphs (captured at their first use). When the capture
    /// fails (the model does something a graph cannot hold: a host sync, a dynamic
    /// shape), the arm trains eagerly from then on: `fell_back` is set, the step is
    /// undone and its first micro-batch kept for the eager step that repeats it.
    bool graphStep(int64_t s, bool& fell_back);
    void captureGraphs(int64_t s);
    /// A captured graph's next micro-batch into its input buffers; its sample count.
    int64_t feedInputs(run::StepRecord& rec);
    /// Inside a capture: the step's outputs into graph_out_ (undefined ones as 0).
    void keepStepOutputs(const at::Tensor& loss, const at::Tensor& scale_used);
    void fallBackToEager(int64_t s, const std::string& why, const data::Batch& batch,
                         int64_t samples_before);
    /// The opening both steps share: a new record, the hook, the cancel check, the
    /// timer. Nullopt when a cancel came first.
    std::optional<run::StepRecord> openStep(int64_t s);
    /// Reads the pending steps back and reports them; a NaN loss ends the run.
    void flush();
    run::EvalRecord evaluate(int64_t s);
    bool evalDue(int64_t s) const;
    /// Data-parallel end: ranks other than 0 publish their summary, rank 0 records
    /// every rank's as an event (step time, peak memory).
    void finishRanks();
    int world() const { return comm_ ? comm_->world() : 1; }
    int armBatch() const { return config::microBatchOf(spec_, arm_); }
    void event(int64_t step, run::EventKind kind, const std::string& msg, double value = 0.0) {
        obs_.onEvent({step, kind, msg, value});
    }
    parallel::RankSummaryObserver* ranked_;  // this rank's own steps (data-parallel runs)
    const config::ExperimentSpec& spec_;
    const RunPlan plan_;  // what planning resolved: the precision, the lr, the device
    const config::ArmSpec& arm_;
    int arm_index_;
    uint64_t seed_;
    run::TrainObserver& obs_;
    const run::CancelToken& cancel_;
    TrainOptions opt_;
    c10::Device device_;

    std::unique_ptr<RunStream> stream_;  // first made, last gone: every tensor lives on it
    std::unique_ptr<amp::Precision> precision_;
    std::shared_ptr<const data::Dataset> dataset_;
    // A CPU run's own memory: opened once the data is loaded, gone after every tensor
    // declared below it.
    std::unique_ptr<probe::CpuTensorAccount> tensors_;
    data::InputShape shape_;
    std::shared_ptr<models::Network> model_;
    std::unique_ptr<TaskHead> head_;
    std::vector<at::Tensor> params_;
    std::unique_ptr<NumericsRecorder> numerics_;  // per-layer numerics, FP32 islands
    std::unique_ptr<ParameterUpdater> updater_;
    std::unique_ptr<data::Prefetcher> prefetcher_;
    std::unique_ptr<parallel::Communicator> comm_;  // data-parallel runs only
    std::unique_ptr<parallel::GradientSync> sync_;
    std::vector<data::Batch> device_pool_;  // synthetic data, already on the device
    size_t pool_pos_ = 0;
    std::unique_ptr<probe::StepTimer> timer_;
    std::unique_ptr<probe::MemoryProbe> memory_;
    std::unique_ptr<StepRecorder> recorder_;  // after timer_ and memory_, which it uses
    int64_t planned_ = 0;
    int k_ = 1;
    double lr_ = 0;
    Clock::time_point t0_;
    int64_t samples_ = 0;
    int64_t micro_batches_ = 0;
    // CUDA-graph mode: static input buffers and the captured step's outputs.
    std::unique_ptr<StepGraph> graph_;         // the step, or with K > 1 the micro-step
    std::unique_ptr<StepGraph> update_graph_;  // K > 1: the optimizer step
    std::optional<data::Batch> held_batch_;    // drawn by a step that was undone
    at::Tensor static_x_, static_y_, graph_loss_, graph_norm_, graph_inf_, loss_acc_;
    at::Tensor graph_out_;  // [4]: the step's loss, gradient norm, loss scale, found-inf
    at::Tensor out_rows_;   // [kOutputRows, 4]: graph_out_ of the steps, row by row
    int64_t out_next_ = 0;  // out_rows_'s next free row
    std::vector<at::Tensor> static_grads_;  // K > 1: the gradients the graphs add into
};

/// Rows of graph outputs allocated at once (a graph step copies its outputs into one).
inline constexpr int64_t kOutputRows = 256;
/// Eager steps before capture: cuDNN picks its algorithms, lazy state is created.
inline constexpr int64_t kEagerStepsBeforeCapture = 3;
/// How the warning of an arm whose step could not be captured begins.
inline constexpr const char* kCaptureFallback = "the step could not be captured as a CUDA graph";

}  // namespace ampbench::train
