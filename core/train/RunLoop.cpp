// RunLoop: one run's set-up, steps, evaluations, start and finish (private/RunLoop.h).
#include "core/train/private/RunLoop.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/amp/Fp8Linear.h"
#include "core/amp/LossScaler.h"
#include "core/amp/Precision.h"
#include "core/autocast/AutocastGuard.h"
#include "core/config/LrSchedule.h"
#include "core/data/DataError.h"
#include "core/data/Datasets.h"
#include "core/data/Prefetcher.h"
#include "core/models/Registry.h"
#include "core/models/ScriptedModel.h"
#include "core/parallel/GradientSync.h"
#include "core/parallel/RankSummary.h"
#include "core/probe/Environment.h"
#include "core/probe/MemoryProbe.h"
#include "core/probe/StepTimer.h"
#include "core/store/StoreError.h"
#include "core/train/Experiment.h"
#include "core/train/private/AllocationFailure.h"
#include "core/train/private/NumericsRecorder.h"
#include "core/train/private/OptimizerStep.h"
#include "core/train/private/ParameterUpdater.h"
#include "core/train/private/RunLoop.h"
#include "core/train/private/RunStream.h"
#include "core/train/private/StepGraph.h"
#include "core/train/private/StepRecorder.h"
#include "core/train/private/TaskHead.h"

namespace ampbench::train {

using namespace run;  // the records a run emits
using config::Precision;

void RunLoop::setUp() {
    setUpDevice();
    setUpModel();
    setUpData();
    setUpMeasures();
}

// The arm's device (a rank's own GPU), its stream and threads, its precision, and the
// process-wide switches (determinism, TF32, cuDNN benchmark) as the arm asks.
void RunLoop::setUpDevice() {
    if (arm_.ranks != opt_.ranks.world) {
        throw RunFailure("arm '" + arm_.name + "' trains on " + std::to_string(arm_.ranks) +
                         " ranks, but this process was started as rank " +
                         std::to_string(opt_.ranks.rank) + " of " +
                         std::to_string(opt_.ranks.world));
    }
    if (opt_.ranks.active() || opt_.ranks.first_gpu > 0) {
        device_ = parallel::rankDevice(device_, opt_.ranks);  // its own GPU(s) of the machine
    }
    stream_ = std::make_unique<RunStream>(device_);
    applyCpuThreads(spec_.cpu_threads);
    precision_ = amp::Precision::make(plan_.planned.resolvedOn(device_.str()), arm_, device_,
                                      amp::linearRows(spec_));
    if (const std::string why = precision_->unsupported(); !why.empty()) {
        throw RunFailure("arm '" + arm_.name + "': " + why);
    }
    applyProcessSwitches(spec_, arm_, device_);
}

// The data, the task head and the model as the arm trains it (checkpointing, numerics
// taps and islands, channels_last, the precision's own preparation), its ranks.
void RunLoop::setUpModel() {
    const bool cuda = device_.is_cuda();
    dataset_ = data::openDataset(spec_.data);
    if (!cuda) {
        tensors_ = std::make_unique<probe::CpuTensorAccount>();
    }
    shape_ = dataset_->shape();
    head_ = std::make_unique<TaskHead>(resolveTask(spec_, shape_), spec_.model.label_smoothing);
    try {
        model_ = seededModel(spec_.model, shape_, device_, seed_);
    } catch (const models::ModelError& e) {
        throw RunFailure(e.what());
    }
    if (arm_.checkpointing) {
        if (!model_->checkpointable()) {
            throw RunFailure("arm '" + arm_.name + "': model '" + spec_.model.name +
                             "' has no blocks to checkpoint (resnet and transformer do)");
        }
        model_->setCheckpointing(true);
    }
    try {
        numerics_ = std::make_unique<NumericsRecorder>(spec_, arm_, precision_->kind(), *model_);
    } catch (const std::invalid_argument& e) {
        throw RunFailure(e.what());
    }
    if (arm_.channels_last) {
        if (!model_->convolutional()) {
            throw RunFailure("arm '" + arm_.name + "': channels_last needs a convolutional model");
        }
        torch::NoGradGuard no_grad;
        for (auto& p : model_->parameters()) {
            if (p.dim() == 4) {
                p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
            }
        }
    }
    try {
        precision_->prepare(*model_);  // pure fp16 casts it; fp8 takes its Linear layers
    } catch (const std::runtime_error& e) {
        throw RunFailure("arm '" + arm_.name + "': " + e.what());
    }
    model_->train();
    params_ = model_->parameters();
    if (opt_.ranks.active()) {
        comm_ = std::make_unique<parallel::Communicator>(opt_.ranks, cuda);
        sync_ = std::make_unique<parallel::GradientSync>(*comm_);
        sync_->broadcastState(params_, model_->buffers());
    }
}

// The optimizer at the arm's learning rate, the planned steps and the batches' source
// (a few generated batches kept on the device, else the prefetcher).
void RunLoop::setUpData() {
    k_ = arm_.accumulation;
    lr_ = plan_.planned.lr;
    updater_ = makeUpdater(params_, spec_.optimizer, lr_, device_, /*allow_fused=*/true,
                           /*lr_on_device=*/arm_.cuda_graph);
    planned_ = plannedOptimizerSteps(spec_, arm_, dataset_->trainSize());
    if (dataset_->synthetic()) {
        // Generated data: keep a few batches on the device, so the run measures the model.
        device_pool_ = syntheticPool(*dataset_, static_cast<int64_t>(armBatch()) * world(), seed_,
                                     device_, comm_ ? comm_->rank() : 0, world());
    } else {
        prefetcher_ = std::make_unique<data::Prefetcher>(dataset_, armBatch(), seed_,
                                                         spec_.data.prefetch, device_.is_cuda(),
                                                         comm_ ? comm_->rank() : 0, world());
    }
}

// The step graph where the arm asks for one, and what measures the steps.
void RunLoop::setUpMeasures() {
    if (arm_.cuda_graph) {
        if (!device_.is_cuda() || !StepGraph::available() || !updater_->skipsOnDevice()) {
            throw RunFailure("arm '" + arm_.name +
                             "': cuda_graph needs a CUDA device and LibTorch 2.x with CUDA "
                             "(this run: " +
                             device_.str() + ", LibTorch " + TORCH_VERSION + ")");
        }
        graph_ = std::make_unique<StepGraph>();
    }
    timer_ = std::make_unique<probe::StepTimer>(device_);
    memory_ = std::make_unique<probe::MemoryProbe>(device_, tensors_.get());
    recorder_ = std::make_unique<StepRecorder>(
        obs_, opt_, *timer_, *memory_, precision_->scaler() != nullptr, arm_.scaler.backoff_factor);
    if (!comm_) {  // a held rank would hold up the others' all-reduce too
        recorder_->probeDeviceBusy(device_, spec_.warmup_steps);
    }
}

data::Batch RunLoop::nextHostBatch(double& wait_ms) {
    const auto t = Clock::now();
    data::Batch b = prefetcher_->next();
    wait_ms += msSince(t);
    return b;
}

data::Batch RunLoop::nextBatch(double& wait_ms) {
    if (!device_pool_.empty()) {
        auto& b = device_pool_[pool_pos_++ % device_pool_.size()];
        return b;
    }
    data::Batch b = nextHostBatch(wait_ms);
    const bool async = device_.is_cuda();
    return {b.input.to(device_, async), b.target.to(device_, async)};
}

data::Batch RunLoop::microBatch(StepRecord& rec) {
    if (held_batch_) {
        data::Batch b = std::move(*held_batch_);
        held_batch_.reset();
        return b;
    }
    double wait = 0;
    data::Batch b = nextBatch(wait);
    rec.data_wait_ms += wait;
    auto x = precision_->input(
        arm_.channels_last ? b.input.contiguous(at::MemoryFormat::ChannelsLast) : b.input);
    return {std::move(x), std::move(b.target)};
}

void RunLoop::countMicroBatch() {
    ++micro_batches_;
    if (opt_.before_micro_batch) {
        opt_.before_micro_batch(micro_batches_);
    }
}

at::Tensor RunLoop::lossOf(const at::Tensor& output, const at::Tensor& target) const {
    return head_->loss(output, target);
}

bool RunLoop::evalDue(int64_t s) const {
    if (comm_ && comm_->rank() != 0) {
        return false;  // rank 0 evaluates and records
    }
    if (s == planned_) {
        return opt_.final_eval;
    }
    if (spec_.eval_interval <= 0) {
        return false;
    }
    // Evaluate at the same samples seen in every arm: when the micro-batch count
    // crosses a multiple of eval_interval.
    return (s * k_) / spec_.eval_interval > ((s - 1) * k_) / spec_.eval_interval;
}

std::optional<StepRecord> RunLoop::openStep(int64_t s) {
    StepRecord rec;
    rec.step = s;
    rec.lr = config::scheduledLr(spec_.optimizer, lr_, s - 1, planned_);
    updater_->setLr(rec.lr);
    rec.timed = s > spec_.warmup_steps;
    countMicroBatch();
    if (cancel_.cancelled()) {
        return std::nullopt;
    }
    recorder_->startStep(s);
    return rec;
}

// A watched step that broke, replayed to find where: read with this step's forward and
// backward queued behind it, so the host keeps its lead. This step's gradients are
// held aside meanwhile. Whether a step was replayed.
bool RunLoop::locateWatched() {
    auto broken = numerics_->takeBroken();
    if (!broken) {
        return false;
    }
    std::vector<at::Tensor> held;
    held.reserve(params_.size());
    for (const auto& p : params_) {
        held.push_back(p.grad());
    }
    auto loss_of = [&](const at::Tensor& in, const at::Tensor& target) {
        return precision_->forward([&] { return lossOf(model_->forward(in), target); });
    };
    const int64_t peak_before = memory_->sample().peak;
    event(broken->step, EventKind::Warning,
          numerics_->locate(broken->step, broken->batches, loss_of, broken->loss_scale, params_));
    memory_->forgetPeakSince(peak_before);  // the replay's copies are no part of training
    for (size_t i = 0; i < params_.size(); ++i) {
        params_[i].mutable_grad() = held[i];
    }
    return true;
}

// The step: K micro-batches (forward under the precision's autocast, backward of
// the loss / K, scaled for fp16), then the optimizer step; the recorder measures.
bool RunLoop::trainStep(int64_t s) {
    if (graph_ && s > kEagerStepsBeforeCapture) {
        if (numerics_->locating()) {
            locateWatched();  // the last eager step, replayed before the graph takes over
        }
        bool fell_back = false;
        const bool trained = graphStep(s, fell_back);
        if (!fell_back) {
            return trained;
        }
    }
    recorder_->beforeStep(s);
    const int64_t samples_before = samples_;
    std::optional<StepRecord> opened = openStep(s);
    if (!opened) {
        return false;
    }
    StepRecord& rec = *opened;
    if (numerics_->due(s)) {
        precision_->beforeRecordedStep();  // fp8: its casts count, with the step's numerics
    }
    at::Tensor loss_sum;
    std::vector<std::pair<at::Tensor, at::Tensor>> replay;  // a broken step's batches
    for (int k = 0; k < k_; ++k) {
        if (k > 0) {
            countMicroBatch();
        }
        if (cancel_.cancelled()) {
            for (auto& p : params_) {
                p.mutable_grad().reset();
            }
            recorder_->discardStep();
            samples_ = samples_before;
            return false;
        }
        const data::Batch b = microBatch(rec);
        const at::Tensor& x = b.input;
        if (numerics_->locating()) {
            replay.emplace_back(x, b.target);
        }
        numerics_->beforeForward(s, k, precision_->scaler());
        const at::Tensor loss =
            precision_->forward([&] { return lossOf(model_->forward(x), b.target); });
        numerics_->afterForward();
        auto detached = loss.detach();
        loss_sum = loss_sum.defined() ? loss_sum + detached : detached;
        precision_->backward(loss, k_);
        samples_ += b.input.size(0) * world();  // every rank trained a shard as large
    }
    if (numerics_->locating() && locateWatched()) {
        rec.timed = false;  // the replay of the step before is no part of this one
    }
    at::Tensor scale_used = precision_->scaleInUse();
    if (numerics_->due(s)) {
        numerics_->record(s, params_, precision_->scaler());
        if (auto own = precision_->recordedStep(s); !own.empty()) {
            obs_.onNumerics(own);  // before the step's own record, as the others
        }
        rec.timed = false;  // its time includes the records: kept out of the medians
    }
    const bool probing = recorder_->probing(s);
    if (probing) {
        timer_->mark();  // the end of the backward pass in the device's queue
    }
    auto result = finishOptimizerStep(params_, *updater_, precision_->scaler(), arm_.grad_clip,
                                      recorder_->wantsNorm(s), /*defer_norm=*/true, sync_.get(),
                                      sync_ ? &loss_sum : nullptr);
    rec.skipped = result.skipped;
    if (numerics_->locating()) {
        numerics_->watch(s, std::move(replay), result.found_inf, result.skipped, loss_sum,
                         scale_used);
    }
    recorder_->addNormCost(result.norm_host_ms);
    if (probing) {
        // Still on the backward pass when the host had queued the step: the device sets the pace.
        recorder_->probed(result.norm_host_ms, !timer_->markerReached());
    }
    recorder_->completeStep(
        rec,
        {rec, k_ > 1 ? loss_sum / static_cast<double>(k_) : loss_sum, result.grad_norm, scale_used,
         result.found_inf, std::move(result.grad_norm_parts)},
        samples_);
    return true;
}

void RunLoop::finishRanks() {
    const std::string key = "ampbench/summary/";
    if (comm_->rank() != 0) {
        comm_->publish(key + std::to_string(comm_->rank()), parallel::toJson(ranked_->summary()));
        return;
    }
    const int64_t step = recorder_->stepsDone();
    for (int r = 0; r < world(); ++r) {
        std::optional<std::string> text =
            // A rank sends its summary right after the last step; one that died never does.
            r == 0 ? parallel::toJson(ranked_->summary())
                   : comm_->fetch(key + std::to_string(r), 30.0);
        if (!text) {
            event(step, EventKind::Warning, "rank " + std::to_string(r) + " sent no summary");
            continue;
        }
        const parallel::RankSummary summary = parallel::rankSummaryFromJson(*text);
        event(step, EventKind::Info, parallel::describe(summary), summary.median_step_ms);
    }
}

void RunLoop::flush() {
    numerics_->deliver(obs_);  // before the steps: a step's numerics never come after it
    if (numerics_->locating()) {
        locateWatched();  // the flush waits for the device anyway
    }
    if (const std::optional<int64_t> bad_step = recorder_->flush()) {
        event(*bad_step, EventKind::NonFinite, "training loss is not finite");
        throw RunFailure(
            "diverged: the training loss became NaN/inf at step " + std::to_string(*bad_step),
            FailureKind::NonFinite);
    }
    // What was read back is committed now: an evaluation, a slow step or a wait for
    // data may come before the next read-back.
    obs_.onIdle();
}

EvalRecord RunLoop::evaluate(int64_t s) {
    model_->eval();
    torch::NoGradGuard no_grad;
    // The cast cache is off for no-grad passes (LibTorch 1.13 loses grad_fn otherwise).
    autocast::AutocastGuard autocast(device_.type(), precision_->dtype(), precision_->autocast(),
                                     /*cache=*/false);
    TaskHead::Sums sums;
    forEachEvalBatch(spec_, arm_, *dataset_, *precision_, device_,
                     [&](const at::Tensor& x, const at::Tensor& target) {
                         head_->accumulate(model_->forward(x), target, sums);
                     });
    model_->train();
    return evalRecordOf(s, samples_, sums, secondsSince(t0_));
}

RunOutcome RunLoop::run() {
    t0_ = Clock::now();
    setUp();
    memory_->resetPeak();
    start();
    t0_ = Clock::now();
    recorder_->begin();
    RunOutcome out;
    for (int64_t s = 1; s <= planned_; ++s) {
        StepGraph::betweenSteps();
        if (cancel_.cancelled() || !trainStep(s)) {
            out.status = RunStatus::Cancelled;
            out.failure = FailureKind::Cancelled;
            break;
        }
        const bool eval = evalDue(s);
        if (eval || recorder_->flushDue()) {
            flush();
        }
        if (eval) {
            recorder_->breakChain();  // the evaluation is no part of the next step
            obs_.onEval(evaluate(s));
            obs_.onIdle();
        }
    }
    flush();
    finish(out);
    out.steps_done = recorder_->stepsDone();
    out.wall_s = secondsSince(t0_);
    return out;
}

// The run's start for the observer: what it is (RunInfo, the environment) and the
// events at step 0 that say how it trains.
void RunLoop::start() {
    RunInfo info = runInfoOf(arm_, *precision_, device_.str(), seed_, planned_, armBatch(), lr_);
    auto env = probe::probeEnvironment(device_.str());
    env.memory = memory_->measure();
    if (comm_) {
        env.world_size = comm_->world();
        env.dist_backend = comm_->backend();
        event(0, EventKind::Info,
              "data-parallel: " + std::to_string(world()) + " ranks over " + comm_->backend() +
                  ", each a shard of micro-batch " + std::to_string(armBatch()) +
                  "; global batch " + std::to_string(armBatch() * k_ * world()));
    }
    info.env_json = probe::toJson(env);
    obs_.onStart(info);
    if (opt_.opening_events) {
        for (const auto& e : opt_.opening_events(arm_index_, seed_)) {
            obs_.onEvent(e);
        }
    }
    for (const auto& e : armEvents(arm_, *precision_, *updater_, device_)) {
        obs_.onEvent(e);
    }
    if (spec_.model.name == "torchscript") {
        const auto file = models::inspectScripted(spec_.model.file);
        event(0, EventKind::Info,
              "model file " + models::describe(file) + ", " + std::to_string(params_.size()) +
                  " parameter tensors; task " + config::toString(head_->task()));
        if (std::string advice = models::frozenAdvice(file); !advice.empty()) {
            event(0, EventKind::Warning, advice);
        }
    }
    if (precision_->scaler()) {
        event(0, EventKind::Info, "dynamic loss scaling with " + precision_->scalerKind(),
              arm_.scaler.init_scale);
    }
    for (const std::string& note : numerics_->startNotes()) {
        event(0, EventKind::Info, note);
    }
    if (graph_ && spec_.numerics_every > 0) {
        event(0, EventKind::Warning,
              "per-layer numerics are recorded on the eager steps before capture only: a "
              "CUDA-graph arm replays its step without them");
    }
    obs_.onIdle();  // the opening events are committed before the first step
}

// After the last step: the device-busy figure, the numerics' cost, the parameters or
// the model file asked for, the ranks' summaries and the shared-GPU warning.
void RunLoop::finish(const RunOutcome& out) {
    const bool shared = opt_.shared_device && opt_.shared_device();
    recorder_->reportDeviceBusy(shared);
    if (const std::string note = numerics_->costNote(secondsSince(t0_) * 1000.0); !note.empty()) {
        event(recorder_->stepsDone(), EventKind::Info, note, numerics_->hostMs());
    }
    if (opt_.recording_cost) {
        *opt_.recording_cost = recorder_->cost();
    }
    if (opt_.parameters_out) {
        opt_.parameters_out->clear();
        for (const auto& p : model_->parameters()) {
            auto flat = p.detach().to(at::kCPU, at::kDouble).contiguous().view({-1});
            auto* d = flat.data_ptr<double>();
            opt_.parameters_out->insert(opt_.parameters_out->end(), d, d + flat.numel());
        }
    }
    if (!opt_.save_model_to.empty() && out.status != RunStatus::Cancelled && !opt_.ranks.rank) {
        // The run trained; a file that cannot be written is a warning, not a failure.
        try {
            models::saveScripted(*model_, opt_.save_model_to);
            event(recorder_->stepsDone(), EventKind::Info,
                  "trained model saved to " + opt_.save_model_to);
        } catch (const std::exception& e) {
            event(recorder_->stepsDone(), EventKind::Warning,
                  std::string("the trained model could not be saved: ") + e.what());
        }
    }
    if (comm_ && out.status != RunStatus::Cancelled) {
        finishRanks();  // a cancelled rank 0 leaves at once; the others fail at their next step
    }
    if (shared) {
        event(recorder_->stepsDone(), EventKind::Warning,
              "this run shared its GPU with other runs for part of its time (runs_per_gpu " +
                  std::to_string(spec_.runs_per_gpu) +
                  "): its step times and memory are not the GPU's alone");
    }
}

}  // namespace ampbench::train
