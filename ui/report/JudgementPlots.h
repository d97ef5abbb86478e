#pragma once
// The two plots that show the verdict's judgement, drawn onto a QCustomPlot the
// caller owns: the report renders them into images, the GUI's verdict panel shows
// them live. One drawing for both, so the screen and the page agree.
#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/ExperimentAnalysis.h"

class QCustomPlot;

namespace ampbench::report {

/// Each arm's smoothed training loss minus the baseline's mean, divided by 2σ of the
/// baseline's seeds, over samples seen; the band (±1) shaded. Clears `plot` first.
/// False (and an empty plot) when the baseline has no noise band or no other arm has
/// a curve.
bool drawDeviation(QCustomPlot& plot, const analysis::ExperimentAnalysis& a);

/// A run still training and the evaluations it has recorded so far. The analysis
/// judges finished runs only; these are drawn beside its bands, marked as running.
struct RunningEvaluations {
    int64_t run_id = 0;
    std::string arm;
    uint64_t seed = 0;
    std::vector<run::EvalRecord> evals;  ///< in step order
};

/// The runs of `data` still running that have recorded an evaluation, in run order.
std::vector<RunningEvaluations> runningEvaluations(const analysis::ExperimentData& data);

/// The validation metric per arm as mean ± 2σ of its finished seeds (a band over
/// samples seen, or, when the runs evaluated only at the end, a mean with ±2σ bars
/// per arm), with the verdict's tolerance drawn around the baseline's final mean.
/// Each of `running` is drawn on its own, dotted with hollow markers and named
/// "(running)", never mixed into a band. Clears `plot` first. False when no
/// finished run evaluated and no running run has an evaluation.
bool drawValidation(QCustomPlot& plot, const analysis::ExperimentAnalysis& a,
                    const std::vector<RunningEvaluations>& running = {});

/// An arm's place in the experiment's spec: the index of its colour (armColor) in
/// every plot of the experiment, the report's and the GUI's alike, whichever arm is
/// the baseline.
int armIndex(const analysis::ExperimentAnalysis& a, const std::string& arm);

/// The verdict's tolerance on the final metric (a fraction for accuracy, loss units
/// otherwise), NaN when no arm was judged on it.
double verdictTolerance(const analysis::ExperimentAnalysis& a);

}  // namespace ampbench::report
