#include "core/models/Models.h"

#include <ATen/ATen.h>
#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/pooling.h>
#include <torch/version.h>

#include "core/autocast/AutocastGuard.h"
#include "core/models/Checkpoint.h"

#include <cmath>
#include <stdexcept>

namespace ampbench::models {
namespace nn = torch::nn;

namespace {

/// A linear layer on an input of any rank, as Python's F.linear computes it.
/// LibTorch's C++ nn::Linear multiplies and then adds the bias in a separate
/// broadcasting kernel when the input has more than two dimensions (and, under
/// autocast, adds an fp32 bias into the half-precision product); at::linear folds
/// the leading dimensions and lets the GEMM add the bias. Profiling the GPT-2
/// workload on the H200 (bench/profile_step.cpp) found that separate add costing
/// 4 ms of a 280 ms fp32 step and about 6 ms per micro-batch under fp16 autocast.
/// Through `hook` where the arm sets one (FP8).
at::Tensor linear(LinearHook* hook, const nn::Linear& layer, const at::Tensor& x) {
    return hook ? hook->linear(x, layer->weight, layer->bias)
                : at::linear(x, layer->weight, layer->bias);
}

/// linear(hook, layer, gelu(x)), the hook free to fuse the two.
at::Tensor geluLinear(LinearHook* hook, const nn::Linear& layer, const at::Tensor& x) {
    return hook ? hook->geluLinear(x, layer->weight, layer->bias)
                : at::linear(at::gelu(x), layer->weight, layer->bias);
}

/// linear(hook, layer, norm(x)), the hook free to fuse the two.
at::Tensor layerNormLinear(LinearHook* hook, nn::LayerNorm& norm, const nn::Linear& layer,
                           const at::Tensor& x) {
    return hook ? hook->layerNormLinear(x, norm->weight, norm->bias, norm->options.eps(),
                                        layer->weight, layer->bias)
                : at::linear(norm->forward(x), layer->weight, layer->bias);
}

nn::Conv2d conv(int in, int out, int k, int stride = 1) {
    return nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding(k / 2).bias(false));
}

int imageFeatures(const data::InputShape& s) {
    return s.channels * s.height * s.width;
}

/// The output width: a logit per class, or one value per regression target element.
int outputs(const data::InputShape& s) {
    if (!s.float_target) {
        return s.classes;
    }
    int64_t n = 1;
    for (int64_t d : s.target) {
        n *= d;
    }
    return static_cast<int>(n);
}

/// "prefix.0", "prefix.1", ...: the paths of a Sequential's children.
std::vector<std::string> childPaths(const std::string& prefix, size_t n) {
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) {
        out.push_back(prefix + "." + std::to_string(i));
    }
    return out;
}

/// A Sequential's forward, each child through the tap under its path and each Linear
/// child through the hook.
at::Tensor runSequence(nn::Sequential& seq, const std::vector<std::string>& paths, ModuleTap* tap,
                       LinearHook* hook, at::Tensor x) {
    if (!tap && !hook) {
        return seq->forward(x);
    }
    size_t i = 0;
    for (auto& child : *seq) {
        auto run = [&child, hook](const at::Tensor& in) {
            if (hook) {
                if (auto lin = std::dynamic_pointer_cast<nn::LinearImpl>(child.ptr())) {
                    return hook->linear(in, lin->weight, lin->bias);
                }
            }
            return child.forward(in);
        };
        const std::string& path = paths.at(i++);
        x = tap ? tapped(tap, path, x, run) : run(x);
    }
    return x;
}

const std::string kNoPath;

}  // namespace

at::Tensor LinearHook::geluLinear(const at::Tensor& x, const at::Tensor& weight,
                                  const at::Tensor& bias) {
    return linear(at::gelu(x), weight, bias);
}

at::Tensor LinearHook::layerNormLinear(const at::Tensor& x, const at::Tensor& ln_weight,
                                       const at::Tensor& ln_bias, double eps,
                                       const at::Tensor& weight, const at::Tensor& bias) {
    return linear(at::layer_norm(x, {x.size(-1)}, ln_weight, ln_bias, eps), weight, bias);
}

at::Tensor tapped(ModuleTap* tap, const std::string& path, const at::Tensor& x,
                  const std::function<at::Tensor(const at::Tensor&)>& f) {
    if (!tap) {
        return f(x);
    }
    at::Tensor out;
    if (tap->fp32(path)) {
        // An FP32 island: autocast off for this module (its dtype and cache setting kept
        // for the modules after it), its input in fp32; its weights are fp32 already.
        const auto device = x.device().type();
        autocast::AutocastGuard off(device, autocast::AutocastGuard::dtype(device),
                                    /*enabled=*/false, autocast::AutocastGuard::cacheEnabled());
        out = f(x.is_floating_point() ? x.to(at::kFloat) : x);
    } else {
        out = f(x);
    }
    return tap->output(path, out);
}

std::vector<Network::Part> Network::parts() const {
    std::vector<Part> out;
    for (const auto& item : named_modules("", /*include_self=*/true)) {
        // "torch::nn::Conv2dImpl" reads as "Conv2d", as Python names the module.
        std::string type = item.value()->name();
        if (auto colons = type.rfind("::"); colons != std::string::npos) {
            type = type.substr(colons + 2);
        }
        if (type.size() > 4 && type.compare(type.size() - 4, 4, "Impl") == 0) {
            type.resize(type.size() - 4);
        }
        Part p{item.key(), type, 0};
        for (const auto& param : item.value()->parameters(/*recurse=*/false)) {
            p.parameters += param.numel();
        }
        out.push_back(std::move(p));
    }
    return out;
}

std::vector<std::string> Network::parameterNames() const {
    std::vector<std::string> out;
    for (const auto& item : named_parameters(/*recurse=*/true)) {
        out.push_back(item.key());
    }
    return out;
}

// ---------------------------------------------------------------- MLP
MlpImpl::MlpImpl(const config::ModelSpec& spec, const data::InputShape& shape) {
    layers_ = register_module("layers", nn::Sequential());
    layers_->push_back(nn::Flatten());
    int in = imageFeatures(shape);
    for (int i = 0; i < spec.depth; ++i) {
        layers_->push_back(nn::Linear(in, spec.width));
        layers_->push_back(nn::ReLU(nn::ReLUOptions(true)));
        if (spec.dropout > 0) {
            layers_->push_back(nn::Dropout(spec.dropout));
        }
        in = spec.width;
    }
    layers_->push_back(nn::Linear(in, outputs(shape)));
    paths_ = childPaths("layers", layers_->size());
}

at::Tensor MlpImpl::forward(const at::Tensor& input) {
    return runSequence(layers_, paths_, tap_, linear_hook_, input);
}

// ---------------------------------------------------------------- CNN
CnnImpl::CnnImpl(const config::ModelSpec& spec, const data::InputShape& shape) {
    features_ = register_module("features", nn::Sequential());
    int in = shape.channels;
    int out = spec.width;
    for (int i = 0; i < spec.depth; ++i) {
        features_->push_back(conv(in, out, 3));
        features_->push_back(nn::BatchNorm2d(out));
        features_->push_back(nn::ReLU(nn::ReLUOptions(true)));
        features_->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2)));
        in = out;
        out *= 2;
    }
    features_->push_back(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1)));
    features_->push_back(nn::Flatten());
    dropout_ = register_module("dropout", nn::Dropout(spec.dropout));
    head_ = register_module("head", nn::Linear(in, outputs(shape)));
    feature_paths_ = childPaths("features", features_->size());
}

std::vector<std::string> CnnImpl::tapPoints() const {
    auto out = feature_paths_;
    out.push_back("dropout");
    out.push_back("head");
    return out;
}

at::Tensor CnnImpl::forward(const at::Tensor& input) {
    if (!tap_) {
        return linear(linear_hook_, head_, dropout_->forward(features_->forward(input)));
    }
    auto x = runSequence(features_, feature_paths_, tap_, nullptr, input);
    x = tapped(tap_, "dropout", x, [this](const at::Tensor& in) { return dropout_->forward(in); });
    return tapped(tap_, "head", x,
                  [this](const at::Tensor& in) { return linear(linear_hook_, head_, in); });
}

// ---------------------------------------------------------------- ResNet
ResidualBlockImpl::ResidualBlockImpl(int in_channels, int planes, int stride, bool bottleneck) {
    body_ = register_module("body", nn::Sequential());
    if (bottleneck) {
        out_channels_ = planes * 4;
        body_->push_back(conv(in_channels, planes, 1));
        body_->push_back(nn::BatchNorm2d(planes));
        body_->push_back(nn::ReLU(nn::ReLUOptions(true)));
        body_->push_back(conv(planes, planes, 3, stride));  // v1.5: stride on the 3×3
        body_->push_back(nn::BatchNorm2d(planes));
        body_->push_back(nn::ReLU(nn::ReLUOptions(true)));
        body_->push_back(conv(planes, out_channels_, 1));
        body_->push_back(nn::BatchNorm2d(out_channels_));
    } else {
        out_channels_ = planes;
        body_->push_back(conv(in_channels, planes, 3, stride));
        body_->push_back(nn::BatchNorm2d(planes));
        body_->push_back(nn::ReLU(nn::ReLUOptions(true)));
        body_->push_back(conv(planes, planes, 3));
        body_->push_back(nn::BatchNorm2d(planes));
    }
    if (stride != 1 || in_channels != out_channels_) {
        shortcut_ =
            register_module("shortcut", nn::Sequential(conv(in_channels, out_channels_, 1, stride),
                                                       nn::BatchNorm2d(out_channels_)));
    }
}

void ResidualBlockImpl::setTap(ModuleTap* tap, const std::string& path) {
    tap_ = tap;
    body_paths_ = childPaths(path + ".body", body_->size());
    shortcut_path_ = path + ".shortcut";
}

std::vector<std::string> ResidualBlockImpl::tapPoints(const std::string& path) const {
    auto out = childPaths(path + ".body", body_->size());
    if (shortcut_) {
        out.push_back(path + ".shortcut");
    }
    return out;
}

at::Tensor ResidualBlockImpl::forward(const at::Tensor& x) {
    if (tap_) {
        auto identity =
            shortcut_ ? tapped(tap_, shortcut_path_, x,
                               [this](const at::Tensor& in) { return shortcut_->forward(in); })
                      : x;
        auto y = runSequence(body_, body_paths_, tap_, nullptr, x) + identity;
        return y.relu_();
    }
    auto identity = shortcut_ ? shortcut_->forward(x) : x;
    auto y = body_->forward(x) + identity;
    return y.relu_();
}

ResNetImpl::ResNetImpl(const config::ModelSpec& spec, const data::InputShape& shape) {
    const bool large = shape.height > 64 || shape.width > 64;
    stem_ = register_module("stem", nn::Sequential());
    if (large) {
        stem_->push_back(nn::Conv2d(
            nn::Conv2dOptions(shape.channels, spec.width, 7).stride(2).padding(3).bias(false)));
    } else {
        stem_->push_back(conv(shape.channels, spec.width, 3));
    }
    stem_->push_back(nn::BatchNorm2d(spec.width));
    stem_->push_back(nn::ReLU(nn::ReLUOptions(true)));
    if (large) {
        stem_->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
    }
    std::vector<int> stages = spec.blocks;
    if (stages.empty()) {
        stages.assign(static_cast<size_t>(std::max(1, spec.depth)), 2);
    }
    blocks_ = register_module("blocks", nn::ModuleList());
    int in = spec.width;
    for (size_t s = 0; s < stages.size(); ++s) {
        int planes = spec.width << s;
        for (int b = 0; b < stages[s]; ++b) {
            int stride = (s > 0 && b == 0) ? 2 : 1;
            auto block = ResidualBlock(in, planes, stride, spec.bottleneck);
            in = block->outChannels();
            blocks_->push_back(block);
        }
    }
    head_ = register_module("head", nn::Linear(in, outputs(shape)));
    stem_paths_ = childPaths("stem", stem_->size());
    // torchvision's initialisation: Kaiming for convolutions, BN weight 1 bias 0.
    for (auto& m : modules(false)) {
        if (auto* c = m->as<nn::Conv2d>()) {
            nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
        }
    }
}

std::vector<std::string> ResNetImpl::tapPoints() const {
    auto out = stem_paths_;
    const auto paths = childPaths("blocks", blocks_->size());
    for (size_t i = 0; i < paths.size(); ++i) {
        for (auto& p : (*blocks_)[i]->as<ResidualBlock>()->tapPoints(paths[i])) {
            out.push_back(std::move(p));
        }
        out.push_back(paths[i]);
    }
    out.push_back("head");
    return out;
}

void ResNetImpl::setTap(ModuleTap* tap) {
    Network::setTap(tap);
    const auto paths = childPaths("blocks", blocks_->size());
    for (size_t i = 0; i < paths.size(); ++i) {
        (*blocks_)[i]->as<ResidualBlock>()->setTap(tap, paths[i]);
    }
}

at::Tensor ResNetImpl::forward(const at::Tensor& input) {
    auto x = runSequence(stem_, stem_paths_, tap_, nullptr, input);
    for (size_t i = 0; i < blocks_->size(); ++i) {
        auto* b = (*blocks_)[i]->as<ResidualBlock>();
        ModuleTap* tap = tap_;
        const std::string path = tap ? "blocks." + std::to_string(i) : kNoPath;
        auto block = [b, tap, path](const at::Tensor& in) {
            return tapped(tap, path, in, [b](const at::Tensor& t) { return b->forward(t); });
        };
        x = checkpointing_ && is_training() ? checkpoint(block, x) : block(x);
    }
    x = x.mean({2, 3});
    return tapped(tap_, "head", x,
                  [this](const at::Tensor& in) { return linear(linear_hook_, head_, in); });
}

// ---------------------------------------------------------------- Transformer
CausalAttentionImpl::CausalAttentionImpl(int heads, double dropout, bool scaled)
    : heads_(heads), dropout_p_(dropout), scaled_(scaled) {}

at::Tensor CausalAttentionImpl::forward(const at::Tensor& qkv) {
    const auto n = qkv.size(0), t = qkv.size(1), d = qkv.size(2) / 3;
    const auto hd = d / heads_;
    const auto heads = qkv.view({n, t, 3, heads_, hd}).permute({2, 0, 3, 1, 4});
    const at::Tensor q = heads[0], k = heads[1], v = heads[2];
    const double p = is_training() ? dropout_p_ : 0.0;
    at::Tensor att;
#if TORCH_VERSION_MAJOR >= 2
    if (scaled_) {
        att = at::scaled_dot_product_attention(q, k, v, {}, p, true);
    }
#endif
    if (!att.defined()) {
        // The scores materialised: under autocast the product is in its dtype (fp16's
        // largest value is 65504), softmax in fp32.
        auto scores = at::matmul(q, k.transpose(-2, -1));
        if (scaled_) {
            scores = scores / std::sqrt(static_cast<double>(hd));
        }
        auto mask = at::ones({t, t}, qkv.options().dtype(at::kBool)).triu(1);
        scores = scores.masked_fill(mask, -std::numeric_limits<float>::infinity());
        auto probs = at::softmax(scores, -1);
        if (p > 0) {
            probs = at::dropout(probs, p, true);
        }
        att = at::matmul(probs, v);
    }
    return att.transpose(1, 2).reshape({n, t, d});
}

DecoderBlockImpl::DecoderBlockImpl(int d_model, int heads, double dropout, bool scaled_attention) {
    ln1_ = register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({d_model})));
    qkv_ = register_module("qkv", nn::Linear(d_model, 3 * d_model));
    attn_ = register_module("attn", CausalAttention(heads, dropout, scaled_attention));
    proj_ = register_module("proj", nn::Linear(d_model, d_model));
    ln2_ = register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({d_model})));
    fc1_ = register_module("fc1", nn::Linear(d_model, 4 * d_model));
    fc2_ = register_module("fc2", nn::Linear(4 * d_model, d_model));
    drop_ = register_module("drop", nn::Dropout(dropout));
}

namespace {
const char* const kDecoderParts[] = {"ln1", "qkv", "attn", "proj", "ln2", "fc1", "fc2"};
}

std::vector<std::string> DecoderBlockImpl::tapPoints(const std::string& path) {
    std::vector<std::string> out;
    for (const char* part : kDecoderParts) {
        out.push_back(path + "." + part);
    }
    return out;
}

void DecoderBlockImpl::setTap(ModuleTap* tap, const std::string& path) {
    tap_ = tap;
    path_ = path;
}

at::Tensor DecoderBlockImpl::forward(const at::Tensor& x) {
    if (tap_) {
        return tappedForward(x);
    }
    auto y = attn_->forward(layerNormLinear(hook_, ln1_, qkv_, x));
    auto h = x + drop_->forward(linear(hook_, proj_, y));
    auto m = geluLinear(hook_, fc2_, layerNormLinear(hook_, ln2_, fc1_, h));
    return h + drop_->forward(m);
}

// The same block with each module's output through the tap (and in fp32 where it says).
// The LayerNorms' outputs are tap points, so here each is computed on its own and a
// hook cannot fuse it into the next layer's cast.
at::Tensor DecoderBlockImpl::tappedForward(const at::Tensor& x) {
    auto where = [this](const char* part) { return path_ + "." + part; };
    auto ln1 =
        tapped(tap_, where("ln1"), x, [this](const at::Tensor& in) { return ln1_->forward(in); });
    auto qkv = tapped(tap_, where("qkv"), ln1,
                      [this](const at::Tensor& in) { return linear(hook_, qkv_, in); });
    auto y = tapped(tap_, where("attn"), qkv,
                    [this](const at::Tensor& in) { return attn_->forward(in); });
    auto h = x + drop_->forward(tapped(tap_, where("proj"), y, [this](const at::Tensor& in) {
        return linear(hook_, proj_, in);
    }));
    auto ln2 =
        tapped(tap_, where("ln2"), h, [this](const at::Tensor& in) { return ln2_->forward(in); });
    auto f1 = tapped(tap_, where("fc1"), ln2,
                     [this](const at::Tensor& in) { return linear(hook_, fc1_, in); });
    // GELU goes with fc2, as in forward(): a hook that fuses the two (FP8) computes the
    // same on steps with a tap, and an fc2 island computes its GELU in fp32 too.
    auto m = tapped(tap_, where("fc2"), f1,
                    [this](const at::Tensor& in) { return geluLinear(hook_, fc2_, in); });
    return h + drop_->forward(m);
}

TransformerImpl::TransformerImpl(const config::ModelSpec& spec, const data::InputShape& shape) {
    if (spec.width % spec.heads != 0) {
        throw std::invalid_argument("transformer: width must be divisible by heads");
    }
    tok_ = register_module("tok", nn::Embedding(shape.vocab, spec.width));
    pos_ = register_module("pos", nn::Embedding(shape.seq_len, spec.width));
    drop_ = register_module("drop", nn::Dropout(spec.dropout));
    blocks_ = register_module("blocks", nn::ModuleList());
    for (int i = 0; i < spec.depth; ++i) {
        blocks_->push_back(
            DecoderBlock(spec.width, spec.heads, spec.dropout, spec.attention != "unscaled"));
    }
    ln_f_ = register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({spec.width})));
    head_ =
        register_module("head", nn::Linear(nn::LinearOptions(spec.width, shape.vocab).bias(false)));
    // GPT-2's initialisation, N(0, 0.02), for linear and embedding weights; σ may be set.
    torch::NoGradGuard no_grad;
    for (auto& p : named_parameters()) {
        if (p.key().find("weight") != std::string::npos && p.value().dim() == 2) {
            p.value().normal_(0.0, spec.init_std);
        }
    }
}

std::vector<std::string> TransformerImpl::tapPoints() const {
    std::vector<std::string> out = {"tok", "pos"};
    for (size_t i = 0; i < blocks_->size(); ++i) {
        const std::string path = "blocks." + std::to_string(i);
        for (auto& p : DecoderBlockImpl::tapPoints(path)) {
            out.push_back(std::move(p));
        }
        out.push_back(path);
    }
    out.push_back("ln_f");
    out.push_back("head");
    return out;
}

void TransformerImpl::setTap(ModuleTap* tap) {
    Network::setTap(tap);
    for (size_t i = 0; i < blocks_->size(); ++i) {
        (*blocks_)[i]->as<DecoderBlock>()->setTap(tap, "blocks." + std::to_string(i));
    }
}

void TransformerImpl::setLinearHook(LinearHook* hook) {
    Network::setLinearHook(hook);
    for (size_t i = 0; i < blocks_->size(); ++i) {
        (*blocks_)[i]->as<DecoderBlock>()->setLinearHook(hook);
    }
}

at::Tensor TransformerImpl::forward(const at::Tensor& tokens) {
    const auto t = tokens.size(1);
    auto positions = at::arange(t, tokens.options().dtype(at::kLong));
    auto x = drop_->forward(
        tapped(tap_, "tok", tokens, [this](const at::Tensor& in) { return tok_->forward(in); }) +
        tapped(tap_, "pos", positions, [this](const at::Tensor& in) { return pos_->forward(in); }));
    for (size_t i = 0; i < blocks_->size(); ++i) {
        auto* b = (*blocks_)[i]->as<DecoderBlock>();
        ModuleTap* tap = tap_;
        const std::string path = tap ? "blocks." + std::to_string(i) : kNoPath;
        auto block = [b, tap, path](const at::Tensor& in) {
            return tapped(tap, path, in, [b](const at::Tensor& t) { return b->forward(t); });
        };
        x = checkpointing_ && is_training() ? checkpoint(block, x) : block(x);
    }
    if (!tap_) {
        return layerNormLinear(linear_hook_, ln_f_, head_, x);
    }
    x = tapped(tap_, "ln_f", x, [this](const at::Tensor& in) { return ln_f_->forward(in); });
    return tapped(tap_, "head", x,
                  [this](const at::Tensor& in) { return linear(linear_hook_, head_, in); });
}

}  // namespace ampbench::models
