#include "core/models/Fused.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include <stdexcept>
#include <variant>

namespace ampbench::models {
namespace nn = torch::nn;

/// Where the members' activations sit between layers: side by side in the channels
/// ([B, G·C, ...]: convolution, BatchNorm, pooling) or stacked in front ([G, B, ...]:
/// flatten, linear layers, dropout).
enum class Layout { Channels, Stacked };

struct FusedNetwork::Layer {
    enum class Kind { Conv, BatchNorm, Relu, MaxPool, AdaptiveAvgPool, Flatten, Dropout, Linear };
    Kind kind;
    std::vector<std::shared_ptr<nn::Module>> of;  // each member's module
    // Conv and pooling settings.
    std::vector<int64_t> stride, padding, dilation, kernel;
    int64_t groups = 1;
    bool ceil_mode = false;
    std::vector<c10::optional<int64_t>> output_size;
    // Each member's weight and bias (undefined where the layer has none), read once:
    // the tensors are the members' own, updated in place by their optimizers.
    std::vector<at::Tensor> weights, biases;
    // BatchNorm: the members' statistics side by side.
    at::Tensor running_mean, running_var;
    double momentum = 0.1, eps = 1e-5;
    double p = 0;  // dropout
};

namespace {

using Kind = FusedNetwork::Layer::Kind;

template <size_t N>
std::vector<int64_t> asVector(const torch::ExpandingArray<N>& a) {
    return std::vector<int64_t>(a->begin(), a->end());
}

/// The leaves of `module` in registration order, Sequentials opened.
void leavesOf(const std::shared_ptr<nn::Module>& module,
              std::vector<std::shared_ptr<nn::Module>>& out) {
    for (const auto& child : module->children()) {
        if (std::dynamic_pointer_cast<nn::SequentialImpl>(child)) {
            leavesOf(child, out);
        } else {
            out.push_back(child);
        }
    }
}

/// The fused layer of one leaf of the first member, its settings read; throws
/// std::invalid_argument naming what cannot be fused.
FusedNetwork::Layer layerOf(const std::shared_ptr<nn::Module>& leaf) {
    FusedNetwork::Layer l{};
    if (auto c = std::dynamic_pointer_cast<nn::Conv2dImpl>(leaf)) {
        const auto& o = c->options;
        // LibTorch 1.13 holds these in c10::variant, 2.x in std::variant: found by ADL.
        using std::get_if;
        using std::holds_alternative;
        const auto* pad = get_if<torch::ExpandingArray<2>>(&o.padding());
        if (!pad || !holds_alternative<torch::enumtype::kZeros>(o.padding_mode())) {
            throw std::invalid_argument("a convolution padded otherwise than by zeros");
        }
        l.kind = Kind::Conv;
        l.stride = asVector(o.stride());
        l.padding = asVector(*pad);
        l.dilation = asVector(o.dilation());
        l.groups = o.groups();
    } else if (auto b = std::dynamic_pointer_cast<nn::BatchNorm2dImpl>(leaf)) {
        const auto& o = b->options;
        if (!o.track_running_stats() || !o.momentum()) {
            throw std::invalid_argument(
                "a BatchNorm without running statistics at a fixed momentum");
        }
        l.kind = Kind::BatchNorm;
        l.momentum = *o.momentum();
        l.eps = o.eps();
    } else if (std::dynamic_pointer_cast<nn::ReLUImpl>(leaf)) {
        l.kind = Kind::Relu;
    } else if (auto m = std::dynamic_pointer_cast<nn::MaxPool2dImpl>(leaf)) {
        const auto& o = m->options;
        l.kind = Kind::MaxPool;
        l.kernel = asVector(o.kernel_size());
        l.stride = asVector(o.stride());
        l.padding = asVector(o.padding());
        l.dilation = asVector(o.dilation());
        l.ceil_mode = o.ceil_mode();
    } else if (auto a = std::dynamic_pointer_cast<nn::AdaptiveAvgPool2dImpl>(leaf)) {
        l.kind = Kind::AdaptiveAvgPool;
        const auto& size = a->options.output_size();
        l.output_size.assign(size->begin(), size->end());
    } else if (auto f = std::dynamic_pointer_cast<nn::FlattenImpl>(leaf)) {
        if (f->options.start_dim() != 1 || f->options.end_dim() != -1) {
            throw std::invalid_argument("a flatten of other dimensions than all but the batch");
        }
        l.kind = Kind::Flatten;
    } else if (auto d = std::dynamic_pointer_cast<nn::DropoutImpl>(leaf)) {
        l.kind = Kind::Dropout;
        l.p = d->options.p();
    } else if (std::dynamic_pointer_cast<nn::LinearImpl>(leaf)) {
        l.kind = Kind::Linear;
    } else {
        throw std::invalid_argument("a layer of type " + leaf->name());
    }
    return l;
}

/// [G, B, C, ...] → [B, G·C, ...].
at::Tensor toChannels(const at::Tensor& x) {
    std::vector<int64_t> shape = {x.size(1), x.size(0) * x.size(2)};
    for (int64_t d = 3; d < x.dim(); ++d) {
        shape.push_back(x.size(d));
    }
    return x.transpose(0, 1).reshape(shape);
}

/// [B, G·C, ...] → [G, B, C, ...].
at::Tensor toStacked(const at::Tensor& x, int64_t g) {
    std::vector<int64_t> shape = {x.size(0), g, x.size(1) / g};
    for (int64_t d = 2; d < x.dim(); ++d) {
        shape.push_back(x.size(d));
    }
    return x.reshape(shape).transpose(0, 1);
}

template <class M>
std::vector<at::Tensor> each(const std::vector<std::shared_ptr<nn::Module>>& of,
                             at::Tensor M::*member) {
    std::vector<at::Tensor> out;
    out.reserve(of.size());
    for (const auto& m : of) {
        out.push_back(dynamic_cast<M&>(*m).*member);
    }
    return out;
}

/// The tensors side by side, or undefined where the layer has none.
at::Tensor catOrNone(const std::vector<at::Tensor>& parts) {
    return parts.front().defined() ? at::cat(parts, 0) : at::Tensor();
}

}  // namespace

std::string fusionProblem(const Network& model) {
    if (!dynamic_cast<const CnnImpl*>(&model) && !dynamic_cast<const MlpImpl*>(&model)) {
        return "only the built-in cnn and mlp train fused";
    }
    auto self = const_cast<Network&>(model).shared_from_this();
    std::vector<std::shared_ptr<nn::Module>> leaves;
    leavesOf(self, leaves);
    try {
        for (const auto& leaf : leaves) {
            (void)layerOf(leaf);
        }
    } catch (const std::invalid_argument& e) {
        return std::string("the model has ") + e.what();
    }
    return {};
}

FusedNetwork::FusedNetwork(std::vector<std::shared_ptr<Network>> members,
                           std::vector<at::Generator> dropout, bool channels_last)
    : members_(std::move(members)), dropout_(std::move(dropout)), channels_last_(channels_last) {
    if (members_.empty() || dropout_.size() != members_.size()) {
        throw std::invalid_argument("a fused model needs one dropout generator per member");
    }
    std::vector<std::vector<std::shared_ptr<nn::Module>>> leaves(members_.size());
    for (size_t g = 0; g < members_.size(); ++g) {
        if (std::string why = fusionProblem(*members_[g]); !why.empty()) {
            throw std::invalid_argument(why);
        }
        leavesOf(members_[g], leaves[g]);
        if (leaves[g].size() != leaves[0].size() || members_[g]->name() != members_[0]->name()) {
            throw std::invalid_argument("the members of a fused model must be alike");
        }
    }
    for (size_t i = 0; i < leaves[0].size(); ++i) {
        auto layer = std::make_shared<Layer>(layerOf(leaves[0][i]));
        for (auto& member : leaves) {
            layer->of.push_back(member[i]);
        }
        for (const auto& m : layer->of) {
            if (auto c = std::dynamic_pointer_cast<nn::Conv2dImpl>(m)) {
                layer->weights.push_back(c->weight);
                layer->biases.push_back(c->bias);
            } else if (auto b = std::dynamic_pointer_cast<nn::BatchNorm2dImpl>(m)) {
                layer->weights.push_back(b->weight);
                layer->biases.push_back(b->bias);
            } else if (auto f = std::dynamic_pointer_cast<nn::LinearImpl>(m)) {
                layer->weights.push_back(f->weight);
                layer->biases.push_back(f->bias);
            }
        }
        if (layer->kind == Kind::BatchNorm) {
            torch::NoGradGuard no_grad;
            layer->running_mean =
                at::cat(each(layer->of, &nn::BatchNorm2dImpl::running_mean), 0).contiguous();
            layer->running_var =
                at::cat(each(layer->of, &nn::BatchNorm2dImpl::running_var), 0).contiguous();
        }
        layers_.push_back(std::move(layer));
    }
}

void FusedNetwork::train(bool on) {
    training_ = on;
    for (auto& m : members_) {
        m->train(on);
    }
}

std::vector<at::Tensor> FusedNetwork::forwardEach(const at::Tensor& input) {
    return forward(std::vector<at::Tensor>(members_.size(), input));
}

std::vector<at::Tensor> FusedNetwork::forward(const std::vector<at::Tensor>& inputs) {
    const auto g = static_cast<int64_t>(members_.size());
    if (static_cast<int64_t>(inputs.size()) != g) {
        throw std::invalid_argument("a fused model takes one input per member");
    }
    at::Tensor x;
    Layout layout;
    const bool convolution_first = !layers_.empty() && layers_.front()->kind == Kind::Conv;
    if (convolution_first) {
        x = at::cat(inputs, 1);
        layout = Layout::Channels;
        if (channels_last_ && x.dim() == 4) {
            x = x.contiguous(at::MemoryFormat::ChannelsLast);
        }
    } else {
        x = at::stack(inputs, 0);
        layout = Layout::Stacked;
    }
    auto channels = [&] {
        if (layout == Layout::Stacked) {
            x = toChannels(x);
            layout = Layout::Channels;
        }
    };
    auto stacked = [&] {
        if (layout == Layout::Channels) {
            x = toStacked(x, g);
            layout = Layout::Stacked;
        }
    };
    for (const auto& l : layers_) {
        switch (l->kind) {
            case Kind::Conv: {
                channels();
                at::Tensor w = at::cat(l->weights, 0);
                if (channels_last_) {
                    w = w.contiguous(at::MemoryFormat::ChannelsLast);
                }
                const at::Tensor b = catOrNone(l->biases);
                x = at::conv2d(x, w, b, l->stride, l->padding, l->dilation, l->groups * g);
                break;
            }
            case Kind::BatchNorm: {
                channels();
                const at::Tensor w = catOrNone(l->weights);
                const at::Tensor b = catOrNone(l->biases);
                x = at::batch_norm(x, w, b, l->running_mean, l->running_var, training_, l->momentum,
                                   l->eps, at::globalContext().userEnabledCuDNN());
                break;
            }
            case Kind::Relu:
                x = at::relu(x);
                break;
            case Kind::MaxPool:
                channels();
                x = at::max_pool2d(x, l->kernel, l->stride, l->padding, l->dilation, l->ceil_mode);
                break;
            case Kind::AdaptiveAvgPool: {
                channels();
                std::vector<int64_t> size;
                for (size_t d = 0; d < l->output_size.size(); ++d) {
                    size.push_back(l->output_size[d].value_or(x.size(x.dim() - 2 + d)));
                }
                x = at::adaptive_avg_pool2d(x, size);
                break;
            }
            case Kind::Flatten:
                stacked();
                x = x.flatten(2);
                break;
            case Kind::Dropout: {
                if (!training_ || l->p <= 0) {
                    break;
                }
                stacked();
                if (l->p >= 1) {
                    x = x * at::zeros_like(x);
                    break;
                }
                // Each member's mask from its own generator, drawn as at::dropout draws
                // one on the CPU: Bernoulli(1 - p) over the member's activations, / (1 - p).
                std::vector<at::Tensor> masks;
                for (int64_t m = 0; m < g; ++m) {
                    masks.push_back(at::empty(x[m].sizes(), x.options())
                                        .bernoulli_(1 - l->p, dropout_[static_cast<size_t>(m)]));
                }
                x = x * at::stack(masks, 0).div_(1 - l->p);
                break;
            }
            case Kind::Linear: {
                stacked();
                const at::Tensor w = at::stack(l->weights, 0);
                if (l->biases.front().defined()) {
                    const at::Tensor b = at::stack(l->biases, 0);
                    x = at::baddbmm(b.unsqueeze(1), x, w.transpose(1, 2));
                } else {
                    x = at::bmm(x, w.transpose(1, 2));
                }
                break;
            }
        }
    }
    if (training_) {
        ++batches_tracked_;
    }
    stacked();
    return x.unbind(0);
}

void FusedNetwork::syncMembers() {
    torch::NoGradGuard no_grad;
    for (const auto& l : layers_) {
        if (l->kind != Kind::BatchNorm) {
            continue;
        }
        int64_t offset = 0;
        for (const auto& m : l->of) {
            auto& bn = dynamic_cast<nn::BatchNorm2dImpl&>(*m);
            const int64_t c = bn.running_mean.size(0);
            bn.running_mean.copy_(l->running_mean.narrow(0, offset, c));
            bn.running_var.copy_(l->running_var.narrow(0, offset, c));
            bn.num_batches_tracked.add_(batches_tracked_);
            offset += c;
        }
    }
    batches_tracked_ = 0;
}

}  // namespace ampbench::models
