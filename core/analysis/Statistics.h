#pragma once
// Small, pure statistics used by summaries, verdicts and plots.
#include <cstddef>
#include <vector>

namespace ampbench::analysis {

double mean(const std::vector<double>& v);    ///< NaN when empty
double stddev(const std::vector<double>& v);  ///< sample (n-1); NaN when n < 2
double median(std::vector<double> v);         ///< NaN when empty
/// Linear-interpolated quantile (q in [0,1]), as numpy's default; NaN when empty.
double quantile(std::vector<double> v, double q);

/// Exponential moving average with PyTorch/TensorBoard-style debiasing:
/// alpha = smoothing weight in [0,1) (0 = raw). Non-finite inputs are carried through.
std::vector<double> ema(const std::vector<double>& v, double alpha);

/// Piecewise-linear resampling of (x, y) onto grid; points outside x's range are NaN.
/// x must be increasing.
std::vector<double> resample(const std::vector<double>& x, const std::vector<double>& y,
                             const std::vector<double>& grid);

/// Percentile bootstrap-free confidence interval of a ratio of medians, using the
/// distribution-free order-statistic interval of each median (95%).
struct Interval {
    double low = 0, high = 0;
};
Interval medianInterval(std::vector<double> v, double confidence = 0.95);

}  // namespace ampbench::analysis
