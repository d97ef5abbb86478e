#include "core/train/private/NumericsRecorder.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "core/config/PlannedArm.h"
#include "core/numerics/Fp16Numerics.h"

namespace ampbench::train {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

NumericsRecorder::NumericsRecorder(const config::ExperimentSpec& spec, const config::ArmSpec& arm,
                                   config::Precision precision, models::Network& model)
    : every_(spec.numerics_every),
      model_(model),
      param_names_(model.parameterNames()),
      islands_(numerics::splitPatterns(arm.fp32_modules)) {
    if (islands_.empty() && every_ <= 0) {
        return;
    }
    const auto points = model.tapPoints();
    if (!islands_.empty()) {
        if (points.empty()) {
            throw std::invalid_argument(
                "arm '" + arm.name +
                "': fp32_modules needs a built-in model: a model file's forward runs inside "
                "TorchScript, where autocast cannot be switched per module");
        }
        if (const std::string why = numerics::unmatchedPatterns(islands_, points); !why.empty()) {
            throw std::invalid_argument("arm '" + arm.name + "': " + why);
        }
    }
    // Measured against the format the arm holds them in (fp16 for fp32: would they fit).
    tap_ = std::make_unique<numerics::NumericsTap>(islands_, run::formatOfArm(precision));
    model.setTap(tap_.get());
}

void NumericsRecorder::beforeForward(int64_t step, int k, const amp::LossScaler* scaler) {
    observing_ = k == 0 && tap_ && due(step);
    if (observing_) {
        const auto t = Clock::now();
        if (scaler && scaler->scaleTensor().defined()) {
            tap_->observe(step, scaler->scaleTensor());
        } else {
            tap_->observe(step, 1.0);
        }
        host_ms_ += msSince(t);
    }
}

void NumericsRecorder::afterForward() {
    if (observing_) {
        const auto t = Clock::now();
        activations_ = tap_->takeObservation();
        if (activations_) {
            activations_->post();
        }
        host_ms_ += msSince(t);
        observing_ = false;
    }
}

void NumericsRecorder::record(int64_t step, const std::vector<at::Tensor>& params,
                              const amp::LossScaler* scaler) {
    const auto t = Clock::now();
    numerics::Observation grads(run::NumericsKind::Grad, step, 1.0, 1.0, tap_->format());
    if (scaler && scaler->scaleTensor().defined()) {
        grads.useLossScale(scaler->scaleTensor());
    }
    for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].grad().defined()) {
            grads.add(i < param_names_.size() ? param_names_[i] : std::to_string(i),
                      params[i].grad());
        }
    }
    grads.post();
    pending_.push_back(std::move(grads));
    if (activations_) {
        pending_.push_back(std::move(*activations_));
        activations_.reset();
    }
    host_ms_ += msSince(t);
    ++records_;
}

void NumericsRecorder::deliver(run::TrainObserver& observer) {
    if (pending_.empty()) {
        return;
    }
    // The wait for the device is not the records' cost: the flush this is part of
    // waits for it anyway.
    for (const auto& o : pending_) {
        o.wait();
    }
    const auto t = Clock::now();
    std::vector<run::NumericsRecord> rows;
    for (auto& o : pending_) {
        auto part = o.finish();
        rows.insert(rows.end(), std::make_move_iterator(part.begin()),
                    std::make_move_iterator(part.end()));
    }
    pending_.clear();
    host_ms_ += msSince(t);
    observer.onNumerics(rows);
}

void NumericsRecorder::watch(int64_t step, Batches batches, const at::Tensor& found_inf,
                             bool skipped, const at::Tensor& loss_sum,
                             const at::Tensor& scale_used) {
    if (!loss_sum.defined()) {
        return;
    }
    at::Tensor broke = at::logical_not(at::isfinite(loss_sum.detach()).all()).to(at::kDouble);
    if (found_inf.defined()) {
        broke = broke + found_inf.detach().reshape({}).to(broke.device(), at::kDouble);
    }
    if (skipped) {
        broke = broke + 1.0;
    }
    const at::Tensor scale = scale_used.defined()
                                 ? scale_used.detach().reshape({}).to(broke.device(), at::kDouble)
                                 : at::ones({}, broke.options());
    watched_flag_.post(at::stack({broke, scale}));
    watched_step_ = step;
    watched_batches_ = std::move(batches);
}

std::optional<NumericsRecorder::BrokenStep> NumericsRecorder::takeBroken() {
    if (!watched_flag_.pending()) {
        return std::nullopt;
    }
    const std::vector<double> v = watched_flag_.take();
    Batches batches = std::move(watched_batches_);
    watched_batches_.clear();
    if (v.size() != 2 || v[0] == 0.0) {
        return std::nullopt;
    }
    return BrokenStep{watched_step_, std::move(batches), v[1]};
}

std::string NumericsRecorder::locate(int64_t step, const Batches& batches, const LossOf& loss_of,
                                     double loss_scale, const std::vector<at::Tensor>& params) {
    ++located_;
    run::OverflowOrigin o;
    o.step = step;
    o.loss_scale = loss_scale;
    std::vector<at::Tensor> saved;
    {
        at::NoGradGuard no_grad;
        for (const auto& b : model_.buffers()) {
            saved.push_back(b.detach().clone());
        }
    }
    auto clearGrads = [&] {
        for (const auto& p : params) {
            auto param = p;
            param.mutable_grad().reset();
        }
    };
    clearGrads();
    std::string failure;
    if (tap_) {
        tap_->startLocating();
    }
    try {
        const double k = static_cast<double>(std::max<size_t>(1, batches.size()));
        for (const auto& [input, target] : batches) {
            const at::Tensor loss = loss_of(input, target);
            if (tap_ && tap_->firstOutput()) {
                o.name = tap_->firstOutput()->name;
                o.where = "output";
                o.dtype = tap_->firstOutput()->dtype;
                break;
            }
            if (!at::isfinite(loss.detach()).all().item<bool>()) {
                o.where = "loss";
                o.dtype = numerics::dtypeName(loss.scalar_type());
                break;
            }
            (loss * (loss_scale / k)).backward();
            if (tap_ && tap_->firstGradient()) {
                o.name = tap_->firstGradient()->name;
                o.where = "output gradient";
                o.dtype = tap_->firstGradient()->dtype;
                break;
            }
            for (size_t i = 0; i < params.size() && o.where.empty(); ++i) {
                const at::Tensor& g = params[i].grad();
                if (g.defined() && !at::isfinite(g).all().item<bool>()) {
                    o.name = i < param_names_.size() ? param_names_[i] : std::to_string(i);
                    o.where = "parameter gradient";
                    o.dtype = numerics::dtypeName(g.scalar_type());
                }
            }
            if (!o.where.empty()) {
                break;
            }
        }
    } catch (const std::exception& e) {
        failure = e.what();
    }
    if (tap_) {
        tap_->stopLocating();
    }
    clearGrads();
    {
        at::NoGradGuard no_grad;
        auto buffers = model_.buffers();
        for (size_t i = 0; i < buffers.size() && i < saved.size(); ++i) {
            buffers[i].copy_(saved[i]);
        }
    }
    char scale[32];
    std::snprintf(scale, sizeof scale, "%g", loss_scale);
    if (!failure.empty()) {
        return "the non-finite step " + std::to_string(step) + " (loss scale " + scale +
               ") could not be replayed to find where it broke: " + failure;
    }
    if (o.where.empty()) {
        return "the non-finite step " + std::to_string(step) + " (loss scale " + scale +
               ") stayed finite when its batch was replayed (dropout draws differ between the "
               "two passes)";
    }
    return run::describe(o);
}

std::vector<std::string> NumericsRecorder::startNotes() const {
    std::vector<std::string> out;
    if (tap_ && !islands_.empty()) {
        // Every module named while they are few; the first ones and the count after.
        constexpr size_t kNamed = 16;
        std::vector<std::string> hits;
        for (const auto& p : model_.tapPoints()) {
            if (tap_->fp32(p)) {
                hits.push_back(p);
            }
        }
        std::string names;
        const size_t shown = hits.size() > kNamed ? kNamed - 4 : hits.size();
        for (size_t i = 0; i < shown; ++i) {
            names += (i ? ", " : "") + hits[i];
        }
        if (shown < hits.size()) {
            names += ", ... (" + std::to_string(hits.size()) + " modules in all)";
        }
        out.push_back("FP32 islands (autocast off, inputs in fp32): " + names);
    }
    if (every_ > 0 && model_.tapPoints().empty()) {
        out.push_back(
            "per-layer numerics of a model file: every parameter's gradient is recorded; module "
            "outputs are not (its forward runs inside TorchScript, out of the workbench's reach)");
    }
    return out;
}

std::string NumericsRecorder::costNote(double run_ms) const {
    if (every_ <= 0) {
        return "";
    }
    char text[240];
    std::snprintf(text, sizeof text,
                  "per-layer numerics every %lld steps: %lld records, %.1f ms of host time "
                  "(%.2f%% of the run's time; their device time is in those steps' time); "
                  "those steps are left out of the timing",
                  static_cast<long long>(every_), static_cast<long long>(records_), host_ms_,
                  run_ms > 0 ? 100.0 * host_ms_ / run_ms : 0.0);
    return text;
}

}  // namespace ampbench::train
