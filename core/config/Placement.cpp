#include "core/config/Placement.h"

#include <cctype>

namespace ampbench::config {

Placement Placement::parse(const std::string& device) {
    // "cuda", or "cuda:" followed by the index in digits (a malformed index: the first).
    if (device.compare(0, 4, "cuda") != 0 || (device.size() > 4 && device[4] != ':')) {
        return cpu();
    }
    if (device.size() <= 5 || device.size() > 14) {
        return cuda();
    }
    int index = 0;
    for (size_t i = 5; i < device.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(device[i]))) {
            return cuda();
        }
        index = index * 10 + (device[i] - '0');
    }
    return cuda(index);
}

std::string Placement::str() const {
    return isCuda() ? "cuda:" + std::to_string(gpu) : std::string("cpu");
}

Placement Placement::onGpu(int first_gpu) const {
    Placement p = *this;
    if (p.isCuda()) {
        p.gpu = first_gpu;
    }
    return p;
}

}  // namespace ampbench::config
