#include "core/analysis/IslandCost.h"

#include <cmath>

namespace ampbench::analysis {
namespace {

bool sameButIslands(const config::ArmSpec& a, const config::ArmSpec& b) {
    return a.precision == b.precision && a.accumulation == b.accumulation &&
           a.loss_scaling == b.loss_scaling && a.checkpointing == b.checkpointing &&
           a.channels_last == b.channels_last && a.cuda_graph == b.cuda_graph && a.ranks == b.ranks;
}

const ArmSummary* summaryOf(const ExperimentAnalysis& a, const std::string& arm) {
    for (const auto& s : a.arms) {
        if (s.arm == arm) {
            return &s;
        }
    }
    return nullptr;
}

}  // namespace

std::vector<IslandCost> islandCosts(const config::ExperimentSpec& spec,
                                    const ExperimentAnalysis& analysis) {
    std::vector<IslandCost> out;
    for (const auto& arm : spec.arms) {
        if (arm.fp32_modules.find_first_not_of(" \t;,") == std::string::npos) {
            continue;
        }
        IslandCost c;
        c.arm = arm.name;
        c.modules = arm.fp32_modules;
        const ArmSummary* mine = summaryOf(analysis, arm.name);
        for (const auto& other : spec.arms) {
            if (other.fp32_modules.find_first_not_of(" \t;,") == std::string::npos &&
                sameButIslands(arm, other)) {
                c.plain = other.name;
                break;
            }
        }
        const ArmSummary* plain = c.plain.empty() ? nullptr : summaryOf(analysis, c.plain);
        c.step_ratio = c.memory_ratio = NAN;
        if (mine) {
            c.median_step_ms = mine->median_step_ms;
            c.peak_mem = mine->peak_mem;
        }
        if (mine && plain) {
            c.plain_median_step_ms = plain->median_step_ms;
            c.plain_peak_mem = plain->peak_mem;
            if (plain->ms_per_sample > 0) {
                c.step_ratio = mine->ms_per_sample / plain->ms_per_sample;
            }
            if (plain->peak_mem > 0) {
                c.memory_ratio =
                    static_cast<double>(mine->peak_mem) / static_cast<double>(plain->peak_mem);
            }
        }
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace ampbench::analysis
