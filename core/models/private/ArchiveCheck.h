#pragma once
// The safety checks a TorchScript file passes before and after LibTorch loads it.
// LibTorch takes a storage's size and a tensor's extent on trust: one that reaches
// past the bytes the archive holds is read past its end (a crash) when the model is
// used or moved to a GPU. Both checks throw ModelError naming the file and the tensor.
#include <string>

#include <torch/csrc/jit/api/module.h>

namespace ampbench::models {

/// Walks the archive's pickles (constants.pkl, data.pkl) without building anything:
/// every storage they name must have its record, holding at least the bytes it
/// claims, and every tensor rebuilt over a storage must lie inside it. An archive
/// that is not a zip, or of the legacy format, is left to torch::jit::load to judge.
void checkArchive(const std::string& path, const std::string& bytes);

/// Every tensor the loaded module holds (parameters, buffers, tensor attributes, in
/// lists, dicts and tuples, of every submodule) is strided and lies inside its storage.
void checkLoadedTensors(const torch::jit::Module& module, const std::string& path);

}  // namespace ampbench::models
