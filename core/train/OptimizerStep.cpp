#include "core/train/private/OptimizerStep.h"

#include <ATen/ATen.h>

#include <chrono>

#include "core/parallel/GradientSync.h"

namespace ampbench::train {

OptimizerStepResult finishOptimizerStep(const std::vector<at::Tensor>& params,
                                        ParameterUpdater& updater, amp::LossScaler* scaler,
                                        double grad_clip, bool want_norm, bool defer_norm,
                                        parallel::GradientSync* sync, at::Tensor* step_loss) {
    OptimizerStepResult r;
    if (sync) {
        sync->averageGradients(params, step_loss);  // once per step, after the K-th backward
    }
    std::vector<at::Tensor> grads;
    grads.reserve(params.size());
    for (const auto& p : params) {
        if (p.grad().defined()) {
            grads.push_back(p.grad());
        }
    }
    if (scaler) {
        scaler->unscale(grads);
        if (sync) {
            at::Tensor found_inf = scaler->foundInfTensor();  // shares the scaler's storage
            sync->agreeFoundInf(found_inf);
        }
    }
    if (want_norm && defer_norm && grad_clip <= 0 && !grads.empty()) {
        const auto t = std::chrono::steady_clock::now();
        r.grad_norm_parts = at::_foreach_norm(grads, 2);
        r.norm_host_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
    } else if ((want_norm || grad_clip > 0) && !grads.empty()) {
        r.grad_norm = at::stack(at::_foreach_norm(grads, 2)).norm();
        if (grad_clip > 0) {
            // As torch.nn.utils.clip_grad_norm_: a device-side factor, no host sync.
            auto coef = (grad_clip / (r.grad_norm + 1e-6)).clamp_max(1.0);
            for (auto& g : grads) {
                g.mul_(coef);
            }
        }
    }
    if (updater.skipsOnDevice()) {
        at::Tensor inf = scaler ? scaler->foundInfTensor() : at::Tensor();
        updater.step(inf);
        if (scaler) {
            r.found_inf = inf.clone();  // update() below resets the scaler's copy
        }
    } else {
        r.skipped = scaler && scaler->foundInf();  // one host synchronisation
        if (!r.skipped) {
            updater.step(at::Tensor());
        }
    }
    if (scaler) {
        scaler->update();
    }
    for (const auto& p : params) {
        auto param = p;
        param.mutable_grad().reset();  // set to none, as PyTorch 2's zero_grad does
    }
    return r;
}

}  // namespace ampbench::train
