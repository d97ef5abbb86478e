#include "core/analysis/ComparisonTable.h"

#include <cmath>

namespace ampbench::analysis {

TextTable comparisonTable(const std::vector<ArmSummary>& arms, const std::string& memory_label) {
    TextTable t({"arm", "runs", "median step", "p10\xE2\x80\x93p90", "samples/s", memory_label,
                 "val acc", "skipped", "speed-up", "memory"});
    t.alignRight({1, 2, 3, 4, 5, 6, 7, 8, 9});
    for (const auto& a : arms) {
        std::string acc = formatPercent(a.val_accuracy, 2);
        if (std::isfinite(a.val_accuracy_sd)) {
            acc += " \xC2\xB1" + formatNumber(a.val_accuracy_sd * 100.0, 2);
        }
        std::string runs = std::to_string(a.finished);
        if (a.finished != a.runs) {
            runs += "/" + std::to_string(a.runs);
        }
        // An arm with no run to take figures from shows a dash in every column.
        const std::string spread =
            std::isfinite(a.p10_step_ms) && std::isfinite(a.p90_step_ms)
                ? formatMs(a.p10_step_ms) + "\xE2\x80\x93" + formatMs(a.p90_step_ms)
                : "\xE2\x80\x93";
        t.addRow({a.arm, runs, formatMs(a.median_step_ms), spread, formatNumber(a.samples_per_s, 0),
                  formatBytes(a.peak_mem), acc,
                  a.finished > 0 ? std::to_string(a.skipped) : "\xE2\x80\x93",
                  formatRatio(a.speedup), formatRatio(a.memory_ratio)});
    }
    return t;
}

}  // namespace ampbench::analysis
