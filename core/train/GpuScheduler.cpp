#include "core/train/GpuScheduler.h"

#include <algorithm>

namespace ampbench::train {

GpuScheduler::GpuScheduler(int gpus, int runs_per_gpu)
    : per_gpu_(std::max(1, runs_per_gpu)), load_(static_cast<size_t>(std::max(1, gpus)), 0) {}

std::optional<int> GpuScheduler::place(int64_t run, int ranks) {
    ranks = std::max(1, ranks);
    const int n = gpus();
    std::optional<int> best;
    int best_load = 0;
    for (int first = 0; first + ranks <= n; ++first) {
        int block_load = 0;
        bool fits = true;
        for (int g = first; g < first + ranks; ++g) {
            fits = fits && load_[static_cast<size_t>(g)] < per_gpu_;
            block_load = std::max(block_load, load_[static_cast<size_t>(g)]);
        }
        if (fits && (!best || block_load < best_load)) {
            best = first;
            best_load = block_load;
        }
    }
    if (!best) {
        return std::nullopt;
    }
    Active a{*best, ranks, best_load > 0};
    for (auto& [id, other] : active_) {
        const bool overlap = other.first < a.first + a.ranks && a.first < other.first + other.ranks;
        if (overlap) {
            other.shared = true;
            a.shared = true;
        }
    }
    for (int g = a.first; g < a.first + a.ranks; ++g) {
        ++load_[static_cast<size_t>(g)];
    }
    active_[run] = a;
    return best;
}

void GpuScheduler::finish(int64_t run) {
    const auto it = active_.find(run);
    if (it == active_.end()) {
        return;
    }
    for (int g = it->second.first; g < it->second.first + it->second.ranks; ++g) {
        --load_[static_cast<size_t>(g)];
    }
    ended_shared_[run] = it->second.shared;
    active_.erase(it);
}

bool GpuScheduler::shared(int64_t run) const {
    if (const auto it = active_.find(run); it != active_.end()) {
        return it->second.shared;
    }
    const auto it = ended_shared_.find(run);
    return it != ended_shared_.end() && it->second;
}

}  // namespace ampbench::train
