#include "core/train/private/ParameterUpdater.h"

#include <ATen/ATen.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/version.h>

namespace ampbench::train {
namespace {

class TorchOptimUpdater final : public ParameterUpdater {
  public:
    TorchOptimUpdater(const std::vector<at::Tensor>& params, const config::OptimizerSpec& o,
                      double lr) {
        if (o.kind == config::OptimizerKind::Sgd) {
            opt_ = std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(lr)
                                                                   .momentum(o.momentum)
                                                                   .nesterov(o.nesterov)
                                                                   .weight_decay(o.weight_decay));
        } else {
            opt_ = std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(lr)
                                                                     .betas({o.beta1, o.beta2})
                                                                     .eps(o.eps)
                                                                     .weight_decay(o.weight_decay));
        }
    }
    void step(const at::Tensor&) override { opt_->step(); }
    void setLr(double lr) override {
        for (auto& group : opt_->param_groups()) {
            group.options().set_lr(lr);
        }
    }
    bool skipsOnDevice() const override { return false; }
    std::string describe() const override {
        return "LibTorch torch::optim (per-parameter kernels)";
    }

  private:
    std::unique_ptr<torch::optim::Optimizer> opt_;
};

#if TORCH_VERSION_MAJOR >= 2
/// PyTorch's `fused=True` SGD and AdamW: one multi-tensor kernel per update.
class FusedUpdater final : public ParameterUpdater {
  public:
    FusedUpdater(const std::vector<at::Tensor>& params, const config::OptimizerSpec& o, double lr,
                 bool lr_on_device)
        : params_(params), spec_(o), lr_(lr) {
        if (lr_on_device && !params_.empty()) {
            lr_tensor_ = at::full({}, lr, params_.front().options().dtype(at::kFloat));
        }
        for (const auto& p : params_) {
            if (o.kind == config::OptimizerKind::Sgd) {
                // Zero buffers: with dampening 0, m·0 + g equals PyTorch's first-step copy.
                // Without momentum there are none: the kernel then takes an empty list.
                if (o.momentum != 0.0) {
                    buf1_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
                }
            } else {
                buf1_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
                buf2_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
                steps_.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
            }
        }
    }

    void step(const at::Tensor& found_inf) override {
        std::vector<at::Tensor> params, grads, b1, b2, steps;
        for (size_t i = 0; i < params_.size(); ++i) {
            const auto& g = params_[i].grad();
            if (!g.defined()) {
                continue;
            }
            params.push_back(params_[i]);
            grads.push_back(g);
            if (!buf1_.empty()) {
                b1.push_back(buf1_[i]);
            }
            if (!buf2_.empty()) {
                b2.push_back(buf2_[i]);
                steps.push_back(steps_[i]);
            }
        }
        if (params.empty()) {
            return;
        }
        std::optional<at::Tensor> inf;
        if (found_inf.defined()) {
            inf = found_inf;
        }
        if (spec_.kind == config::OptimizerKind::Sgd) {
            if (lr_tensor_.defined()) {
                at::_fused_sgd_(params, grads, b1, spec_.weight_decay, spec_.momentum, lr_tensor_,
                                /*dampening=*/0.0, spec_.nesterov, /*maximize=*/false,
                                /*is_first_step=*/false, std::nullopt, inf);
            } else {
                at::_fused_sgd_(params, grads, b1, spec_.weight_decay, spec_.momentum, lr_,
                                /*dampening=*/0.0, spec_.nesterov, /*maximize=*/false,
                                /*is_first_step=*/false, std::nullopt, inf);
            }
            return;
        }
        at::_foreach_add_(steps, 1.0);
        if (lr_tensor_.defined()) {
            at::_fused_adamw_(params, grads, b1, b2, /*max_exp_avg_sqs=*/{}, steps, lr_tensor_,
                              spec_.beta1, spec_.beta2, spec_.weight_decay, spec_.eps,
                              /*amsgrad=*/false, /*maximize=*/false, std::nullopt, inf);
        } else {
            at::_fused_adamw_(params, grads, b1, b2, /*max_exp_avg_sqs=*/{}, steps, lr_,
                              spec_.beta1, spec_.beta2, spec_.weight_decay, spec_.eps,
                              /*amsgrad=*/false, /*maximize=*/false, std::nullopt, inf);
        }
        if (inf) {
            // A skipped update must not advance Adam's step count either.
            std::vector<at::Tensor> undo(steps.size(), inf->reshape({}));
            at::_foreach_sub_(steps, undo);
        }
    }
    void setLr(double lr) override {
        if (lr_tensor_.defined() && lr != lr_) {
            lr_tensor_.fill_(lr);  // queued before the step that reads it
        }
        lr_ = lr;
    }
    bool skipsOnDevice() const override { return true; }
    std::string describe() const override {
        return spec_.kind == config::OptimizerKind::Sgd ? "ATen fused SGD (_fused_sgd_)"
                                                        : "ATen fused AdamW (_fused_adamw_)";
    }

  private:
    std::vector<at::Tensor> params_;
    config::OptimizerSpec spec_;
    double lr_;
    at::Tensor lr_tensor_;  // with lr_on_device: what the kernels read
    std::vector<at::Tensor> buf1_, buf2_, steps_;
};
#endif

}  // namespace

bool fusedUpdaterAvailable(c10::Device device) {
#if TORCH_VERSION_MAJOR >= 2
    return device.is_cuda();
#else
    (void)device;
    return false;
#endif
}

std::unique_ptr<ParameterUpdater> makeUpdater(const std::vector<at::Tensor>& params,
                                              const config::OptimizerSpec& spec, double lr,
                                              c10::Device device, bool allow_fused,
                                              bool lr_on_device) {
#if TORCH_VERSION_MAJOR >= 2
    if (allow_fused && fusedUpdaterAvailable(device)) {
        return std::make_unique<FusedUpdater>(params, spec, lr, lr_on_device);
    }
#else
    (void)allow_fused;
    (void)device;
    (void)lr_on_device;
#endif
    return std::make_unique<TorchOptimUpdater>(params, spec, lr);
}

}  // namespace ampbench::train
