#include "core/models/Registry.h"

#include <stdexcept>

#include "core/models/ScriptedModel.h"

namespace ampbench::models {

const std::vector<ModelInfo>& modelCatalog() {
    static const std::vector<ModelInfo> catalog = {
        {"mlp", "fully connected: depth hidden layers of width units", false},
        {"cnn", "conv-BatchNorm-ReLU-pool stages, channels doubling from width", false},
        {"resnet", "ResNet (torchvision layout); blocks per stage, basic or bottleneck", false},
        {"transformer", "GPT-style decoder with LayerNorm and causal attention", true},
        {"torchscript", "your own model: a module saved with torch.jit.script (model.file)", false},
    };
    return catalog;
}

std::shared_ptr<Network> makeModel(const config::ModelSpec& spec, const data::InputShape& shape) {
    if (spec.name == "mlp") {
        return Mlp(spec, shape).ptr();
    }
    if (spec.name == "cnn") {
        return Cnn(spec, shape).ptr();
    }
    if (spec.name == "resnet") {
        return ResNet(spec, shape).ptr();
    }
    if (spec.name == "transformer") {
        if (!shape.tokens()) {
            throw std::invalid_argument("model 'transformer' needs token data (synthetic-tokens)");
        }
        return Transformer(spec, shape).ptr();
    }
    if (spec.name == "script") {
        throw std::invalid_argument(
            "model 'script' is a training script: the script trains it, once per arm and seed "
            "(`ampbench-cli run --script`, `run --config` with this spec, or the desktop's Run), "
            "not the built-in trainer");
    }
    throw std::invalid_argument("unknown model '" + spec.name +
                                "' (known: mlp, cnn, resnet, transformer, torchscript)");
}

std::shared_ptr<Network> modelFor(const config::ModelSpec& spec, const data::InputShape& shape,
                                  const c10::Device& device) {
    if (spec.name == "torchscript") {
        return loadScripted(spec.file, device);
    }
    auto model = makeModel(spec, shape);
    model->to(device);
    return model;
}

int64_t parameterCount(const torch::nn::Module& module) {
    int64_t n = 0;
    for (const auto& p : module.parameters()) {
        n += p.numel();
    }
    return n;
}

}  // namespace ampbench::models
