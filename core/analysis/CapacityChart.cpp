#include "core/analysis/CapacityChart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/config/ExperimentSpec.h"

namespace ampbench::analysis {

CapacityChart capacityChart(const std::vector<store::BatchSearchRow>& searches) {
    std::vector<const store::BatchSearchRow*> order(searches.size());
    for (size_t i = 0; i < searches.size(); ++i) {
        order[i] = &searches[i];
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto* a, const auto* b) { return a->id < b->id; });
    CapacityChart chart;
    for (const store::BatchSearchRow* s : order) {
        auto same = std::find_if(chart.bars.begin(), chart.bars.end(),
                                 [&](const CapacityBar& b) { return b.arm == s->arm; });
        if (same == chart.bars.end()) {
            same = chart.bars.insert(chart.bars.end(), CapacityBar{});
        }
        CapacityBar& b = *same;  // a newer search of an arm replaces the older one
        b.arm = s->arm;
        b.precision = s->precision;
        b.checkpointing = s->checkpointing;
        b.max_batch = s->max_batch;
        b.safe_batch = s->safe_batch;
        b.first_failure = s->first_failure;
        b.peak_at_max = s->peak_at_max;
        b.trials = static_cast<int>(s->trials.size());
        b.status = s->status;
        b.note = s->note;
        b.search_id = s->id;
    }
    if (chart.bars.empty()) {
        return chart;
    }
    auto base = std::find_if(chart.bars.begin(), chart.bars.end(), [](const CapacityBar& b) {
        return config::precisionFromString(b.precision) == config::Precision::Fp32 &&
               !b.checkpointing;
    });
    const CapacityBar& baseline = base != chart.bars.end() ? *base : chart.bars.front();
    chart.baseline = baseline.arm;
    const int64_t reference = baseline.max_batch;
    for (CapacityBar& b : chart.bars) {
        b.ratio = b.max_batch > 0 && reference > 0
                      ? static_cast<double>(b.max_batch) / static_cast<double>(reference)
                      : std::numeric_limits<double>::quiet_NaN();
    }
    return chart;
}

}  // namespace ampbench::analysis
