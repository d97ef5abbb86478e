#pragma once
// Data-parallel training's three exchanges, built on c10d (no DDP module exists in
// C++): the model's state from rank 0 at the start, the gradients averaged once per
// optimizer step (flattened into buckets, after the K-th backward, never per
// micro-batch), and the loss scaler's found-inf agreed before it decides.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "core/parallel/Communicator.h"

namespace ampbench::parallel {

class GradientSync {
  public:
    /// Buckets of at most `bucket_bytes` (PyTorch DDP's default is 25 MiB).
    explicit GradientSync(Communicator& comm, int64_t bucket_bytes = 25 << 20);

    /// Every rank starts from rank 0's parameters and buffers (BatchNorm statistics).
    void broadcastState(const std::vector<at::Tensor>& params,
                        const std::vector<at::Tensor>& buffers);
    /// Replaces each trainable parameter's gradient by the mean over the ranks (one
    /// without a gradient on this rank counts as zeros, so the ranks' buckets stay
    /// alike; frozen parameters are left alone). `step_loss`, when given, is averaged with them in
    /// the last bucket: the loss rank 0 records is the global batch's, at no extra collective.
    void averageGradients(const std::vector<at::Tensor>& params, at::Tensor* step_loss = nullptr);
    /// found_inf becomes 1 on every rank when it is on any: all ranks skip the same
    /// steps and keep the same scale.
    void agreeFoundInf(at::Tensor& found_inf);

    Communicator& communicator() { return comm_; }
    int64_t collectives() const { return collectives_; }  ///< launched so far (tests)

  private:
    Communicator& comm_;
    int64_t bucket_bytes_;
    int64_t collectives_ = 0;
};

}  // namespace ampbench::parallel
