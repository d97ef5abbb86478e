#include "core/analysis/MemoryMeasure.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/config/Placement.h"

namespace ampbench::analysis {

MemoryMeasure memoryMeasure(const std::string& env_json) {
    const auto env = nlohmann::json::parse(env_json, nullptr, false);
    if (!env.is_object()) {
        return MemoryMeasure::Resident;
    }
    const auto text = [&](const char* key) {
        const auto it = env.find(key);
        return it != env.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string said = text("memory");
    if (said == "tensors") {
        return MemoryMeasure::Tensors;
    }
    if (said == "allocator") {
        return MemoryMeasure::Allocator;
    }
    if (said == "resident") {
        return MemoryMeasure::Resident;
    }
    return config::onCuda(text("device")) ? MemoryMeasure::Allocator : MemoryMeasure::Resident;
}

std::string memoryLabel(const std::vector<MemoryMeasure>& measures) {
    if (measures.empty()) {
        return "peak memory";
    }
    if (std::any_of(measures.begin(), measures.end(),
                    [&](MemoryMeasure m) { return m != measures.front(); })) {
        return "peak memory";
    }
    switch (measures.front()) {
        case MemoryMeasure::Allocator:
            return "peak allocated";
        case MemoryMeasure::Tensors:
            return "peak in tensors";
        case MemoryMeasure::Resident:
            return "peak RSS";
    }
    return "peak memory";
}

}  // namespace ampbench::analysis
