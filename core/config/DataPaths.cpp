#include "core/config/DataPaths.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

namespace ampbench::config {

std::string defaultFashionMnistDir() {
    if (const char* dir = std::getenv("AMPBENCH_FASHION_MNIST"); dir && *dir) {
        return dir;
    }
    return "/usr/share/datasets/fashion-mnist";
}

bool haveFashionMnist() {
    std::error_code ec;
    return std::filesystem::exists(defaultFashionMnistDir() + "/train-images-idx3-ubyte.gz", ec);
}

namespace {

std::string lowerExtension(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext;
}

}  // namespace

std::string datasetForPath(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        return std::filesystem::exists(path + "/train-images-idx3-ubyte.gz", ec) ? "fashion-mnist"
                                                                                 : "image-folder";
    }
    const std::string ext = lowerExtension(path);
    if (ext == ".npz" || ext == ".npy") {
        return "arrays";
    }
    if (ext == ".csv") {
        return "csv";
    }
    return {};
}

bool isModelFile(const std::string& name) {
    const std::string ext = lowerExtension(name);
    return ext == ".pt" || ext == ".pth" || ext == ".ts" || name.find('/') != std::string::npos;
}

}  // namespace ampbench::config
