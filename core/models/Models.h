#pragma once
// Built-in models. Each is an `XxxImpl : Network` with a `TORCH_MODULE(Xxx)` holder;
// submodules are registered in the constructor from the ModelSpec.
#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <functional>

#include "core/config/ExperimentSpec.h"
#include "core/data/Datasets.h"

namespace ampbench::models {

/// What a built-in model's forward does at each of its named modules (its tap
/// points): run one as an FP32 island, observe its output. The trainer sets one on
/// the model; without one a forward runs as it always did. Lives on the training thread.
class ModuleTap {
  public:
    virtual ~ModuleTap() = default;
    /// Whether the module at `path` runs with autocast off and its floating-point
    /// input cast to fp32.
    virtual bool fp32(const std::string& path) const = 0;
    /// Sees the module's output; the forward goes on with the tensor returned.
    virtual at::Tensor output(const std::string& path, const at::Tensor& out) = 0;
};

/// How a built-in model's Linear layers multiply: the trainer sets one for an arm
/// whose Linear layers compute in another format (FP8); without one each layer is
/// at::linear. `weight` identifies the layer.
class LinearHook {
  public:
    virtual ~LinearHook() = default;
    virtual at::Tensor linear(const at::Tensor& x, const at::Tensor& weight,
                              const at::Tensor& bias) = 0;
    /// linear(gelu(x)) with the exact GELU: a hook may apply the activation inside
    /// its input's cast (one pass over x instead of two). By default at::gelu, then
    /// linear().
    virtual at::Tensor geluLinear(const at::Tensor& x, const at::Tensor& weight,
                                  const at::Tensor& bias);
    /// linear(layer_norm(x)) over x's last dimension with (ln_weight, ln_bias, eps): a
    /// hook may normalise inside its input's cast (the normalised x never written). By
    /// default at::layer_norm, then linear().
    virtual at::Tensor layerNormLinear(const at::Tensor& x, const at::Tensor& ln_weight,
                                       const at::Tensor& ln_bias, double eps,
                                       const at::Tensor& weight, const at::Tensor& bias);
};

/// `f(x)` as the module at `path`, through `tap` (in fp32 when it says so, its output
/// shown to it); just `f(x)` without a tap.
at::Tensor tapped(ModuleTap* tap, const std::string& path, const at::Tensor& x,
                  const std::function<at::Tensor(const at::Tensor&)>& f);

/// Common interface: logits from a batch of inputs. For token models the logits
/// are N×T×vocab, for image models N×classes.
class Network : public torch::nn::Module {
  public:
    /// One line of the module tree: dotted path ("" for the root) and type name.
    struct Part {
        std::string path;
        std::string type;
        int64_t parameters = 0;  ///< its own, not its children's
    };
    virtual at::Tensor forward(const at::Tensor& input) = 0;
    /// Every module from the root down, in registration order.
    virtual std::vector<Part> parts() const;
    /// The module paths a forward passes through a ModuleTap, in the order it does
    /// ("layers.1", "blocks.0.qkv"); empty for a model file, whose forward runs
    /// inside TorchScript.
    virtual std::vector<std::string> tapPoints() const { return {}; }
    virtual void setTap(ModuleTap* tap) { tap_ = tap; }
    ModuleTap* tap() const { return tap_; }
    /// Every Linear layer of the model multiplies through `hook` (null: at::linear).
    virtual void setLinearHook(LinearHook* hook) { linear_hook_ = hook; }
    LinearHook* linearHook() const { return linear_hook_; }
    /// Every parameter's dotted name ("features.0.weight"), in parameters()' order.
    virtual std::vector<std::string> parameterNames() const;
    /// Whether the model has convolutions (so channels-last can apply).
    virtual bool convolutional() const { return false; }
    /// Whether the model has blocks that gradient checkpointing can recompute.
    virtual bool checkpointable() const { return false; }
    /// Recompute each block's activations in backward instead of keeping them.
    void setCheckpointing(bool on) { checkpointing_ = on; }
    bool checkpointing() const { return checkpointing_; }

  protected:
    bool checkpointing_ = false;
    ModuleTap* tap_ = nullptr;
    LinearHook* linear_hook_ = nullptr;
};

class MlpImpl : public Network {
  public:
    MlpImpl(const config::ModelSpec& spec, const data::InputShape& shape);
    at::Tensor forward(const at::Tensor& input) override;
    std::vector<std::string> tapPoints() const override { return paths_; }

  private:
    torch::nn::Sequential layers_{nullptr};
    std::vector<std::string> paths_;  // "layers.0", ...
};
TORCH_MODULE(Mlp);

/// Small VGG-style CNN: `depth` stages of conv3×3 → BatchNorm → ReLU → max-pool,
/// channels doubling from `width`, then global average pool and a linear head.
class CnnImpl : public Network {
  public:
    CnnImpl(const config::ModelSpec& spec, const data::InputShape& shape);
    at::Tensor forward(const at::Tensor& input) override;
    bool convolutional() const override { return true; }
    std::vector<std::string> tapPoints() const override;

  private:
    std::vector<std::string> feature_paths_;
    torch::nn::Sequential features_{nullptr};
    torch::nn::Dropout dropout_{nullptr};
    torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(Cnn);

/// One residual block: basic (two 3×3) or bottleneck v1.5 (1×1, 3×3 with the
/// stride, 1×1 ×4), with a projection shortcut when the shape changes.
class ResidualBlockImpl : public torch::nn::Module {
  public:
    ResidualBlockImpl(int in_channels, int planes, int stride, bool bottleneck);
    at::Tensor forward(const at::Tensor& x);
    int outChannels() const { return out_channels_; }
    /// Its body's layers and its shortcut go through `tap` under `path` ("blocks.0").
    void setTap(ModuleTap* tap, const std::string& path);
    /// "blocks.0.body.0", ..., "blocks.0.shortcut" (when it has one).
    std::vector<std::string> tapPoints(const std::string& path) const;

  private:
    ModuleTap* tap_ = nullptr;
    std::vector<std::string> body_paths_;
    std::string shortcut_path_;
    torch::nn::Sequential body_{nullptr};
    torch::nn::Sequential shortcut_{nullptr};
    int out_channels_;
};
TORCH_MODULE(ResidualBlock);

/// ResNet in torchvision's layout: stem (7×7/2 + max-pool for inputs above 64 px,
/// else 3×3/1), stages of blocks with widths width·2^i, global pool, linear head.
/// blocks {2,2,2,2} basic = ResNet-18; {3,4,6,3} bottleneck = ResNet-50.
class ResNetImpl : public Network {
  public:
    ResNetImpl(const config::ModelSpec& spec, const data::InputShape& shape);
    at::Tensor forward(const at::Tensor& input) override;
    bool convolutional() const override { return true; }
    bool checkpointable() const override { return true; }
    std::vector<std::string> tapPoints() const override;
    void setTap(ModuleTap* tap) override;

  private:
    std::vector<std::string> stem_paths_;
    torch::nn::Sequential stem_{nullptr};
    torch::nn::ModuleList blocks_{nullptr};
    torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(ResNet);

/// Causal self-attention of the heads packed in a qkv projection's output (n × t ×
/// 3·d): no parameters of its own, a module so that the numerics and FP32 islands
/// can name it (`blocks.3.attn`).
class CausalAttentionImpl : public torch::nn::Module {
  public:
    /// `scaled`: the scores divided by sqrt(head size) (the fused kernel where LibTorch
    /// has one); else q·kᵀ as it comes, computed in the autocast dtype.
    CausalAttentionImpl(int heads, double dropout, bool scaled);
    /// n × t × d: the heads' outputs side by side.
    at::Tensor forward(const at::Tensor& qkv);

  private:
    int heads_;
    double dropout_p_;
    bool scaled_;
};
TORCH_MODULE(CausalAttention);

/// Pre-LayerNorm decoder block: causal self-attention and a 4× GELU MLP.
class DecoderBlockImpl : public torch::nn::Module {
  public:
    DecoderBlockImpl(int d_model, int heads, double dropout, bool scaled_attention = true);
    at::Tensor forward(const at::Tensor& x);
    /// Its modules' outputs go through `tap` under `path` ("blocks.0").
    void setTap(ModuleTap* tap, const std::string& path);
    void setLinearHook(LinearHook* hook) { hook_ = hook; }
    static std::vector<std::string> tapPoints(const std::string& path);

  private:
    at::Tensor tappedForward(const at::Tensor& x);
    ModuleTap* tap_ = nullptr;
    LinearHook* hook_ = nullptr;
    std::string path_;
    torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
    torch::nn::Linear qkv_{nullptr}, proj_{nullptr}, fc1_{nullptr}, fc2_{nullptr};
    CausalAttention attn_{nullptr};
    torch::nn::Dropout drop_{nullptr};
};
TORCH_MODULE(DecoderBlock);

/// GPT-style decoder: token + learned position embeddings, `depth` blocks,
/// final LayerNorm, untied output projection.
class TransformerImpl : public Network {
  public:
    TransformerImpl(const config::ModelSpec& spec, const data::InputShape& shape);
    at::Tensor forward(const at::Tensor& tokens) override;
    bool checkpointable() const override { return true; }
    std::vector<std::string> tapPoints() const override;
    void setTap(ModuleTap* tap) override;
    void setLinearHook(LinearHook* hook) override;

  private:
    torch::nn::Embedding tok_{nullptr}, pos_{nullptr};
    torch::nn::Dropout drop_{nullptr};
    torch::nn::ModuleList blocks_{nullptr};
    torch::nn::LayerNorm ln_f_{nullptr};
    torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(Transformer);

}  // namespace ampbench::models
