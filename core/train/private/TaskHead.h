#pragma once
// What a model's output is compared with, and how: the loss a run minimises, the
// figures an evaluation reports, and whether an output fits the task at all.
#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "core/config/ExperimentSpec.h"
#include "core/data/Datasets.h"

namespace ampbench::train {

/// The spec's task, or for `auto` the built-in model's own (transformer: tokens)
/// or the data's (floating-point targets: regression; token sequences: tokens).
config::Task resolveTask(const config::ExperimentSpec& spec, const data::InputShape& shape);

class TaskHead {
  public:
    explicit TaskHead(config::Task task, double label_smoothing = 0.0)
        : task_(task), smoothing_(label_smoothing) {}
    config::Task task() const { return task_; }

    /// Mean loss of a batch: cross-entropy over classes or tokens (with the label
    /// smoothing), or MSE. Evaluations report cross-entropy without smoothing.
    at::Tensor loss(const at::Tensor& output, const at::Tensor& target) const;

    /// Sums for an evaluation, on the output's device: loss summed over samples
    /// (tokens, target elements), correct predictions, and how many were counted.
    struct Sums {
        at::Tensor loss;
        at::Tensor correct;
        int64_t count = 0;
    };
    void accumulate(const at::Tensor& output, const at::Tensor& target, Sums& sums) const;
    /// Whether an evaluation has an accuracy (not for regression).
    bool hasAccuracy() const { return task_ != config::Task::Regression; }

    /// "" when a batch's output and target fit the task and the data's labels; else
    /// what does not fit, with the expected and the found shapes.
    std::string mismatch(const at::Tensor& output, const at::Tensor& target,
                         const data::InputShape& shape) const;

  private:
    /// The output laid out like the target for regression ([N, 1] against [N]).
    at::Tensor asTarget(const at::Tensor& output, const at::Tensor& target) const;
    config::Task task_;
    double smoothing_ = 0.0;
};

/// Whether `logits` are autocast's fp16 or bf16 output on CUDA, where halfCrossEntropy
/// applies (pure fp16 keeps its fp16 loss, as a control).
bool autocastHalfLogits(const at::Tensor& logits);

/// The mean cross-entropy of [N, C] fp16 or bf16 logits against [N] labels as autocast
/// computes it (in float32), without copying the logits to float32. Where this build
/// has CUDA and amp::fusedKernels() holds: one kernel reads the logits once forward, one reads
/// them once backward and writes their gradient in their dtype (CrossEntropyCuda.h).
/// Else fp16 goes through log-softmax's own half-to-float (one pass less each way) and
/// bf16 through autocast's float32 copy. CUDA only.
at::Tensor halfCrossEntropy(const at::Tensor& logits, const at::Tensor& target);

/// The fused kernels of fp16/bf16 arms (the LayerNorm before a Linear, this loss)
/// checked against ATen's unfused path on `device`, once per process (the first CUDA
/// autocast run; fixed inputs, the random generator untouched), forward and backward.
/// Where any differs beyond its tolerance (3 % of the largest value in bf16, 1 % in
/// fp16) or the check throws, amp::setFusedKernels(false) for the process and the
/// reason is returned for the run's first events, that run's and every later one's in
/// the process; else empty (and always where the build has no CUDA, the device is not
/// CUDA, or the fused kernels were switched off before any check ran).
std::string checkFusedKernels(c10::Device device);

using data::dtypeName;
using data::shapeText;

}  // namespace ampbench::train
