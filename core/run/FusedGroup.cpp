#include "core/run/FusedGroup.h"

#include <cmath>
#include <string>

namespace ampbench::run {
namespace {
/// The message's fixed opening: what fusedGroupOf recognises (in databases of every
/// version that fused seeds).
const std::string kOpening = "fused seeds: trained as one model with the runs of seeds ";
}  // namespace

EventRecord fusedSeedsEvent(const std::vector<uint64_t>& seeds) {
    std::string list;
    for (uint64_t seed : seeds) {
        list += (list.empty() ? "" : ", ") + std::to_string(seed);
    }
    return {0, EventKind::Info,
            kOpening + list +
                " (grouped convolutions, batched linear layers); this run keeps its own data "
                "order, initial weights, dropout, BatchNorm statistics, loss scale and optimizer "
                "state; its step times are those of the fused step of all " +
                std::to_string(seeds.size()),
            static_cast<double>(seeds.size())};
}

int fusedGroupOf(const EventRecord& event) {
    if (event.kind != EventKind::Info || event.message.rfind(kOpening, 0) != 0 ||
        !std::isfinite(event.value) || event.value < 1 || event.value > 1e6 ||
        event.value != std::floor(event.value)) {
        return 0;
    }
    return static_cast<int>(event.value);
}

int fusedGroupSize(const std::vector<EventRecord>& events) {
    for (const auto& e : events) {
        if (const int n = fusedGroupOf(e); n > 0) {
            return n;
        }
    }
    return 1;
}

}  // namespace ampbench::run
