#pragma once
// An arm's validation metric across its seeds: mean and spread at each evaluation
// the runs share. The verdict reads it over samples seen; the live plots draw it
// on any x-axis.
#include <string>
#include <vector>

#include "core/analysis/PlotSeries.h"
#include "core/run/Records.h"

namespace ampbench::analysis {

/// An arm's validation metric: mean and standard deviation over its runs at each
/// evaluation every one of them made.
struct MetricBand {
    std::string arm;
    int runs = 0;
    std::vector<double> x;  ///< samples seen (or the x-axis asked for)
    std::vector<double> mean, sd;
};

/// Mean and sd (NaN with one run) over `runs` of the validation accuracy (or loss)
/// at each evaluation, matched by samples seen, that every run made. x is on
/// `axis`: for wall time the runs' mean time of that evaluation.
MetricBand evaluationBand(const std::string& arm,
                          const std::vector<const std::vector<run::EvalRecord>*>& runs,
                          bool accuracy, XAxis axis = XAxis::Samples);

}  // namespace ampbench::analysis
