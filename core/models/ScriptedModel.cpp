#include "core/models/ScriptedModel.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <stdexcept>

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/jit/serialization/import.h>

#include "core/models/private/ArchiveCheck.h"
#include "core/run/InputFiles.h"
#include "core/util/Format.h"
#include "core/util/OutputFile.h"

namespace ampbench::models {
namespace {

/// The bytes of a model file, read once per version of the file.
struct CachedFile {
    int64_t size = -1;
    int64_t mtime_ns = -1;
    std::string bytes;
    ScriptedFile facts;
};

std::string lastName(const std::string& qualified) {
    auto dot = qualified.rfind('.');
    return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
}

std::string typeName(const torch::jit::Module& m) {
    auto type = m.type();
    return type && type->name() ? lastName(type->name()->name()) : "Module";
}

/// Modules whose result depends on train/eval mode.
bool modeDependent(const std::string& type) {
    static const char* kinds[] = {"Dropout", "BatchNorm", "InstanceNorm", "AlphaDropout",
                                  "SyncBatchNorm"};
    for (const char* k : kinds) {
        if (type.find(k) != std::string::npos) {
            return true;
        }
    }
    return false;
}

/// Whether the module's forward reads its `training` flag (a scripted Dropout does;
/// a traced one had the flag baked in as a constant).
bool readsTrainingFlag(const torch::jit::Module& m) {
    auto forward = m.find_method("forward");
    if (!forward) {
        return true;  // nothing to judge
    }
    const std::string graph = forward->graph()->toString();
    return graph.find("name=\"training\"") != std::string::npos;
}

std::vector<std::string> frozenModules(const torch::jit::Module& root) {
    std::vector<std::string> out;
    for (const auto& item : root.named_modules()) {
        const std::string type = typeName(item.value);
        if (modeDependent(type) && !readsTrainingFlag(item.value)) {
            out.push_back((item.name.empty() ? std::string("(root)") : item.name) + " (" + type +
                          ")");
        }
    }
    return out;
}

[[noreturn]] void notLoadable(const std::string& path, std::string why) {
    // The first line says what is wrong; a compiler error's ends in "here:" and its
    // next line says where.
    if (auto nl = why.find('\n'); nl != std::string::npos) {
        std::string first = why.substr(0, nl);
        if (!first.empty() && first.back() == ':') {
            auto next = why.substr(nl + 1);
            next = next.substr(0, next.find('\n'));
            next.erase(0, next.find_first_not_of(' '));
            first += " " + next;
        }
        why = first;
    }
    throw ModelError(path + ": not a TorchScript module that this LibTorch can load (" + why +
                     "); save it from Python with torch.jit.script(model).save(\"" + path + "\")");
}

torch::jit::Module loadModule(const std::string& path, const std::string& bytes,
                              const c10::Device& device) {
    std::istringstream in(bytes);
    torch::jit::Module module;
    try {
        module = torch::jit::load(in, device);
    } catch (const c10::Error& e) {
        notLoadable(path, e.what_without_backtrace());
    } catch (const std::bad_alloc&) {
        notLoadable(path, "it asks for more memory than there is");
    } catch (const std::exception& e) {
        // The importer's own errors (a class its code cannot compile) are not c10::Error.
        notLoadable(path, e.what());
    }
    checkLoadedTensors(module, path);
    return module;
}

const CachedFile& cached(const std::string& path) {
    static std::mutex mutex;  // guards files
    static std::map<std::string, CachedFile> files;
    std::string why;
    const int fd = run::openRegularFile(path, why);
    if (fd < 0) {
        throw ModelError(why);
    }
    struct Close {
        int fd;
        ~Close() { ::close(fd); }
    } close_fd{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        throw ModelError(path + ": cannot read (" + std::strerror(errno) + ")");
    }
    const int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    std::lock_guard<std::mutex> lock(mutex);
    CachedFile& entry = files[path];
    if (entry.size == static_cast<int64_t>(st.st_size) && entry.mtime_ns == mtime) {
        return entry;
    }
    CachedFile fresh;
    if (!run::readRest(fd, path, fresh.bytes, why)) {
        throw ModelError(why);
    }
    fresh.size = static_cast<int64_t>(st.st_size);
    fresh.mtime_ns = mtime;
    fresh.facts.path = path;
    fresh.facts.bytes = static_cast<int64_t>(fresh.bytes.size());
    fresh.facts.crc32 =
        static_cast<uint32_t>(::crc32(0L, reinterpret_cast<const Bytef*>(fresh.bytes.data()),
                                      static_cast<uInt>(fresh.bytes.size())));
    // Checked before any load: a storage that claims more than the archive holds is
    // read past its end as soon as it is moved or used.
    checkArchive(path, fresh.bytes);
    auto module = loadModule(path, fresh.bytes, c10::Device(c10::kCPU));
    fresh.facts.frozen = frozenModules(module);
    entry = std::move(fresh);
    return entry;
}

/// A registration name: nn::Module's names cannot hold dots ("features.0.weight").
std::string dotless(std::string name) {
    std::replace(name.begin(), name.end(), '.', '_');
    return name;
}

class ScriptedNetwork final : public Network {
  public:
    explicit ScriptedNetwork(torch::jit::Module module) : module_(std::move(module)) {
        // The module's own tensors, registered so the optimizer, parameters(),
        // buffers() and parameterCount() see them.
        for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
            register_parameter(dotless(p.name), p.value, p.value.requires_grad());
            convolutional_ = convolutional_ || p.value.dim() == 4;
        }
        for (const auto& b : module_.named_buffers(/*recurse=*/true)) {
            register_buffer(dotless(b.name), b.value);
        }
    }
    at::Tensor forward(const at::Tensor& input) override {
        c10::IValue out = module_.forward({input});
        if (!out.isTensor()) {
            throw ModelError("the model's forward returned " + out.tagKind() +
                             "; the workbench needs it to return one tensor (logits or values)");
        }
        return out.toTensor();
    }
    void train(bool on) override {
        module_.train(on);
        Network::train(on);
    }
    bool convolutional() const override { return convolutional_; }
    std::vector<Part> parts() const override {
        std::vector<Part> out;
        for (const auto& item : module_.named_modules()) {
            Part p{item.name, typeName(item.value), 0};
            for (const auto& param : item.value.parameters(/*recurse=*/false)) {
                p.parameters += param.numel();
            }
            out.push_back(std::move(p));
        }
        return out;
    }
    std::vector<std::string> parameterNames() const override {
        std::vector<std::string> out;
        for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
            out.push_back(p.name);  // dotted, as Python names them
        }
        return out;
    }
    torch::jit::Module& module() { return module_; }

  private:
    torch::jit::Module module_;
    bool convolutional_ = false;
};

}  // namespace

std::shared_ptr<Network> loadScripted(const std::string& path, const c10::Device& device) {
    if (path.empty()) {
        throw ModelError("model.file is empty: name the .pt file saved with torch.jit.script");
    }
    // Autocast must see every op: no fusion groups, no specialised graphs.
    torch::jit::setGraphExecutorOptimize(false);
    const CachedFile& file = cached(path);
    auto module = loadModule(path, file.bytes, device);
    module.train(true);
    auto net = std::make_shared<ScriptedNetwork>(std::move(module));
    if (net->parameters().empty()) {
        throw ModelError(path + ": the module has no parameters to train");
    }
    return net;
}

ScriptedFile inspectScripted(const std::string& path) {
    if (path.empty()) {
        throw ModelError("model.file is empty: name the .pt file saved with torch.jit.script");
    }
    return cached(path).facts;
}

void saveScripted(Network& model, const std::string& path) {
    auto* scripted = dynamic_cast<ScriptedNetwork*>(&model);
    if (!scripted) {
        throw std::invalid_argument("only a model loaded from a TorchScript file can be saved");
    }
    // Saved from the CPU, so it loads on a machine without the training device. The
    // run is over: moving its tensors costs nothing the run still needs.
    scripted->module().to(c10::Device(c10::kCPU));
    std::ostringstream out;
    scripted->module().save(out);
    util::writeFileAtomically(path, out.str());
}

std::string describe(const ScriptedFile& file) {
    char crc[16];
    std::snprintf(crc, sizeof crc, "%08x", file.crc32);
    return file.path + " (" + util::formatBytes(file.bytes) + ", CRC-32 " + crc + ")";
}

std::string frozenAdvice(const ScriptedFile& file) {
    if (file.frozen.empty()) {
        return {};
    }
    std::string list;
    for (size_t i = 0; i < file.frozen.size() && i < 4; ++i) {
        list += (i ? ", " : "") + file.frozen[i];
    }
    if (file.frozen.size() > 4) {
        list += " and " + std::to_string(file.frozen.size() - 4) + " more";
    }
    return file.path + " looks traced: tracing froze " + list +
           " in the mode it was traced in, so evaluation runs them as in training (and training "
           "as in evaluation if traced in eval mode); save the model with torch.jit.script for "
           "train/eval behaviour";
}

}  // namespace ampbench::models
