// Min/max decimation of long curves for plotting: what survives, what is cut.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/analysis/Decimation.h"

using namespace ampbench::analysis;

namespace {

XYCurve ramp(size_t n) {
    XYCurve c;
    for (size_t i = 0; i < n; ++i) {
        c.x.push_back(static_cast<double>(i));
        c.y.push_back(std::sin(static_cast<double>(i) * 0.37));
    }
    return c;
}

}  // namespace

TEST(Decimation, ShortSliceIsKeptWhole) {
    const XYCurve c = ramp(40);
    const auto kept = decimateMinMax(c.x, c.y, 0, 39, 100);
    ASSERT_EQ(kept.size(), 40u);
    EXPECT_EQ(kept.front(), 0u);
    EXPECT_EQ(kept.back(), 39u);
}

TEST(Decimation, LongCurveIsCutToAFewPointsPerBucket) {
    const XYCurve c = ramp(100000);
    const auto kept = decimateMinMax(c.x, c.y, 0, 99999, 500);
    EXPECT_LE(kept.size(), 4u * 500u);
    EXPECT_GE(kept.size(), 2u * 500u);
    EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
    EXPECT_EQ(std::adjacent_find(kept.begin(), kept.end()), kept.end());  // no duplicates
    EXPECT_EQ(kept.front(), 0u);
    EXPECT_EQ(kept.back(), 99999u);
}

TEST(Decimation, SpikesSurvive) {
    XYCurve c = ramp(100000);
    c.y[31337] = 50.0;
    c.y[77777] = -50.0;
    const auto kept = decimateMinMax(c.x, c.y, 0, 99999, 300);
    EXPECT_NE(std::find(kept.begin(), kept.end(), 31337u), kept.end());
    EXPECT_NE(std::find(kept.begin(), kept.end(), 77777u), kept.end());
    // The envelope of every bucket is kept: min and max over the kept points match.
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i : kept) {
        lo = std::min(lo, c.y[i]);
        hi = std::max(hi, c.y[i]);
    }
    EXPECT_EQ(lo, -50.0);
    EXPECT_EQ(hi, 50.0);
}

TEST(Decimation, GapsStayGaps) {
    XYCurve c = ramp(100000);
    for (size_t i = 50000; i < 50010; ++i) {
        c.y[i] = std::numeric_limits<double>::quiet_NaN();
    }
    const auto kept = decimateMinMax(c.x, c.y, 0, 99999, 200);
    size_t nans = 0;
    for (size_t i : kept) {
        nans += std::isnan(c.y[i]) ? 1 : 0;
    }
    EXPECT_GE(nans, 1u);
}

TEST(Decimation, VisibleRangeKeepsOneNeighbourEachSide) {
    const XYCurve c = ramp(100000);
    const auto kept = decimateMinMax(c.x, c.y, 1000.5, 2000.5, 100);
    ASSERT_FALSE(kept.empty());
    EXPECT_EQ(kept.front(), 1000u);  // last point before the range
    EXPECT_EQ(kept.back(), 2001u);   // first point after it
    for (size_t k = 1; k + 1 < kept.size(); ++k) {
        EXPECT_GE(c.x[kept[k]], 1000.5);
        EXPECT_LE(c.x[kept[k]], 2000.5);
    }
    EXPECT_LE(kept.size(), 4u * 100u + 2u);
}

TEST(Decimation, EdgeCases) {
    XYCurve empty;
    EXPECT_TRUE(decimateMinMax(empty.x, empty.y, 0, 1, 10).empty());
    const XYCurve c = ramp(1000);
    EXPECT_TRUE(decimateMinMax(c.x, c.y, 5, 4, 10).empty());       // inverted range
    EXPECT_EQ(decimateMinMax(c.x, c.y, 0, 999, 0).size(), 1000u);  // no buckets: all
    // Every x equal: one bucket, its first, last, min and max.
    XYCurve flat;
    flat.x.assign(1000, 3.0);
    for (int i = 0; i < 1000; ++i) {
        flat.y.push_back(i == 500 ? 9.0 : 1.0);
    }
    const auto kept = decimateMinMax(flat.x, flat.y, 3.0, 3.0, 10);
    EXPECT_LE(kept.size(), 4u);
    EXPECT_NE(std::find(kept.begin(), kept.end(), 500u), kept.end());
}
