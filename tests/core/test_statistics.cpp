// Quantiles by selection agree with the sorted-array definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/analysis/Statistics.h"

using namespace ampbench::analysis;

namespace {

double sortedQuantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

TEST(Statistics, QuantileMatchesTheSortedDefinition) {
    std::mt19937 rng(7);
    std::normal_distribution<double> noise(20.0, 3.0);
    for (size_t n : {1u, 2u, 3u, 10u, 101u, 5000u}) {
        std::vector<double> v(n);
        for (double& x : v) {
            x = noise(rng);
        }
        v[n / 2] = v[0];  // ties
        for (double q : {0.0, 0.1, 0.25, 0.5, 0.9, 1.0}) {
            EXPECT_DOUBLE_EQ(quantile(v, q), sortedQuantile(v, q)) << "n=" << n << " q=" << q;
        }
    }
    EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
    EXPECT_EQ(median({3, 1, 2, 4}), 2.5);
    EXPECT_EQ(quantile({5, 1}, 2.0), 5.0);  // q clamped to [0, 1]
}
