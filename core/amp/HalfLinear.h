#pragma once
// The Linear hook of fp16 and bf16 autocast arms on CUDA: the kernels a compiler would
// fuse around the built-in models' Linear layers, with autocast's arithmetic. A
// LayerNorm before a Linear (the decoder's ln1, ln2 and ln_f) writes its output in the
// Linear's dtype in the same pass that normalises it, and its backward takes that
// dtype's gradient and gives the weight and bias gradients from the same pass
// (LayerNormCuda.h). Everything else as at::linear under autocast.
#include <ATen/ATen.h>

#include <cstdint>

#include "core/models/Models.h"

namespace ampbench::amp {

/// Whether the fused kernels of fp16/bf16 arms run (this hook's LayerNorm, the token
/// loss without a float32 copy of the logits): on by default where the build has CUDA.
/// The unfused path stays selectable, so the tests compare the two.
bool fusedKernels();
void setFusedKernels(bool on);

/// layer_norm(x, gamma, beta, eps) over x's last dimension, written in `dtype` (kHalf or
/// kBFloat16), differentiable in x, gamma and beta: on CUDA one kernel each way
/// (LayerNormCuda.h); elsewhere ATen's LayerNorm then a cast, so the CPU tests follow
/// the same autograd path. Where layerNormToHalfTakes(x, gamma, beta) holds.
at::Tensor layerNormToHalf(const at::Tensor& x, const at::Tensor& gamma, const at::Tensor& beta,
                           double eps, at::ScalarType dtype);
/// float32 x, gamma and beta on one device, gamma and beta as wide as x's last
/// dimension (at most cuda::kLayerNormMaxCols on CUDA), x not empty.
bool layerNormToHalfTakes(const at::Tensor& x, const at::Tensor& gamma, const at::Tensor& beta);

class HalfLinears : public models::LinearHook {
  public:
    /// `dtype`: autocast's, kHalf or kBFloat16.
    explicit HalfLinears(at::ScalarType dtype) : dtype_(dtype) {}
    at::Tensor linear(const at::Tensor& x, const at::Tensor& weight,
                      const at::Tensor& bias) override;
    at::Tensor layerNormLinear(const at::Tensor& x, const at::Tensor& ln_weight,
                               const at::Tensor& ln_bias, double eps, const at::Tensor& weight,
                               const at::Tensor& bias) override;
    /// LayerNorms computed by the fused kernel so far.
    int64_t fusedNorms() const { return fused_norms_; }

  private:
    at::ScalarType dtype_;
    int64_t fused_norms_ = 0;
};

}  // namespace ampbench::amp
