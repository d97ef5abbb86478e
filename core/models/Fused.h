#pragma once
// Several copies of one built-in model trained as one model (horizontal fusion): the
// copies' convolutions run as one grouped convolution, their BatchNorm layers as one
// over all their channels, their linear layers as one batched matrix product. Each
// copy keeps its own parameters (the fused layer concatenates them in its forward, so
// every gradient lands in its own copy's tensor), its own BatchNorm statistics and its
// own dropout generator; each takes its own batch. A loss summed over the copies gives
// each copy exactly the gradient of its own loss.
#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "core/models/Models.h"

namespace ampbench::models {

/// Why copies of `model` cannot be trained fused, empty when they can: the built-in
/// cnn and mlp can (a sequence of convolutions, BatchNorm, ReLU, pooling, flatten,
/// dropout and linear layers); other models, a model file's module and layers set up
/// otherwise than these builders do (a BatchNorm without running statistics) cannot.
std::string fusionProblem(const Network& model);

class FusedNetwork {
  public:
    /// `members`: the copies, each initialised as its own run initialises it; `dropout`:
    /// each copy's generator for its dropout masks (one per member). Throws
    /// std::invalid_argument with fusionProblem()'s text when a copy cannot be fused.
    FusedNetwork(std::vector<std::shared_ptr<Network>> members, std::vector<at::Generator> dropout,
                 bool channels_last = false);

    /// Every member on its own input (the inputs alike in shape): member g's output,
    /// as members[g]->forward(inputs[g]) computes it.
    std::vector<at::Tensor> forward(const std::vector<at::Tensor>& inputs);
    /// Every member on the same input (evaluation).
    std::vector<at::Tensor> forwardEach(const at::Tensor& input);
    /// Training or evaluation mode, for every member.
    void train(bool on);
    int size() const { return static_cast<int>(members_.size()); }
    Network& member(int g) { return *members_.at(static_cast<size_t>(g)); }
    /// The fused BatchNorm statistics written back into each member's own buffers (the
    /// fused forward keeps them in tensors of all the members' channels).
    void syncMembers();

    struct Layer;  // one fused layer (Fused.cpp)

  private:
    std::vector<std::shared_ptr<Network>> members_;
    std::vector<at::Generator> dropout_;
    bool channels_last_;
    bool training_ = true;
    int64_t batches_tracked_ = 0;  // training forwards since the last syncMembers
    std::vector<std::shared_ptr<Layer>> layers_;
};

}  // namespace ampbench::models
