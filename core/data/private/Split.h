#pragma once
// The validation split every dataset of a training file uses.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cstdint>
#include <utility>

namespace ampbench::data {

/// Fixed so that the validation split never depends on a run's seed.
constexpr uint64_t kSplitSeed = 20261130;

/// Rows [0, n) in a fixed random order: the first floor(n * val_fraction) are the
/// validation part, the rest the training part. Returns {training, validation}.
inline std::pair<at::Tensor, at::Tensor> splitRows(int64_t n, double val_fraction) {
    auto gen = at::detail::createCPUGenerator(kSplitSeed);
    auto perm = at::randperm(n, gen, at::TensorOptions().dtype(at::kLong));
    auto n_val = static_cast<int64_t>(static_cast<double>(n) * val_fraction);
    return {perm.slice(0, n_val, n), perm.slice(0, 0, n_val)};
}

}  // namespace ampbench::data
