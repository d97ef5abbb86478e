#include "core/config/ExperimentSpec.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace ampbench::config {

// Memberwise comparisons (C++17 has no defaulted operator==). Keep these in step
// with the structs: a member left out here would make a round-trip test blind to it.
bool ScalerSpec::operator==(const ScalerSpec& o) const {
    return std::tie(init_scale, growth_factor, backoff_factor, growth_interval) ==
           std::tie(o.init_scale, o.growth_factor, o.backoff_factor, o.growth_interval);
}

bool ArmSpec::operator==(const ArmSpec& o) const {
    return std::tie(name, precision, accumulation, lr_rule, scaler, grad_clip, tf32, channels_last,
                    checkpointing, cuda_graph, repeats) ==
           std::tie(o.name, o.precision, o.accumulation, o.lr_rule, o.scaler, o.grad_clip, o.tf32,
                    o.channels_last, o.checkpointing, o.cuda_graph, o.repeats);
}

bool ModelSpec::operator==(const ModelSpec& o) const {
    return std::tie(name, width, depth, blocks, bottleneck, heads, dropout) ==
           std::tie(o.name, o.width, o.depth, o.blocks, o.bottleneck, o.heads, o.dropout);
}

bool DataSpec::operator==(const DataSpec& o) const {
    return std::tie(name, dir, val_fraction, channels, height, width, classes, seq_len, vocab,
                    prefetch) == std::tie(o.name, o.dir, o.val_fraction, o.channels, o.height,
                                          o.width, o.classes, o.seq_len, o.vocab, o.prefetch);
}

bool OptimizerSpec::operator==(const OptimizerSpec& o) const {
    return std::tie(kind, lr, momentum, weight_decay, beta1, beta2, eps) ==
           std::tie(o.kind, o.lr, o.momentum, o.weight_decay, o.beta1, o.beta2, o.eps);
}

bool ExperimentSpec::operator==(const ExperimentSpec& o) const {
    return std::tie(name, model, data, optimizer, micro_batch, steps, epochs, warmup_steps,
                    eval_interval, eval_batches, seeds, device, cpu_threads, cudnn_benchmark,
                    arms) == std::tie(o.name, o.model, o.data, o.optimizer, o.micro_batch, o.steps,
                                      o.epochs, o.warmup_steps, o.eval_interval, o.eval_batches,
                                      o.seeds, o.device, o.cpu_threads, o.cudnn_benchmark, o.arms);
}

std::string toString(Precision p) {
    switch (p) {
        case Precision::Fp32:
            return "fp32";
        case Precision::Amp:
            return "amp";
        case Precision::AmpFp16:
            return "amp-fp16";
        case Precision::AmpBf16:
            return "amp-bf16";
    }
    return "fp32";
}

std::string toString(LrRule r) {
    switch (r) {
        case LrRule::Linear:
            return "linear";
        case LrRule::Sqrt:
            return "sqrt";
        case LrRule::None:
            return "none";
    }
    return "linear";
}

std::string toString(OptimizerKind k) {
    switch (k) {
        case OptimizerKind::Sgd:
            return "sgd";
        case OptimizerKind::AdamW:
            return "adamw";
    }
    return "sgd";
}

std::string toString(DeviceKind d) {
    switch (d) {
        case DeviceKind::Auto:
            return "auto";
        case DeviceKind::Cpu:
            return "cpu";
        case DeviceKind::Cuda:
            return "cuda";
    }
    return "auto";
}

std::optional<Precision> precisionFromString(const std::string& text) {
    for (Precision p : {Precision::Fp32, Precision::Amp, Precision::AmpFp16, Precision::AmpBf16}) {
        if (toString(p) == text) {
            return p;
        }
    }
    return std::nullopt;
}

std::optional<LrRule> lrRuleFromString(const std::string& text) {
    for (LrRule r : {LrRule::Linear, LrRule::Sqrt, LrRule::None}) {
        if (toString(r) == text) {
            return r;
        }
    }
    return std::nullopt;
}

std::optional<OptimizerKind> optimizerFromString(const std::string& text) {
    for (OptimizerKind k : {OptimizerKind::Sgd, OptimizerKind::AdamW}) {
        if (toString(k) == text) {
            return k;
        }
    }
    return std::nullopt;
}

std::optional<DeviceKind> deviceFromString(const std::string& text) {
    for (DeviceKind d : {DeviceKind::Auto, DeviceKind::Cpu, DeviceKind::Cuda}) {
        if (toString(d) == text) {
            return d;
        }
    }
    return std::nullopt;
}

std::vector<uint64_t> seedsForArm(const ExperimentSpec& spec, const ArmSpec& arm) {
    if (arm.repeats <= 0) {
        return spec.seeds;
    }
    const auto count = static_cast<size_t>(arm.repeats);
    std::vector<uint64_t> seeds(spec.seeds.begin(),
                                spec.seeds.begin() + std::min(count, spec.seeds.size()));
    uint64_t next =
        spec.seeds.empty() ? 1 : *std::max_element(spec.seeds.begin(), spec.seeds.end()) + 1;
    while (seeds.size() < count) {
        seeds.push_back(next++);
    }
    return seeds;
}

double scaledLearningRate(const ExperimentSpec& spec, const ArmSpec& arm) {
    const double k = static_cast<double>(std::max(1, arm.accumulation));
    switch (arm.lr_rule) {
        case LrRule::Linear:
            return spec.optimizer.lr * k;
        case LrRule::Sqrt:
            return spec.optimizer.lr * std::sqrt(k);
        case LrRule::None:
            return spec.optimizer.lr;
    }
    return spec.optimizer.lr;
}

}  // namespace ampbench::config
