// The fused step replayed from CUDA graphs: captured at its first use after a few
// eager steps, as a run's own step is (GraphStep.cpp).
#include <ATen/ATen.h>

#include <string>

#include "core/amp/LossScaler.h"
#include "core/train/private/FusedLoop.h"

namespace ampbench::train::fused {

bool FusedLoop::graphStep(int64_t s, bool& fell_back) {
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
        if (graph_->captured()) {
            feedGraphs();
            graph_->replay();
            continue;
        }
        for (auto& m : members_) {
            const data::Batch b = microBatch(*m);
            m->static_x = at::empty_like(b.input);
            m->static_y = at::empty_like(b.target);
            m->static_x.copy_(b.input, /*non_blocking=*/true);
            m->static_y.copy_(b.target, /*non_blocking=*/true);
        }
        try {
            captureGraphs(s);
        } catch (const c10::OutOfMemoryError&) {
            throw;  // the runs fail for it, as eager ones would
        } catch (const c10::Error& e) {
            fallBackToEager(s, e.what_without_backtrace());
            fell_back = true;
            return false;
        } catch (const std::exception& e) {
            fallBackToEager(s, e.what());
            fell_back = true;
            return false;
        }
        graph_->replay();
        for (auto& m : members_) {
            m->samples += m->active ? m->static_x.size(0) : 0;
        }
    }
    if (update_graph_) {
        update_graph_->replay();
    }
    // One copy a step keeps every member's outputs, into the next row of a block
    // allocated once per kOutputRows steps (as a run's own graph step does).
    if (!out_rows_.defined() || out_next_ == out_rows_.size(0)) {
        out_rows_ =
            at::empty({kOutputRows, graph_out_.size(0), graph_out_.size(1)}, graph_out_.options());
        out_next_ = 0;
    }
    const at::Tensor out = out_rows_.select(0, out_next_++);
    out.copy_(graph_out_);
    for (size_t g = 0; g < members_.size(); ++g) {
        Member& m = *members_[g];
        if (!m.active) {
            continue;
        }
        const at::Tensor row = out.select(0, static_cast<int64_t>(g));
        const bool scaled = m.precision->scaler() != nullptr;
        m.recorder->completeStep(
            m.rec,
            {m.rec, row.select(0, 0), row.select(0, 1), scaled ? row.select(0, 2) : at::Tensor(),
             scaled ? row.select(0, 3) : at::Tensor()},
            m.samples);
    }
    return true;
}

void FusedLoop::feedGraphs() {
    for (auto& m : members_) {
        if (!m->active) {
            continue;  // its buffers keep their last batch
        }
        if (m->prefetcher && !m->held) {
            // Straight from the loader's pinned memory into the graph's buffers.
            const auto t = Clock::now();
            data::Batch host = m->prefetcher->next();
            m->rec.data_wait_ms += msSince(t);
            m->static_x.copy_(host.input, /*non_blocking=*/true);
            m->static_y.copy_(host.target, /*non_blocking=*/true);
            m->samples += host.input.size(0);
            continue;
        }
        const data::Batch b = microBatch(*m);
        m->static_x.copy_(b.input, /*non_blocking=*/true);
        m->static_y.copy_(b.target, /*non_blocking=*/true);
        m->samples += b.input.size(0);
    }
}

// As a run's own graphs (GraphStep.cpp): K = 1, the whole fused step is one graph;
// K > 1, the micro-step is one (replayed K times) and the members' optimizer steps
// another. Each member's loss is scaled by its own scaler, each member's update
// skipped on the device by its own found-inf flag.
void FusedLoop::captureGraphs(int64_t s) {
    const amp::Precision& lead = *members_.front()->precision;
    const auto g_count = static_cast<int64_t>(members_.size());
    auto losses = [&] {
        return lead.forward(
            [&] {
                std::vector<at::Tensor> xs;
                for (auto& m : members_) {
                    xs.push_back(m->static_x);
                }
                const auto outputs = fused_->forward(xs);
                std::vector<at::Tensor> out;
                for (size_t g = 0; g < members_.size(); ++g) {
                    out.push_back(head_->loss(outputs[g], members_[g]->static_y));
                }
                return out;
            },
            /*cache=*/false);
    };
    auto backward = [&](const std::vector<at::Tensor>& losses_of) {
        at::Tensor total;
        for (size_t g = 0; g < members_.size(); ++g) {
            at::Tensor part = k_ > 1 ? losses_of[g] / static_cast<double>(k_) : losses_of[g];
            if (amp::LossScaler* scaler = members_[g]->precision->scaler()) {
                part = scaler->scale(part);
            }
            total = total.defined() ? total + part : part;
        }
        total.backward();
    };
    const auto floats = members_.front()->static_x.options().dtype(at::kFloat);
    graph_out_ = at::zeros({g_count, 4}, floats);
    auto scalar = [&](const at::Tensor& t) {
        return t.defined() ? t.detach().to(at::kFloat).reshape({}) : at::zeros({}, floats);
    };
    // Each member's step: its scale as used, its update, its outputs kept.
    auto finish = [&](size_t g, const at::Tensor& loss) {
        Member& m = *members_[g];
        const amp::LossScaler* scaler = m.precision->scaler();
        const at::Tensor scale = scaler ? scaler->scaleTensor().clone() : at::Tensor();
        auto r = finishOptimizerStep(m.params, *m.updater, m.precision->scaler(), arm_.grad_clip,
                                     /*want_norm=*/true);
        graph_out_.select(0, static_cast<int64_t>(g))
            .copy_(
                at::stack({scalar(loss), scalar(r.grad_norm), scalar(scale), scalar(r.found_inf)}));
    };
    if (k_ == 1) {
        for (auto& m : members_) {
            for (auto& p : m->params) {
                p.mutable_grad().reset();
            }
        }
        graph_->capture([&] {
            const auto l = losses();
            backward(l);
            for (size_t g = 0; g < members_.size(); ++g) {
                finish(g, l[g]);
            }
        });
    } else {
        for (auto& m : members_) {
            m->static_grads.clear();
            for (auto& p : m->params) {
                p.mutable_grad() = at::zeros_like(p);
                m->static_grads.push_back(p.grad());
            }
            m->loss_acc = at::zeros({}, floats);
        }
        graph_->capture([&] {
            const auto l = losses();
            for (size_t g = 0; g < members_.size(); ++g) {
                members_[g]->loss_acc.add_(l[g].detach().to(at::kFloat));
            }
            backward(l);
        });
        update_graph_ = std::make_unique<StepGraph>();
        update_graph_->capture([&] {
            for (size_t g = 0; g < members_.size(); ++g) {
                Member& m = *members_[g];
                const at::Tensor mean = m.loss_acc / static_cast<double>(k_);
                finish(g, mean);
                m.loss_acc.zero_();
                at::_foreach_zero_(m.static_grads);
            }
        });
        for (auto& m : members_) {
            for (size_t i = 0; i < m->params.size(); ++i) {
                m->params[i].mutable_grad() = m->static_grads[i];
            }
        }
    }
    for (auto& m : members_) {
        if (m->active) {
            m->obs->onEvent({s, EventKind::Info,
                             k_ == 1 ? "fused training step captured as a CUDA graph; replayed "
                                       "from here on"
                                     : "fused micro-step and optimizer steps captured as two CUDA "
                                       "graphs; replayed from here on",
                             0.0});
        }
    }
}

void FusedLoop::fallBackToEager(int64_t s, const std::string& why) {
    // Nothing of the capture ran; the step starts again eagerly with these batches.
    graph_.reset();
    update_graph_.reset();
    StepGraph::releasePools();
    graphs_ = false;
    --micro_batches_;  // the eager step counts this micro-batch again
    const std::string first = why.substr(0, why.find('\n'));
    for (auto& m : members_) {
        for (auto& p : m->params) {
            p.mutable_grad().reset();
        }
        m->static_grads.clear();
        if (!m->active) {
            continue;
        }
        m->recorder->discardStep();
        m->samples = m->samples_before;
        m->held = m->last;
        m->obs->onEvent({s, EventKind::Warning,
                         std::string(kCaptureFallback) + ", so this arm trains eagerly from step " +
                             std::to_string(s) + ": " + first,
                         0.0});
    }
}

}  // namespace ampbench::train::fused
