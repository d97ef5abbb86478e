#pragma once
// What the GPU-only tests share: the skip where there is no CUDA device, and small
// experiment specs on the GPU.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/config/ExperimentSpec.h"
#include "core/probe/Environment.h"

#define REQUIRE_CUDA()                                                      \
    if (!ampbench::probe::cudaAvailable()) {                                \
        GTEST_SKIP() << "no CUDA device (this build or machine): GPU-only"; \
    }

namespace ampbench::test_cuda {

inline const c10::Device kCuda(c10::kCUDA, 0);

/// One arm on the GPU: `steps` micro-batches of `batch`, no evaluation on the way.
inline config::ExperimentSpec cudaSpec(int batch, int64_t steps, config::Precision precision) {
    config::ExperimentSpec s;
    s.micro_batch = batch;
    s.micro_steps = steps;
    s.eval_interval = 0;
    s.eval_batches = 1;
    s.device = config::DeviceKind::Cuda;
    s.arms = {{"a", precision}};
    return s;
}

/// The default CNN on generated 28×28 images, batch 64.
inline config::ExperimentSpec cudaCnnSpec(int64_t steps, config::Precision precision) {
    auto s = cudaSpec(64, steps, precision);
    s.model.name = "cnn";
    s.data.name = "synthetic-images";
    s.data.channels = 1;
    s.data.height = s.data.width = 28;
    return s;
}

/// A decoder of `width` × `depth` on generated token sequences.
inline config::ExperimentSpec cudaDecoderSpec(int width, int depth, int heads, int seq_len,
                                              int vocab, int batch, int64_t steps,
                                              config::Precision precision) {
    auto s = cudaSpec(batch, steps, precision);
    s.model.name = "transformer";
    s.model.width = width;
    s.model.depth = depth;
    s.model.heads = heads;
    s.data.name = "synthetic-tokens";
    s.data.seq_len = seq_len;
    s.data.vocab = vocab;
    return s;
}

}  // namespace ampbench::test_cuda
