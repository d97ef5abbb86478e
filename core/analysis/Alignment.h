#pragma once
// Do two arms' training curves agree? Curves are put on a common x of samples
// seen (accumulation changes the step count), smoothed alike, and compared in
// units of the baseline's seed-noise band. Pure functions.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/analysis/ExperimentData.h"
#include "core/analysis/StudentT.h"

namespace ampbench::analysis {

/// A figure that could not be computed (too few runs, no overlap, no evals).
inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

/// One run's training loss over samples seen: raw and smoothed.
struct RunCurve {
    int64_t run_id = 0;
    std::string arm;
    uint64_t seed = 0;
    std::vector<double> x;  ///< samples seen after each step
    std::vector<double> raw;
    std::vector<double> smooth;
};

/// Debiased exponential moving average whose horizon `tau` is counted in samples, not
/// steps, so an arm that sees 4× the samples per step is smoothed like one that does not.
/// Non-finite values pass through and do not enter the average.
std::vector<double> emaBySamples(const std::vector<double>& x, const std::vector<double>& y,
                                 double tau);

RunCurve lossCurve(const RunData& run, double tau);

/// `points` evenly spaced x from the latest start to the earliest end of the curves;
/// empty when they do not overlap.
std::vector<double> commonGrid(const std::vector<const RunCurve*>& curves, size_t points);

/// Mean of the runs' smoothed curves at each grid point (NaN where none covers it).
std::vector<double> meanCurve(const std::vector<const RunCurve*>& runs,
                              const std::vector<double>& grid);

/// The spread of the baseline's seed repeats along the grid.
struct NoiseBand {
    std::vector<double> x;
    std::vector<double> mean;
    std::vector<double> sd;         ///< per point, floored (see noiseBand); NaN with one seed
    std::vector<double> low, high;  ///< mean ∓ 2 sd
    std::vector<double> min, max;   ///< of the seeds' curves
    int seeds = 0;
    bool known() const { return seeds >= 2; }
};

/// The band of the baseline runs on the grid. A point's sd is floored at a quarter of
/// the median sd (and 0.1% of the mean) so that a moment where seeds happen to cross
/// does not make any difference look huge.
NoiseBand noiseBand(const std::vector<const RunCurve*>& baseline, const std::vector<double>& grid);

/// How far an arm's mean curve sits from the baseline's, in band units: 1 = at the
/// edge of mean ± 2 sd. Relative and progress figures need no noise estimate.
struct CurveDeviation {
    double whole_mean_abs = kUnknown;  ///< mean |arm − base| / 2sd over the grid
    double whole_max_abs = kUnknown;   ///< largest such value
    double tail_mean_abs = kUnknown;   ///< mean |arm − base| / 2sd over the last part
    double tail_signed = kUnknown;    ///< mean (arm − base) / 2sd over the last part; > 0: higher
    double outside_share = kUnknown;  ///< share of grid points outside mean ± 2 sd
    double relative_whole = kUnknown;  ///< mean |arm − base| / |base|
    double relative_tail = kUnknown;   ///< the same over the last part
    double progress_lost = kUnknown;   ///< tail gap ÷ the baseline's loss drop over the grid
    double trend_r = kUnknown;         ///< correlation of the smoothed curves' slopes
};

CurveDeviation compareCurves(const NoiseBand& band, const std::vector<double>& arm_mean,
                             double tail_fraction);

/// Pearson correlation of the point-to-point differences of two curves (NaN-safe;
/// NaN with fewer than three common points or a flat curve).
double slopeCorrelation(const std::vector<double>& a, const std::vector<double>& b);

/// Final metric of the arm's seeds against the baseline's seeds.
struct FinalGap {
    std::string metric;  ///< "val_accuracy" (higher is better), "val_loss" or "train_loss"
    std::vector<double> base, arm;
    double base_mean = kUnknown, base_sd = kUnknown, arm_mean = kUnknown, arm_sd = kUnknown;
    double delta = kUnknown;   ///< arm − base
    double units = kUnknown;   ///< |delta| / 2 sd of the baseline; NaN when sd is unknown
    WelchResult welch;         ///< when both sides have two or more seeds
    bool significant = false;  ///< beyond 2 sd and, where Welch applies, p < 0.05
};

/// `sd_floor` keeps a zero spread (e.g. identical accuracies on a small eval set)
/// from turning any gap into infinitely many units.
FinalGap finalGap(std::string metric, std::vector<double> base, std::vector<double> arm,
                  double sd_floor);

}  // namespace ampbench::analysis
