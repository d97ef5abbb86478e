#include "core/config/DataPaths.h"

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

}  // namespace ampbench::config
