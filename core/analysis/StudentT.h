#pragma once
// Student's t distribution and Welch's two-sample test, for judging whether a
// final validation gap is larger than the seed spread explains. No dependencies.
#include <vector>

namespace ampbench::analysis {

/// Regularized incomplete beta function I_x(a, b) for a, b > 0 and x in [0, 1].
double incompleteBeta(double a, double b, double x);

/// P(T <= t) for Student's t with `df` > 0 degrees of freedom (df need not be an integer).
double studentTCdf(double t, double df);
/// The t with studentTCdf(t, df) = p (0 < p < 1), by bisection.
double studentTQuantile(double p, double df);

struct WelchResult {
    bool valid = false;  ///< false when a side has fewer than two values
    double delta = 0;    ///< mean(b) - mean(a)
    double t = 0;
    double df = 0;  ///< Welch–Satterthwaite degrees of freedom
    double p = 1;   ///< two-sided
};

/// Welch's unequal-variance t-test of mean(b) against mean(a). With both
/// spreads zero, p is 1 when the means agree and 0 when they differ.
WelchResult welchTest(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace ampbench::analysis
