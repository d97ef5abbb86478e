// The training step replayed from CUDA graphs: captured at its first use after a few
// eager steps, then one or two launches per step instead of one per operation.
#include <ATen/ATen.h>

#include <string>

#include "core/amp/LossScaler.h"
#include "core/train/private/OptimizerStep.h"
#include "core/train/private/RunLoop.h"

namespace ampbench::train {

using run::EventKind;
using run::StepRecord;

bool RunLoop::graphStep(int64_t s, bool& fell_back) {
    std::optional<StepRecord> opened = openStep(s);
    if (!opened) {
        return false;
    }
    StepRecord& rec = *opened;
    const int64_t samples_before = samples_;
    for (int k = 0; k < k_; ++k) {
        if (k > 0) {
            countMicroBatch();
            if (cancel_.cancelled()) {
                // The partial step's gradients and loss go; the next step starts clean.
                at::_foreach_zero_(static_grads_);
                loss_acc_.zero_();
                recorder_->discardStep();
                samples_ = samples_before;
                return false;
            }
        }
        if (graph_->captured()) {
            samples_ += feedInputs(rec);
            graph_->replay();
            continue;
        }
        const data::Batch b = microBatch(rec);
        static_x_ = at::empty_like(b.input);
        static_y_ = at::empty_like(b.target);
        static_x_.copy_(b.input, /*non_blocking=*/true);
        static_y_.copy_(b.target, /*non_blocking=*/true);
        try {
            captureGraphs(s);
        } catch (const c10::OutOfMemoryError&) {
            throw;  // the run fails for it, as an eager run would
        } catch (const c10::Error& e) {
            fallBackToEager(s, e.what_without_backtrace(), b, samples_before);
            fell_back = true;
            return false;
        } catch (const std::exception& e) {
            fallBackToEager(s, e.what(), b, samples_before);
            fell_back = true;
            return false;
        }
        graph_->replay();
        samples_ += b.input.size(0);
    }
    if (update_graph_) {
        update_graph_->replay();
    }
    // The graphs leave the step's loss, norm, scale and found-inf flag in one tensor:
    // one copy a step keeps them, into the next row of a block of rows allocated once
    // per kOutputRows steps (the pending steps' views keep a block alive until they
    // are read back). Runs packed on one GPU share the allocator's lock, and each
    // allocation a step takes it twice.
    if (!out_rows_.defined() || out_next_ == out_rows_.size(0)) {
        out_rows_ = at::empty({kOutputRows, graph_out_.size(0)}, graph_out_.options());
        out_next_ = 0;
    }
    const at::Tensor out = out_rows_.select(0, out_next_++);
    out.copy_(graph_out_);
    const bool scaled = precision_->scaler() != nullptr;
    recorder_->completeStep(
        rec,
        {rec, out.select(0, 0), graph_norm_.defined() ? out.select(0, 1) : at::Tensor(),
         scaled ? out.select(0, 2) : at::Tensor(),
         graph_inf_.defined() ? out.select(0, 3) : at::Tensor()},
        samples_);
    return true;
}

int64_t RunLoop::feedInputs(StepRecord& rec) {
    if (held_batch_ || !device_pool_.empty()) {
        const data::Batch b = microBatch(rec);
        static_x_.copy_(b.input, /*non_blocking=*/true);
        static_y_.copy_(b.target, /*non_blocking=*/true);
        return b.input.size(0);
    }
    double wait = 0;
    data::Batch b = nextHostBatch(wait);
    rec.data_wait_ms += wait;
    // Straight from the loader's pinned memory into the graph's buffers when only the
    // layout differs (channels_last: the copy rearranges on the device). A dtype the
    // arm converts to (pure fp16) is converted on the device, as the eager step does:
    // copy_ would convert on the host, into memory that is not pinned.
    for (auto [dst, src] : {std::pair<at::Tensor*, at::Tensor*>{&static_x_, &b.input},
                            std::pair<at::Tensor*, at::Tensor*>{&static_y_, &b.target}}) {
        if (dst->scalar_type() == src->scalar_type()) {
            dst->copy_(*src, /*non_blocking=*/true);
        } else {
            dst->copy_(src->to(device_, /*non_blocking=*/true), /*non_blocking=*/true);
        }
    }
    return b.input.size(0);
}

void RunLoop::keepStepOutputs(const at::Tensor& loss, const at::Tensor& scale_used) {
    const auto scalar = [&](const at::Tensor& t) {
        return t.defined() ? t.detach().to(at::kFloat).reshape({})
                           : at::zeros({}, static_x_.options().dtype(at::kFloat));
    };
    graph_out_.copy_(
        at::stack({scalar(loss), scalar(graph_norm_), scalar(scale_used), scalar(graph_inf_)}));
}

void RunLoop::fallBackToEager(int64_t s, const std::string& why, const data::Batch& batch,
                              int64_t samples_before) {
    // Nothing of the capture ran; the step starts again eagerly with this batch.
    graph_.reset();
    update_graph_.reset();
    StepGraph::releasePools();
    for (auto& p : params_) {
        p.mutable_grad().reset();
    }
    recorder_->discardStep();
    samples_ = samples_before;
    --micro_batches_;  // the eager step counts this micro-batch again
    held_batch_ = batch;
    const std::string first = why.substr(0, why.find('\n'));
    event(s, EventKind::Warning,
          std::string(kCaptureFallback) + ", so this arm trains eagerly from step " +
              std::to_string(s) + ": " + first);
}

// K = 1: the whole step is one graph. K > 1: the micro-step (forward, backward into
// gradients that persist across replays, the loss added up) is one graph, replayed K
// times, and the optimizer step (which then zeroes the gradients and the loss sum)
// another. Neither is run by capture: the caller replays them at once.
void RunLoop::captureGraphs(int64_t s) {
    auto forward = [&] {
        return precision_->forward([&] { return lossOf(model_->forward(static_x_), static_y_); },
                                   /*cache=*/false);
    };
    // The loss scale a step used, read inside its graph before the scaler updates it.
    auto scaleUsed = [&] {
        const amp::LossScaler* scaler = precision_->scaler();
        return scaler ? scaler->scaleTensor().clone() : at::Tensor();
    };
    graph_out_ = at::zeros({4}, static_x_.options().dtype(at::kFloat));
    if (k_ == 1) {
        for (auto& p : params_) {
            p.mutable_grad().reset();
        }
        graph_->capture([&] {
            const at::Tensor scale = scaleUsed();
            const at::Tensor loss = forward();
            graph_loss_ = loss.detach();
            precision_->backward(loss, 1);
            auto r =
                finishOptimizerStep(params_, *updater_, precision_->scaler(), arm_.grad_clip, true);
            graph_norm_ = r.grad_norm;
            graph_inf_ = r.found_inf;
            keepStepOutputs(graph_loss_, scale);
        });
        event(s, EventKind::Info, "training step captured as a CUDA graph; replayed from here on");
        return;
    }
    // Defined gradients are accumulated in place by the backward, so the captured
    // kernels add into these same tensors on every replay.
    static_grads_.clear();
    for (auto& p : params_) {
        p.mutable_grad() = at::zeros_like(p);
        static_grads_.push_back(p.grad());
    }
    const auto loss_options = static_x_.options().dtype(at::kFloat);
    loss_acc_ = at::zeros({}, loss_options);
    graph_loss_ = at::zeros({}, loss_options);
    graph_->capture([&] {
        const at::Tensor loss = forward();
        loss_acc_.add_(loss.detach().to(at::kFloat));
        precision_->backward(loss, k_);
    });
    update_graph_ = std::make_unique<StepGraph>();
    update_graph_->capture([&] {
        const at::Tensor scale = scaleUsed();
        auto r =
            finishOptimizerStep(params_, *updater_, precision_->scaler(), arm_.grad_clip, true);
        graph_norm_ = r.grad_norm;
        graph_inf_ = r.found_inf;
        graph_loss_.copy_(loss_acc_ / static_cast<double>(k_));
        loss_acc_.zero_();
        at::_foreach_zero_(static_grads_);
        keepStepOutputs(graph_loss_, scale);
    });
    // The optimizer step set the gradients to none on the host; the graphs keep theirs.
    for (size_t i = 0; i < params_.size(); ++i) {
        params_[i].mutable_grad() = static_grads_[i];
    }
    event(s, EventKind::Info,
          "micro-step and optimizer step captured as two CUDA graphs (accumulation " +
              std::to_string(k_) + "); replayed from here on");
}

}  // namespace ampbench::train
