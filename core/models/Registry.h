#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/models/Models.h"

namespace ampbench::models {

struct ModelInfo {
    std::string name;
    std::string description;
    bool tokens;  ///< expects token data
};
const std::vector<ModelInfo>& modelCatalog();

/// Builds a model for the input; throws std::invalid_argument for an unknown name.
std::shared_ptr<Network> makeModel(const config::ModelSpec& spec, const data::InputShape& shape);

/// The model a run trains, on `device`: a built-in one (initialised from the current
/// seed) or a copy of the model file's module (ModelError when it cannot be read).
std::shared_ptr<Network> modelFor(const config::ModelSpec& spec, const data::InputShape& shape,
                                  const c10::Device& device);

int64_t parameterCount(const torch::nn::Module& module);

}  // namespace ampbench::models
