#include "core/analysis/MetricBand.h"

#include <limits>
#include <map>

#include "core/analysis/Statistics.h"

namespace ampbench::analysis {

MetricBand evaluationBand(const std::string& arm,
                          const std::vector<const std::vector<run::EvalRecord>*>& runs,
                          bool accuracy, XAxis axis) {
    struct At {
        std::vector<double> values;
        double x = 0;
    };
    MetricBand b;
    b.arm = arm;
    b.runs = static_cast<int>(runs.size());
    std::map<int64_t, At> at;
    for (const auto* evals : runs) {
        const std::vector<double> xs = evalXs(*evals, axis);
        for (size_t i = 0; i < evals->size(); ++i) {
            const run::EvalRecord& e = (*evals)[i];
            At& a = at[e.samples];
            a.values.push_back(accuracy ? e.val_accuracy : e.val_loss);
            a.x += xs[i];
        }
    }
    for (const auto& [samples, a] : at) {
        if (a.values.size() != runs.size()) {
            continue;
        }
        b.x.push_back(a.x / static_cast<double>(a.values.size()));
        b.mean.push_back(mean(a.values));
        b.sd.push_back(a.values.size() > 1 ? stddev(a.values)
                                           : std::numeric_limits<double>::quiet_NaN());
    }
    return b;
}

}  // namespace ampbench::analysis
