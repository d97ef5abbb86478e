#pragma once
// Private to train/: the loop that trains an arm's seeds as one fused model
// (FusedRuns.cpp: set-up, the eager step, evaluation; FusedGraph.cpp: the step replayed
// from CUDA graphs).
#include <ATen/ATen.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/amp/Precision.h"
#include "core/data/Datasets.h"
#include "core/data/Prefetcher.h"
#include "core/models/Fused.h"
#include "core/probe/MemoryProbe.h"
#include "core/probe/StepTimer.h"
#include "core/train/private/FusedRuns.h"
#include "core/train/private/OptimizerStep.h"
#include "core/train/private/ParameterUpdater.h"
#include "core/train/private/RunLoop.h"
#include "core/train/private/RunStream.h"
#include "core/train/private/StepGraph.h"
#include "core/train/private/StepRecorder.h"
#include "core/train/private/TaskHead.h"

namespace ampbench::train::fused {

using namespace run;  // the records a run emits

/// One run of the group: what it trains with of its own, and how it stands.
struct Member {
    uint64_t seed = 0;
    TrainObserver* obs = nullptr;
    const CancelToken* cancel = nullptr;
    std::unique_ptr<amp::Precision> precision;  // its own loss scaler
    std::shared_ptr<models::Network> model;
    std::vector<at::Tensor> params;
    std::unique_ptr<ParameterUpdater> updater;
    std::unique_ptr<data::Prefetcher> prefetcher;
    std::vector<data::Batch> pool;  // synthetic data, on the device
    size_t pool_pos = 0;
    std::unique_ptr<probe::StepTimer> timer;
    std::unique_ptr<probe::MemoryProbe> memory;
    std::unique_ptr<StepRecorder> recorder;
    int64_t samples = 0;
    data::Batch last;    // its latest micro-batch, fed again once it has ended
    bool active = true;  // still training
    RunOutcome outcome;
    StepRecord rec;
    at::Tensor loss_sum;
    at::Tensor scale_used;            // the loss scale of the step's backward
    std::optional<data::Batch> held;  // drawn by a step that was undone
    int64_t samples_before = 0;       // at the start of the step under way
    // CUDA-graph mode: its static inputs, and with K > 1 its gradients and loss sum.
    at::Tensor static_x, static_y, loss_acc;
    std::vector<at::Tensor> static_grads;
};

class FusedLoop {
  public:
    FusedLoop(const config::ExperimentSpec& spec, const RunPlan& plan,
              const std::vector<FusedMember>& members, const CancelToken& cancel,
              const TrainOptions& options)
        : spec_(spec),
          plan_(plan),
          arm_(spec.arms.at(static_cast<size_t>(plan.arm_index))),
          arm_index_(plan.arm_index),
          cancel_(cancel),
          opt_(options),
          device_(plan.device.placement.str()) {
        for (const auto& m : members) {
            auto member = std::make_unique<Member>();
            member->seed = m.seed;
            member->obs = m.observer;
            member->cancel = m.cancel;
            members_.push_back(std::move(member));
        }
    }

    void run();
    /// Every member still training ends failed with `f` (its recorded steps kept).
    void failActive(const FailureOf& f) noexcept;
    std::vector<RunOutcome> outcomes() const {
        std::vector<RunOutcome> out;
        for (const auto& m : members_) {
            out.push_back(m->outcome);
        }
        return out;
    }
    std::vector<std::unique_ptr<Member>>& members() { return members_; }

  private:
    void setUp();
    void start(Member& m);
    data::Batch microBatch(Member& m);
    int armBatch() const { return config::microBatchOf(spec_, arm_); }
    bool ownCancel(const Member& m) const { return m.cancel && m.cancel->cancelled(); }
    /// Member `m` ends now as `status` (cancelled: its partial step dropped).
    void end(Member& m, RunStatus status, FailureKind why, const std::string& error);
    bool anyActive() const {
        return std::any_of(members_.begin(), members_.end(),
                           [](const auto& m) { return m->active; });
    }
    /// One optimizer step of every member still training; false when the group's
    /// cancel came (the partial step dropped).
    bool trainStep(int64_t s);
    /// The opening of a step for every member still training (a member cancelled
    /// alone ends here); false when none is left.
    bool openSteps(int64_t s);
    /// The micro-batch opens: counted, the hook told; false on the group's cancel (a
    /// step begun is dropped, and with it the gradients added so far).
    bool openMicroBatch(int64_t s, int k);
    bool eagerStep(int64_t s);
    /// The step replayed from the graphs (captured at their first use). When capture
    /// fails, the group trains eagerly from then on: `fell_back` is set, the step
    /// undone and each member's micro-batch held for the eager step that repeats it.
    bool graphStep(int64_t s, bool& fell_back);
    void captureGraphs(int64_t s);
    void fallBackToEager(int64_t s, const std::string& why);
    /// Every member's micro-batch into its graph's input buffers.
    void feedGraphs();
    void completeSteps(const std::vector<OptimizerStepResult>& results);
    void flush();
    void evaluate(int64_t s);
    bool evalDue(int64_t s) const;

    const config::ExperimentSpec& spec_;
    const RunPlan plan_;  // what planning resolved: the precision, the lr, the device
    const config::ArmSpec& arm_;
    int arm_index_;
    const CancelToken& cancel_;
    TrainOptions opt_;
    c10::Device device_;
    std::unique_ptr<RunStream> stream_;
    std::shared_ptr<const data::Dataset> dataset_;
    // The group's memory on the CPU (every member reads it, as each reads the GPU's):
    // opened once the data is loaded, gone after every tensor declared below it.
    std::unique_ptr<probe::CpuTensorAccount> tensors_;
    std::unique_ptr<TaskHead> head_;
    std::unique_ptr<models::FusedNetwork> fused_;
    std::vector<std::unique_ptr<Member>> members_;
    int64_t planned_ = 0;
    int k_ = 1;
    double lr_ = 0;
    int64_t micro_batches_ = 0;
    Clock::time_point t0_;
    std::string env_json_;              // the device's environment, probed once for every member
    bool graphs_ = false;               // the arm asks for CUDA graphs and they can hold the step
    std::unique_ptr<StepGraph> graph_;  // the step, or with K > 1 the micro-step
    std::unique_ptr<StepGraph> update_graph_;  // K > 1: the optimizer steps
    at::Tensor graph_out_;  // [G, 4]: each member's loss, gradient norm, scale, found-inf
    at::Tensor out_rows_;   // [kOutputRows, G, 4]: graph_out_ of the steps, row by row
    int64_t out_next_ = 0;
};

}  // namespace ampbench::train::fused
