#include "core/train/private/FusedRuns.h"

#include "core/train/private/FusedLoop.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "core/amp/Fp8Linear.h"
#include "core/amp/Precision.h"
#include "core/autocast/AutocastGuard.h"
#include "core/config/LrSchedule.h"
#include "core/config/PrecisionFormats.h"
#include "core/data/Datasets.h"
#include "core/data/Prefetcher.h"
#include "core/models/Fused.h"
#include "core/models/ScriptedModel.h"
#include "core/parallel/Communicator.h"
#include "core/probe/Environment.h"
#include "core/probe/MemoryProbe.h"
#include "core/probe/StepTimer.h"
#include "core/run/FusedGroup.h"
#include "core/store/RunRecorder.h"
#include "core/train/private/OptimizerStep.h"
#include "core/train/private/ParameterUpdater.h"
#include "core/train/private/RunLoop.h"
#include "core/train/private/RunStream.h"
#include "core/train/private/StepGraph.h"
#include "core/train/private/StepRecorder.h"
#include "core/train/private/TaskHead.h"

namespace ampbench::train {

using namespace run;  // the records a run emits

std::string fusionProblem(const config::ExperimentSpec& spec, int arm_index, bool cuda) {
    const auto& arm = spec.arms.at(static_cast<size_t>(arm_index));
    if (spec.model.name != "cnn" && spec.model.name != "mlp") {
        return "model '" + spec.model.name + "' is not the built-in cnn or mlp";
    }
    if (config::seedsForArm(spec, arm).size() < 2) {
        return "it has one seed";
    }
    const config::Precision p = resolvePrecision(arm.precision, cuda);
    if (!config::formatOf(p).fuses_seeds) {
        return "its precision " + config::toString(p) + " trains only alone";
    }
    if (arm.ranks > 1) {
        return "it trains data-parallel";
    }
    if (spec.numerics_every > 0) {
        return "per-layer numerics are recorded";
    }
    if (!arm.fp32_modules.empty()) {
        return "it has FP32 islands";
    }
    if (arm.checkpointing) {
        return "it checkpoints activations";
    }
    return {};
}

namespace fused {

void FusedLoop::setUp() {
    if (opt_.ranks.first_gpu > 0) {
        // Runs spread over the machine's GPUs: the group's own GPU, as a run alone takes it.
        device_ = parallel::rankDevice(device_, opt_.ranks);
    }
    stream_ = std::make_unique<RunStream>(device_);
    applyCpuThreads(spec_.cpu_threads);
    applyProcessSwitches(spec_, arm_, device_);
    dataset_ = data::openDataset(spec_.data);
    if (!device_.is_cuda()) {
        tensors_ = std::make_unique<probe::CpuTensorAccount>();
    }
    const data::InputShape shape = dataset_->shape();
    head_ = std::make_unique<TaskHead>(resolveTask(spec_, shape), spec_.model.label_smoothing);
    k_ = arm_.accumulation;
    lr_ = plan_.planned.lr;
    planned_ = plannedOptimizerSteps(spec_, arm_, dataset_->trainSize());
    const config::Precision kind = plan_.planned.resolvedOn(device_.str());
    std::vector<std::shared_ptr<models::Network>> models;
    std::vector<at::Generator> dropout;
    // A member's dropout draws from a generator of its own, which a graph cannot replay.
    graphs_ =
        arm_.cuda_graph && device_.is_cuda() && StepGraph::available() && spec_.model.dropout <= 0;
    for (auto& m : members_) {
        m->precision = amp::Precision::make(kind, arm_, device_, amp::linearRows(spec_));
        if (const std::string why = m->precision->unsupported(); !why.empty()) {
            throw RunFailure("arm '" + arm_.name + "': " + why);
        }
        at::Generator generator;
        try {
            m->model = seededModel(spec_.model, shape, device_, m->seed, &generator);
        } catch (const models::ModelError& e) {
            throw RunFailure(e.what());
        }
        if (arm_.channels_last) {
            if (!m->model->convolutional()) {
                throw RunFailure("arm '" + arm_.name +
                                 "': channels_last needs a convolutional model");
            }
            torch::NoGradGuard no_grad;
            for (auto& p : m->model->parameters()) {
                if (p.dim() == 4) {
                    p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
                }
            }
        }
        m->model->train();
        m->params = m->model->parameters();
        // The fused updater skips one member's step on the device when its own scaler
        // found an inf; LibTorch's optimizer is told on the host.
        m->updater = makeUpdater(m->params, spec_.optimizer, lr_, device_, /*allow_fused=*/true,
                                 /*lr_on_device=*/graphs_);
        graphs_ = graphs_ && m->updater->skipsOnDevice();
        if (dataset_->synthetic()) {
            m->pool = syntheticPool(*dataset_, armBatch(), m->seed, device_);
        } else {
            m->prefetcher = std::make_unique<data::Prefetcher>(
                dataset_, armBatch(), m->seed, spec_.data.prefetch, device_.is_cuda(), 0, 1);
        }
        m->timer = std::make_unique<probe::StepTimer>(device_);
        m->memory = std::make_unique<probe::MemoryProbe>(device_, tensors_.get());
        TrainOptions o = opt_;
        if (m.get() != members_.front().get()) {
            o.recording_cost = nullptr;  // the group's cost is metered once
        }
        m->recorder = std::make_unique<StepRecorder>(*m->obs, o, *m->timer, *m->memory,
                                                     m->precision->scaler() != nullptr,
                                                     arm_.scaler.backoff_factor);
        models.push_back(m->model);
        dropout.push_back(generator);
    }
    try {
        fused_ = std::make_unique<models::FusedNetwork>(std::move(models), std::move(dropout),
                                                        arm_.channels_last);
    } catch (const std::invalid_argument& e) {
        throw RunFailure("arm '" + arm_.name + "' cannot train its seeds fused: " + e.what());
    }
    if (graphs_) {
        graph_ = std::make_unique<StepGraph>();
    }
}

void FusedLoop::start(Member& m) {
    RunInfo info = runInfoOf(arm_, *m.precision, device_.str(), m.seed, planned_, armBatch(), lr_);
    info.env_json = env_json_;
    m.obs->onStart(info);
    if (opt_.opening_events) {
        for (const auto& e : opt_.opening_events(arm_index_, m.seed)) {
            m.obs->onEvent(e);
        }
    }
    for (const auto& e : armEvents(arm_, *m.precision, *m.updater, device_)) {
        m.obs->onEvent(e);
    }
    if (m.precision->scaler()) {
        m.obs->onEvent({0, EventKind::Info,
                        "dynamic loss scaling with " + m.precision->scalerKind() +
                            ", its own scale for this seed",
                        arm_.scaler.init_scale});
    }
    std::vector<uint64_t> seeds;
    for (const auto& other : members_) {
        seeds.push_back(other->seed);
    }
    m.obs->onEvent(run::fusedSeedsEvent(seeds));
    if (arm_.cuda_graph && !graphs_) {
        m.obs->onEvent({0, EventKind::Warning,
                        "cuda_graph: the fused step trains eagerly (" +
                            std::string(spec_.model.dropout > 0
                                            ? "each seed's dropout draws from its own generator"
                                            : "this build, device or optimizer cannot capture it") +
                            ")",
                        0.0});
    }
    m.obs->onIdle();  // the opening events are committed before the first step
}

data::Batch FusedLoop::microBatch(Member& m) {
    if (!m.active && m.last.input.defined()) {
        return m.last;  // an ended member's slot in the fused model still needs an input
    }
    if (m.held) {
        data::Batch b = std::move(*m.held);
        m.held.reset();
        m.last = b;
        return b;
    }
    data::Batch b;
    if (!m.pool.empty()) {
        b = m.pool[m.pool_pos++ % m.pool.size()];
    } else {
        const auto t = Clock::now();
        data::Batch host = m.prefetcher->next();
        m.rec.data_wait_ms += msSince(t);
        const bool async = device_.is_cuda();
        b = {host.input.to(device_, async), host.target.to(device_, async)};
    }
    b.input = m.precision->input(b.input);
    m.last = b;
    return b;
}

void FusedLoop::end(Member& m, RunStatus status, FailureKind why, const std::string& error) {
    if (!m.active) {
        return;
    }
    m.active = false;
    m.outcome.status = status;
    m.outcome.failure = why;
    m.outcome.error = error;
    m.outcome.steps_done = m.recorder ? m.recorder->stepsDone() : 0;
    m.outcome.wall_s = secondsSince(t0_);
    for (auto& p : m.params) {
        p.mutable_grad().reset();
    }
}

void FusedLoop::failActive(const FailureOf& f) noexcept {
    for (auto& m : members_) {
        if (!m->active) {
            continue;
        }
        try {
            if (m->recorder) {
                m->recorder->flush();  // every completed step is kept
            }
        } catch (...) {
        }
        end(*m, RunStatus::Failed, f.kind, f.message);
        try {
            m->obs->onEvent({m->outcome.steps_done, f.event, f.message, 0.0});
        } catch (...) {
        }
    }
}

bool FusedLoop::evalDue(int64_t s) const {
    if (s == planned_) {
        return opt_.final_eval;
    }
    if (spec_.eval_interval <= 0) {
        return false;
    }
    return (s * k_) / spec_.eval_interval > ((s - 1) * k_) / spec_.eval_interval;
}

bool FusedLoop::openSteps(int64_t s) {
    const double lr = config::scheduledLr(spec_.optimizer, lr_, s - 1, planned_);
    for (auto& m : members_) {
        if (m->active && ownCancel(*m)) {
            end(*m, RunStatus::Cancelled, FailureKind::Cancelled, {});
        }
        if (!m->active) {
            continue;
        }
        m->recorder->beforeStep(s);
        m->rec = StepRecord{};
        m->rec.step = s;
        m->rec.lr = lr;
        m->rec.timed = s > spec_.warmup_steps;
        m->updater->setLr(lr);
        m->loss_sum = at::Tensor();
        m->samples_before = m->samples;
    }
    return anyActive();
}

bool FusedLoop::openMicroBatch(int64_t s, int k) {
    ++micro_batches_;
    if (opt_.before_micro_batch) {
        opt_.before_micro_batch(micro_batches_);
    }
    if (cancel_.cancelled()) {
        for (auto& m : members_) {
            if (!m->active) {
                continue;
            }
            if (k > 0) {
                m->recorder->discardStep();  // the partial step is dropped
                m->samples = m->samples_before;
            }
            for (auto& p : m->params) {
                p.mutable_grad().reset();
            }
            if (!m->static_grads.empty()) {
                at::_foreach_zero_(m->static_grads);
                m->loss_acc.zero_();
            }
        }
        return false;
    }
    for (auto& m : members_) {
        if (!m->active) {
            continue;
        }
        if (k == 0) {
            m->recorder->startStep(s);
        } else if (ownCancel(*m)) {
            m->recorder->discardStep();
            end(*m, RunStatus::Cancelled, FailureKind::Cancelled, {});
        }
    }
    return true;
}

bool FusedLoop::trainStep(int64_t s) {
    if (graphs_ && s > kEagerStepsBeforeCapture) {
        bool fell_back = false;
        const bool trained = graphStep(s, fell_back);
        if (!fell_back) {
            return trained;
        }
    }
    return eagerStep(s);
}

bool FusedLoop::eagerStep(int64_t s) {
    if (!openSteps(s)) {
        return true;
    }
    for (int k = 0; k < k_; ++k) {
        if (!openMicroBatch(s, k)) {
            return false;
        }
        if (!anyActive()) {
            return true;
        }
        std::vector<at::Tensor> inputs;
        std::vector<at::Tensor> targets;
        for (auto& m : members_) {
            data::Batch b = microBatch(*m);
            inputs.push_back(b.input);
            targets.push_back(b.target);
        }
        const amp::Precision& lead = *members_.front()->precision;
        const std::vector<at::Tensor> outputs =
            lead.forward([&] { return fused_->forward(inputs); });
        at::Tensor total;
        for (size_t g = 0; g < members_.size(); ++g) {
            Member& m = *members_[g];
            if (!m.active) {
                continue;  // its slot computes, but trains no more
            }
            const at::Tensor loss =
                lead.forward([&] { return head_->loss(outputs[g], targets[g]); });
            const at::Tensor detached = loss.detach();
            m.loss_sum = m.loss_sum.defined() ? m.loss_sum + detached : detached;
            at::Tensor part = k_ > 1 ? loss / static_cast<double>(k_) : loss;
            if (amp::LossScaler* scaler = m.precision->scaler()) {
                part = scaler->scale(part);  // each member's loss by its own scale
            }
            total = total.defined() ? total + part : part;
            m.samples += inputs[g].size(0);
        }
        total.backward();
    }
    std::vector<OptimizerStepResult> results(members_.size());
    for (size_t g = 0; g < members_.size(); ++g) {
        Member& m = *members_[g];
        if (m.active) {
            m.scale_used = m.precision->scaleInUse();  // before the scaler's update
            results[g] = finishOptimizerStep(m.params, *m.updater, m.precision->scaler(),
                                             arm_.grad_clip, m.recorder->wantsNorm(s),
                                             /*defer_norm=*/true);
        }
    }
    completeSteps(results);
    return true;
}

void FusedLoop::completeSteps(const std::vector<OptimizerStepResult>& results) {
    for (size_t g = 0; g < members_.size(); ++g) {
        Member& m = *members_[g];
        if (!m.active) {
            continue;
        }
        OptimizerStepResult result = results[g];
        m.rec.skipped = result.skipped;
        m.recorder->addNormCost(result.norm_host_ms);
        const at::Tensor loss = k_ > 1 ? m.loss_sum / static_cast<double>(k_) : m.loss_sum;
        m.recorder->completeStep(m.rec,
                                 {m.rec, loss, result.grad_norm, m.scale_used, result.found_inf,
                                  std::move(result.grad_norm_parts)},
                                 m.samples);
    }
}

void FusedLoop::flush() {
    for (auto& m : members_) {
        if (!m->active) {
            continue;
        }
        if (const std::optional<int64_t> bad = m->recorder->flush()) {
            m->obs->onEvent({*bad, EventKind::NonFinite, "training loss is not finite", 0.0});
            end(*m, RunStatus::Failed, FailureKind::NonFinite,
                "diverged: the training loss became NaN/inf at step " + std::to_string(*bad));
            m->obs->onEvent({m->outcome.steps_done, EventKind::Warning, m->outcome.error, 0.0});
        }
        m->obs->onIdle();  // what was read back is committed now, not at the next read-back
    }
}

void FusedLoop::evaluate(int64_t s) {
    fused_->train(false);
    torch::NoGradGuard no_grad;
    const amp::Precision& lead = *members_.front()->precision;
    autocast::AutocastGuard autocast(device_.type(), lead.dtype(), lead.autocast(),
                                     /*cache=*/false);
    std::vector<TaskHead::Sums> sums(members_.size());
    forEachEvalBatch(spec_, arm_, *dataset_, lead, device_,
                     [&](const at::Tensor& x, const at::Tensor& target) {
                         const auto outputs = fused_->forwardEach(x);
                         for (size_t g = 0; g < members_.size(); ++g) {
                             if (members_[g]->active) {
                                 head_->accumulate(outputs[g], target, sums[g]);
                             }
                         }
                     });
    fused_->train(true);
    for (size_t g = 0; g < members_.size(); ++g) {
        Member& m = *members_[g];
        if (m.active) {
            m.obs->onEval(evalRecordOf(s, m.samples, sums[g], secondsSince(t0_)));
            m.obs->onIdle();
        }
    }
}

void FusedLoop::run() {
    t0_ = Clock::now();
    setUp();
    probe::Environment env = probe::probeEnvironment(device_.str());  // once for the group
    env.memory = members_.front()->memory->measure();
    env_json_ = probe::toJson(env);
    for (auto& m : members_) {
        m->memory->resetPeak();
        start(*m);
    }
    t0_ = Clock::now();
    for (auto& m : members_) {
        m->recorder->begin();
    }
    bool cancelled = false;
    for (int64_t s = 1; s <= planned_ && anyActive(); ++s) {
        StepGraph::betweenSteps();
        if (cancel_.cancelled() || !trainStep(s)) {
            cancelled = true;
            break;
        }
        const bool eval = evalDue(s);
        const bool due = std::any_of(members_.begin(), members_.end(), [](const auto& m) {
            return m->active && m->recorder->flushDue();
        });
        if (eval || due) {
            flush();
        }
        if (eval && anyActive()) {
            for (auto& m : members_) {
                if (m->active) {
                    m->recorder->breakChain();
                }
            }
            evaluate(s);
        }
    }
    flush();
    fused_->syncMembers();
    for (auto& m : members_) {
        if (cancelled) {
            end(*m, RunStatus::Cancelled, FailureKind::Cancelled, {});
        } else if (m->active) {
            end(*m, RunStatus::Finished, FailureKind::None, {});
        }
    }
    if (opt_.recording_cost) {
        *opt_.recording_cost = members_.front()->recorder->cost();
    }
}

}  // namespace fused

using fused::FusedLoop;

std::vector<RunOutcome> trainFused(const config::ExperimentSpec& spec, int arm_index,
                                   const std::vector<FusedMember>& members,
                                   const CancelToken& cancel, const TrainOptions& options) {
    const uint64_t seed = members.empty() ? 0 : members.front().seed;
    return trainFused(spec, planRun(spec, arm_index, seed, chooseDevice(spec.device)), members,
                      cancel, options);
}

std::vector<RunOutcome> trainFused(const config::ExperimentSpec& spec, const RunPlan& plan,
                                   const std::vector<FusedMember>& members,
                                   const CancelToken& cancel, const TrainOptions& options) {
    const int arm_index = plan.arm_index;
    const auto t0 = Clock::now();
    const StepGraph::SharedUse using_the_gpu;  // from set-up to the memory given back
    std::unique_ptr<FusedLoop> loop;
    std::vector<RunOutcome> out(members.size());
    try {
        if (arm_index < 0 || arm_index >= static_cast<int>(spec.arms.size())) {
            throw RunFailure("arm index " + std::to_string(arm_index) + " is out of range");
        }
        if (!plan.device.problem.empty()) {
            throw RunFailure(plan.device.problem);
        }
        loop = std::make_unique<FusedLoop>(spec, plan, members, cancel, options);
        loop->run();
        out = loop->outcomes();
    } catch (...) {
        const FailureOf f = currentFailure();
        if (loop) {
            loop->failActive(f);
            out = loop->outcomes();
        } else {
            for (auto& o : out) {
                o.status = RunStatus::Failed;
                o.failure = f.kind;
                o.error = f.message;
            }
        }
    }
    loop.reset();  // the model and optimizers go before the next runs start
    if (arm_index >= 0 && arm_index < static_cast<int>(spec.arms.size()) &&
        spec.arms[static_cast<size_t>(arm_index)].cuda_graph) {
        StepGraph::releasePools();  // else the graphs' pool stays reserved
    }
    for (size_t i = 0; i < members.size(); ++i) {
        RunOutcome& o = out[i];
        o.wall_s = secondsSince(t0);
        try {
            members[i].observer->onFinish(o);
        } catch (const std::exception& e) {
            o.status = RunStatus::Failed;
            o.failure = FailureKind::Recording;
            o.record_error = e.what();
            o.error = std::string("could not record the end of the run: ") + e.what();
        }
    }
    return out;
}

std::vector<RunOutcome> trainFusedRuns(store::Database& db, const config::ExperimentSpec& spec,
                                       const std::vector<PlannedRun>& runs,
                                       const std::vector<const CancelToken*>& tokens,
                                       const std::vector<TrainObserver*>& extras,
                                       const CancelToken& cancel, const TrainOptions& options) {
    std::vector<std::unique_ptr<store::RunRecorder>> recorders;
    std::vector<std::unique_ptr<ObserverFanout>> fanouts;
    std::vector<FusedMember> members;
    for (size_t i = 0; i < runs.size(); ++i) {
        recorders.push_back(std::make_unique<store::RunRecorder>(db, runs[i].run_id));
        std::vector<TrainObserver*> targets{recorders.back().get()};
        if (i < extras.size() && extras[i]) {
            targets.push_back(extras[i]);
        }
        fanouts.push_back(std::make_unique<ObserverFanout>(targets));
        FusedMember m;
        m.seed = runs[i].seed;
        m.observer = fanouts.back().get();
        m.cancel = i < tokens.size() ? tokens[i] : nullptr;
        members.push_back(m);
    }
    return trainFused(spec, static_cast<const RunPlan&>(runs.front()), members, cancel, options);
}

}  // namespace ampbench::train
