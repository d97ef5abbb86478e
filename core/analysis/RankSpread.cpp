#include "core/analysis/RankSpread.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ampbench::analysis {

RankStepTimes rankStepTimes(const std::vector<run::EventRecord>& events) {
    RankStepTimes out;
    for (const auto& e : events) {
        int rank = -1;
        int used = 0;
        // The summary's sentence (parallel::describe(RankSummary)) opens with the rank.
        if (e.kind != run::EventKind::Info ||
            std::sscanf(e.message.c_str(), "rank %d: median step%n", &rank, &used) != 1 ||
            used == 0 || rank < 0 || !std::isfinite(e.value)) {
            continue;
        }
        out.ranks.push_back(rank);
        out.median_ms.push_back(e.value);
    }
    if (out.ranks.size() < 2) {
        return {};  // one rank: nothing spread
    }
    out.min_ms = *std::min_element(out.median_ms.begin(), out.median_ms.end());
    out.max_ms = *std::max_element(out.median_ms.begin(), out.median_ms.end());
    return out;
}

}  // namespace ampbench::analysis
