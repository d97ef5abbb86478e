#include "core/train/Trainer.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "core/amp/AutocastGuard.h"
#include "core/amp/LossScaler.h"
#include "core/data/DataError.h"
#include "core/data/Datasets.h"
#include "core/data/Prefetcher.h"
#include "core/models/Registry.h"
#include "core/probe/Environment.h"
#include "core/probe/MemoryProbe.h"
#include "core/probe/StepTimer.h"
#include "core/store/StoreError.h"
#include "core/train/OptimizerStep.h"
#include "core/train/ParameterUpdater.h"
#include "core/train/StepGraph.h"

namespace ampbench::train {

using namespace run;  // the records a run emits
using config::Precision;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// A run that must stop with status Failed and this message: by default an arm
/// that cannot run as asked here; NonFinite when it diverged.
struct RunFailure : std::runtime_error {
    explicit RunFailure(const std::string& message, FailureKind why = FailureKind::Setup)
        : std::runtime_error(message), kind(why) {}
    FailureKind kind;
};

/// Steps whose device-side values have not been read back yet.
struct PendingStep {
    StepRecord rec;
    at::Tensor loss;                     // mean loss of the step's micro-batches, on the device
    at::Tensor norm;                     // unscaled global gradient norm
    at::Tensor scale;                    // loss scale used for the backward
    at::Tensor found_inf;                // set when the skip is decided on the device
    std::vector<at::Tensor> norm_parts;  // per-gradient norms when `norm` is deferred
};

class RunLoop {
  public:
    RunLoop(const config::ExperimentSpec& spec, int arm_index, uint64_t seed,
            TrainObserver& observer, const CancelToken& cancel, const TrainOptions& options)
        : spec_(spec),
          arm_(spec.arms.at(static_cast<size_t>(arm_index))),
          seed_(seed),
          obs_(observer),
          cancel_(cancel),
          opt_(options),
          device_(resolveDevice(spec.device)) {}

    RunOutcome run();
    /// Reports the steps that completed but were not flushed yet (after a failure).
    void salvage() noexcept {
        try {
            flush();
        } catch (...) {
        }
    }
    int64_t stepsDone() const { return steps_done_; }

  private:
    void setUp();
    data::Batch nextBatch(double& wait_ms);
    at::Tensor lossOf(const at::Tensor& logits, const at::Tensor& target) const;
    /// False when a cancel came between micro-batches: the partial step is dropped.
    bool trainStep(int64_t s);
    /// The same step replayed from a CUDA graph (captured at its first use).
    bool graphStep(int64_t s);
    /// Stops the step timer, samples memory and queues the step for read-back.
    void completeStep(StepRecord& rec, PendingStep pending);
    /// Reads the pending steps back from the device and reports them.
    void flush();
    bool flushDue() const;
    /// After the probe steps: records the norm every k-th step when it costs more
    /// than its budget of the step time.
    void chooseNormInterval(int64_t s);
    EvalRecord evaluate(int64_t s);
    bool evalDue(int64_t s) const;
    void event(int64_t step, EventKind kind, const std::string& msg, double value = 0.0) {
        obs_.onEvent({step, kind, msg, value});
    }
    /// Runs `f` and, when the caller asked for it, adds its host time to one part
    /// of the recording's cost (TrainOptions::recording_cost).
    template <class F>
    void metered(double RecordingCost::*part, F&& f) {
        if (!opt_.recording_cost) {
            f();
            return;
        }
        const auto t = Clock::now();
        f();
        cost_.*part += msSince(t);
    }

    const config::ExperimentSpec& spec_;
    const config::ArmSpec& arm_;
    uint64_t seed_;
    TrainObserver& obs_;
    const CancelToken& cancel_;
    TrainOptions opt_;
    c10::Device device_;

    Precision precision_ = Precision::Fp32;
    bool autocast_ = false;
    at::ScalarType amp_dtype_ = at::kFloat;
    std::shared_ptr<const data::Dataset> dataset_;
    data::InputShape shape_;
    std::shared_ptr<models::Network> model_;
    std::vector<at::Tensor> params_;
    std::unique_ptr<ParameterUpdater> updater_;
    std::unique_ptr<amp::LossScaler> scaler_;
    std::unique_ptr<data::Prefetcher> prefetcher_;
    std::vector<data::Batch> device_pool_;  // synthetic data, already on the device
    size_t pool_pos_ = 0;
    std::unique_ptr<probe::StepTimer> timer_;
    std::unique_ptr<probe::MemoryProbe> memory_;
    int64_t planned_ = 0;
    int k_ = 1;
    double lr_ = 0;
    Clock::time_point t0_;
    std::vector<PendingStep> pending_;
    RecordingCost cost_;  // see TrainOptions::recording_cost
    /// The gradient norm is recorded at steps 1, 1 + k, 1 + 2k, ... (see
    /// TrainOptions::grad_norm_limit).
    int64_t norm_every_ = 1;
    double probe_norm_ms_ = 0;
    int64_t probe_behind_ = 0;  // probe steps where the device lagged the host
    Clock::time_point probe_t0_, last_flush_;
    int64_t steps_done_ = 0;
    int64_t samples_ = 0;
    int64_t micro_batches_ = 0;
    // CUDA-graph mode: static input buffers and the captured step's outputs.
    std::unique_ptr<StepGraph> graph_;
    at::Tensor static_x_, static_y_, graph_loss_, graph_norm_, graph_inf_;
};

/// Eager steps before capture: cuDNN picks its algorithms, lazy state is created.
constexpr int64_t kEagerStepsBeforeCapture = 3;
/// The steps over which the gradient norm's share of step time is measured (the
/// first step, with cuDNN's algorithm search, is left out).
constexpr int64_t kNormProbeFirst = 2, kNormProbeLast = 11;
/// Steps read back at once at most, whatever flush_min_interval_ms says.
constexpr size_t kMaxPendingSteps = 1000;

void RunLoop::setUp() {
    const bool cuda = device_.is_cuda();
    // 0 = every logical CPU: LibTorch's own default can be a single thread.
    int threads = spec_.cpu_threads > 0 ? spec_.cpu_threads
                                        : static_cast<int>(std::thread::hardware_concurrency());
    if (threads > 0 && threads != at::get_num_threads()) {
        at::set_num_threads(threads);
    }
    precision_ = resolvePrecision(arm_.precision, cuda);
    autocast_ = precision_ != Precision::Fp32;
    amp_dtype_ = precision_ == Precision::AmpFp16 ? at::kHalf : at::kBFloat16;
    if (autocast_ && !amp::autocastSupported(device_.type(), amp_dtype_)) {
        throw RunFailure("arm '" + arm_.name + "': " + config::toString(precision_) +
                         " autocast is not supported on " + device_.str() +
                         " by this LibTorch (1.13 CPU autocast takes bf16 only): use amp-bf16 "
                         "or run on CUDA");
    }
    if (cuda) {
        auto& ctx = at::globalContext();
        ctx.setAllowTF32CuBLAS(arm_.tf32);
        ctx.setAllowTF32CuDNN(arm_.tf32);
        ctx.setBenchmarkCuDNN(spec_.cudnn_benchmark);
    }
    torch::manual_seed(seed_);
    dataset_ = data::openDataset(spec_.data);
    shape_ = dataset_->shape();
    model_ = models::makeModel(spec_.model, shape_);
    model_->to(device_);
    if (arm_.checkpointing) {
        if (!model_->checkpointable()) {
            throw RunFailure("arm '" + arm_.name + "': model '" + spec_.model.name +
                             "' has no blocks to checkpoint (resnet and transformer do)");
        }
        model_->setCheckpointing(true);
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
    model_->train();
    params_ = model_->parameters();
    k_ = arm_.accumulation;
    lr_ = config::scaledLearningRate(spec_, arm_);
    updater_ = makeUpdater(params_, spec_.optimizer, lr_, device_);
    if (precision_ == Precision::AmpFp16) {
        amp::LossScalerOptions so{arm_.scaler.init_scale, arm_.scaler.growth_factor,
                                  arm_.scaler.backoff_factor, arm_.scaler.growth_interval};
        scaler_ = std::make_unique<amp::LossScaler>(so, device_);
    }
    planned_ = plannedOptimizerSteps(spec_, arm_, dataset_->trainSize());
    if (dataset_->synthetic()) {
        // Generated data: keep a few batches on the device, so the run measures the model.
        auto gen_seed = seed_;
        int64_t n = dataset_->trainSize();
        for (int i = 0; i < 4; ++i) {
            auto idx = at::remainder(
                at::arange(static_cast<int64_t>(i) * spec_.micro_batch,
                           static_cast<int64_t>(i + 1) * spec_.micro_batch, at::kLong) +
                    static_cast<int64_t>(gen_seed % static_cast<uint64_t>(n)),
                n);
            auto b = dataset_->trainBatch(idx);
            device_pool_.push_back({b.input.to(device_), b.target.to(device_)});
        }
    } else {
        prefetcher_ = std::make_unique<data::Prefetcher>(dataset_, spec_.micro_batch, seed_,
                                                         spec_.data.prefetch, device_.is_cuda());
    }
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
    memory_ = std::make_unique<probe::MemoryProbe>(device_);
}

data::Batch RunLoop::nextBatch(double& wait_ms) {
    if (!device_pool_.empty()) {
        auto& b = device_pool_[pool_pos_++ % device_pool_.size()];
        return b;
    }
    auto t = Clock::now();
    data::Batch b = prefetcher_->next();
    wait_ms += msSince(t);
    const bool async = device_.is_cuda();
    return {b.input.to(device_, async), b.target.to(device_, async)};
}

at::Tensor RunLoop::lossOf(const at::Tensor& logits, const at::Tensor& target) const {
    return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), target.reshape({-1}));
}

bool RunLoop::evalDue(int64_t s) const {
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

bool RunLoop::trainStep(int64_t s) {
    if (graph_ && s > kEagerStepsBeforeCapture) {
        return graphStep(s);
    }
    if (s == kNormProbeFirst) {
        probe_t0_ = Clock::now();
    } else if (s == kNormProbeLast + 1) {
        chooseNormInterval(s);
    }
    StepRecord rec;
    rec.step = s;
    rec.lr = lr_;
    rec.timed = s > spec_.warmup_steps;
    if (opt_.instrument) {
        metered(&RecordingCost::timers_ms, [&] { timer_->start(); });
    }
    at::Tensor loss_sum;
    const int64_t samples_before = samples_;
    for (int k = 0; k < k_; ++k) {
        ++micro_batches_;
        if (opt_.before_micro_batch) {
            opt_.before_micro_batch(micro_batches_);
        }
        if (cancel_.cancelled()) {
            for (auto& p : params_) {
                p.mutable_grad().reset();
            }
            if (opt_.instrument) {
                timer_->discard();  // a partial step has no step time
            }
            samples_ = samples_before;
            return false;
        }
        double wait = 0;
        data::Batch b = nextBatch(wait);
        rec.data_wait_ms += wait;
        auto x = arm_.channels_last ? b.input.contiguous(at::MemoryFormat::ChannelsLast) : b.input;
        at::Tensor loss;
        {
            amp::AutocastGuard autocast(device_.type(), amp_dtype_, autocast_);
            loss = lossOf(model_->forward(x), b.target);
        }
        auto detached = loss.detach();
        loss_sum = loss_sum.defined() ? loss_sum + detached : detached;
        auto scaled = k_ > 1 ? loss / static_cast<double>(k_) : loss;
        if (scaler_) {
            scaled = scaler_->scale(scaled);
        }
        scaled.backward();
        samples_ += b.input.size(0);
    }
    at::Tensor scale_used = scaler_ ? scaler_->scaleTensor().clone() : at::Tensor();
    const bool want_norm = opt_.instrument && (s - 1) % norm_every_ == 0;
    const bool probing = opt_.instrument && s >= kNormProbeFirst && s <= kNormProbeLast;
    if (probing) {
        timer_->mark();  // the end of the backward pass in the device's queue
    }
    auto result = finishOptimizerStep(params_, *updater_, scaler_.get(), arm_.grad_clip, want_norm,
                                      /*defer_norm=*/true);
    if (probing && !timer_->markerReached()) {
        ++probe_behind_;  // the device is still on the backward pass: it sets the pace
    }
    rec.skipped = result.skipped;
    cost_.grad_norm_ms += result.norm_host_ms;
    if (probing) {
        probe_norm_ms_ += result.norm_host_ms;
    }
    completeStep(rec,
                 {rec, k_ > 1 ? loss_sum / static_cast<double>(k_) : loss_sum, result.grad_norm,
                  scale_used, result.found_inf, std::move(result.grad_norm_parts)});
    return true;
}

void RunLoop::chooseNormInterval(int64_t s) {
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
    event(s, EventKind::Info, msg, static_cast<double>(norm_every_));
}

bool RunLoop::flushDue() const {
    if (pending_.size() >= kMaxPendingSteps) {
        return true;
    }
    return static_cast<int>(pending_.size()) >= opt_.flush_every &&
           (opt_.flush_min_interval_ms <= 0 || msSince(last_flush_) >= opt_.flush_min_interval_ms);
}

void RunLoop::completeStep(StepRecord& rec, PendingStep pending) {
    if (opt_.instrument) {
        metered(&RecordingCost::timers_ms, [&] { timer_->stop(); });
        metered(&RecordingCost::memory_ms, [&] {
            auto mem = memory_->sample();
            rec.mem_allocated = mem.allocated;
            rec.mem_reserved = mem.reserved;
            rec.mem_peak = mem.peak;
        });
    }
    rec.samples = samples_;
    rec.wall_s = secondsSince(t0_);
    pending.rec = rec;
    pending_.push_back(std::move(pending));
    steps_done_ = rec.step;
}

bool RunLoop::graphStep(int64_t s) {
    StepRecord rec;
    rec.step = s;
    rec.lr = lr_;
    rec.timed = s > spec_.warmup_steps;
    ++micro_batches_;
    if (opt_.before_micro_batch) {
        opt_.before_micro_batch(micro_batches_);
    }
    if (cancel_.cancelled()) {
        return false;
    }
    if (opt_.instrument) {
        metered(&RecordingCost::timers_ms, [&] { timer_->start(); });
    }
    double wait = 0;
    data::Batch b = nextBatch(wait);
    rec.data_wait_ms = wait;
    auto x = arm_.channels_last ? b.input.contiguous(at::MemoryFormat::ChannelsLast) : b.input;
    if (!graph_->captured()) {
        static_x_ = at::empty_like(x);
        static_y_ = at::empty_like(b.target);
    }
    static_x_.copy_(x, /*non_blocking=*/true);
    static_y_.copy_(b.target, /*non_blocking=*/true);
    at::Tensor scale_used = scaler_ ? scaler_->scaleTensor().clone() : at::Tensor();
    if (!graph_->captured()) {
        for (auto& p : params_) {
            p.mutable_grad().reset();
        }
        graph_->capture([&] {
            at::Tensor loss;
            {
                amp::AutocastGuard autocast(device_.type(), amp_dtype_, autocast_, /*cache=*/false);
                loss = lossOf(model_->forward(static_x_), static_y_);
            }
            graph_loss_ = loss.detach();
            (scaler_ ? scaler_->scale(loss) : loss).backward();
            auto r = finishOptimizerStep(params_, *updater_, scaler_.get(), arm_.grad_clip, true);
            graph_norm_ = r.grad_norm;
            graph_inf_ = r.found_inf;
        });
        event(s, EventKind::Info, "training step captured as a CUDA graph; replayed from here on");
    }
    graph_->replay();
    samples_ += b.input.size(0);
    completeStep(
        rec, {rec, graph_loss_.clone(), graph_norm_.defined() ? graph_norm_.clone() : at::Tensor(),
              scale_used, graph_inf_.defined() ? graph_inf_.clone() : at::Tensor()});
    return true;
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

void RunLoop::flush() {
    last_flush_ = Clock::now();
    if (pending_.empty()) {
        return;
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
        metered(&RecordingCost::timers_ms, [&] { times = timer_->collect(); });
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
                event(rec.step, EventKind::SkippedStep,
                      "gradients held inf/NaN: optimizer step skipped, loss scale backed off",
                      rec.loss_scale * arm_.scaler.backoff_factor);
            }
        });
        if (!std::isfinite(rec.loss) && !scaler_ && !bad_step) {
            bad_step = rec.step;
        }
    }
    // Releasing the steps' device tensors (losses, per-gradient norms) is part of
    // the read-back's cost too.
    metered(&RecordingCost::readback_ms, [&] { batch.clear(); });
    if (bad_step) {
        event(*bad_step, EventKind::NonFinite, "training loss is not finite");
        throw RunFailure(
            "diverged: the training loss became NaN/inf at step " + std::to_string(*bad_step),
            FailureKind::NonFinite);
    }
}

EvalRecord RunLoop::evaluate(int64_t s) {
    EvalRecord r;
    r.step = s;
    r.samples = samples_;
    model_->eval();
    torch::NoGradGuard no_grad;
    // The cast cache is off for no-grad passes (LibTorch 1.13 loses grad_fn otherwise).
    amp::AutocastGuard autocast(device_.type(), amp_dtype_, autocast_, /*cache=*/false);
    const int64_t bs = std::max<int64_t>(spec_.micro_batch, 256);
    int64_t total = dataset_->valSize();
    if (spec_.eval_batches > 0) {
        total = std::min<int64_t>(total, bs * spec_.eval_batches);
    }
    at::Tensor loss_sum = at::zeros({}, at::TensorOptions().device(device_).dtype(at::kDouble));
    at::Tensor correct = at::zeros({}, at::TensorOptions().device(device_).dtype(at::kLong));
    int64_t count = 0;
    for (int64_t start = 0; start < total; start += bs) {
        auto b = dataset_->valBatch(start, std::min(bs, total - start));
        auto x = b.input.to(device_);
        if (arm_.channels_last) {
            x = x.contiguous(at::MemoryFormat::ChannelsLast);
        }
        auto y = b.target.to(device_).reshape({-1});
        auto logits = model_->forward(x);
        logits = logits.reshape({-1, logits.size(-1)}).to(at::kFloat);
        loss_sum += at::cross_entropy_loss(logits, y, {}, at::Reduction::Sum).to(at::kDouble);
        correct += logits.argmax(-1).eq(y).sum();
        count += y.size(0);
    }
    model_->train();
    r.val_loss = count > 0 ? loss_sum.item<double>() / static_cast<double>(count) : NAN;
    r.val_accuracy = count > 0 ? static_cast<double>(correct.item<int64_t>()) / count : NAN;
    r.wall_s = secondsSince(t0_);
    return r;
}

RunOutcome RunLoop::run() {
    t0_ = Clock::now();
    setUp();
    memory_->resetPeak();
    RunInfo info;
    info.arm = arm_.name;
    info.precision = config::toString(precision_);
    info.device = device_.str();
    info.seed = seed_;
    info.planned_steps = planned_;
    info.micro_batch = spec_.micro_batch;
    info.accumulation = k_;
    info.lr = lr_;
    auto env = probe::probeEnvironment(device_.str());
    info.env_json = probe::toJson(env);
    obs_.onStart(info);
    if (arm_.precision == Precision::Amp) {
        event(0, EventKind::Info,
              "precision 'amp' runs as " + config::toString(precision_) + " on " + device_.str());
    }
    event(0, EventKind::Info, "optimizer: " + updater_->describe());
    if (scaler_) {
        event(0, EventKind::Info,
              std::string("dynamic loss scaling with ") +
                  (scaler_->fused() ? "ATen's fused kernels" : "portable tensor ops"),
              arm_.scaler.init_scale);
    }
    t0_ = Clock::now();
    last_flush_ = t0_;
    RunOutcome out;
    for (int64_t s = 1; s <= planned_; ++s) {
        if (cancel_.cancelled() || !trainStep(s)) {
            out.status = RunStatus::Cancelled;
            out.failure = FailureKind::Cancelled;
            break;
        }
        const bool eval = evalDue(s);
        if (eval || flushDue()) {
            flush();
        }
        if (eval) {
            if (opt_.instrument) {
                timer_->breakChain();  // the evaluation is no part of the next step
            }
            obs_.onEval(evaluate(s));
        }
    }
    flush();
    if (opt_.recording_cost) {
        *opt_.recording_cost = cost_;
    }
    if (opt_.parameters_out) {
        opt_.parameters_out->clear();
        for (const auto& p : model_->parameters()) {
            auto flat = p.detach().to(at::kCPU, at::kDouble).contiguous().view({-1});
            auto* d = flat.data_ptr<double>();
            opt_.parameters_out->insert(opt_.parameters_out->end(), d, d + flat.numel());
        }
    }
    out.steps_done = steps_done_;
    out.wall_s = secondsSince(t0_);
    return out;
}

}  // namespace

std::string resolveDevice(config::DeviceKind kind) {
    switch (kind) {
        case config::DeviceKind::Cpu:
            return "cpu";
        case config::DeviceKind::Cuda:
            if (!probe::cudaAvailable()) {
#ifdef AMPBENCH_WITH_CUDA
                throw std::runtime_error(
                    "device 'cuda' was asked for but no CUDA device is visible");
#else
                throw std::runtime_error(
                    "device 'cuda' was asked for but this build has no CUDA (LibTorch is "
                    "CPU-only)");
#endif
            }
            return "cuda:0";
        case config::DeviceKind::Auto:
            return probe::cudaAvailable() ? "cuda:0" : "cpu";
    }
    return "cpu";
}

int64_t plannedOptimizerSteps(const config::ExperimentSpec& spec, const config::ArmSpec& arm,
                              int64_t train_size) {
    int64_t micro = spec.micro_steps;
    if (spec.epochs > 0) {
        micro = spec.epochs * std::max<int64_t>(1, train_size / spec.micro_batch);
    }
    return micro / std::max(1, arm.accumulation);
}

int64_t trainingSetSize(const config::DataSpec& data) {
    return data::openDataset(data)->trainSize();
}

RunOutcome trainRun(const config::ExperimentSpec& spec, int arm_index, uint64_t seed,
                    TrainObserver& observer, const CancelToken& cancel,
                    const TrainOptions& options) {
    RunOutcome out;
    std::unique_ptr<RunLoop> loop;
    auto fail = [&](EventKind kind, FailureKind why, const std::string& message) {
        out.status = RunStatus::Failed;
        out.failure = why;
        out.error = message;
        if (loop) {
            loop->salvage();
            out.steps_done = loop->stepsDone();
        }
        try {
            observer.onEvent({out.steps_done, kind, message, 0.0});
        } catch (...) {
        }
    };
    const auto t0 = Clock::now();
    try {
        if (arm_index < 0 || arm_index >= static_cast<int>(spec.arms.size())) {
            throw RunFailure("arm index " + std::to_string(arm_index) + " is out of range");
        }
        loop = std::make_unique<RunLoop>(spec, arm_index, seed, observer, cancel, options);
        out = loop->run();
    } catch (const RunFailure& e) {
        fail(EventKind::Warning, e.kind, e.what());  // a NaN loss has its own event already
    } catch (const c10::OutOfMemoryError& e) {
        fail(EventKind::OutOfMemory, FailureKind::OutOfMemory,
             std::string("out of memory: ") + e.what_without_backtrace());
    } catch (const std::bad_alloc&) {
        fail(EventKind::OutOfMemory, FailureKind::OutOfMemory,
             "out of memory: host allocation failed");
    } catch (const c10::Error& e) {
        // LibTorch's CPU allocator reports a failed allocation as a plain c10::Error.
        const std::string what = e.what_without_backtrace();
        const bool alloc = what.find("can't allocate memory") != std::string::npos ||
                           what.find("not enough memory") != std::string::npos;
        fail(alloc ? EventKind::OutOfMemory : EventKind::Warning,
             alloc ? FailureKind::OutOfMemory : FailureKind::Runtime,
             alloc ? "out of memory: " + what : what);
    } catch (const data::DataError& e) {
        fail(EventKind::Warning, FailureKind::Data, e.what());
    } catch (const store::StoreError& e) {
        fail(EventKind::Warning, FailureKind::Recording, e.what());
    } catch (const std::exception& e) {
        fail(EventKind::Warning, FailureKind::Runtime, e.what());
    }
    out.wall_s = secondsSince(t0);
    loop.reset();  // frees the model and optimizer before the next run starts
    try {
        observer.onFinish(out);
    } catch (const std::exception& e) {
        out.status = RunStatus::Failed;
        out.failure = FailureKind::Recording;
        out.record_error = e.what();
        out.error = std::string("could not record the end of the run: ") + e.what();
    }
    return out;
}

}  // namespace ampbench::train
