#pragma once
// What the record-stream tests share: doubles compared bit for bit (NaN with NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace ampbench::test {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

inline bool sameBits(double a, double b) {
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b);
    return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace ampbench::test

#define EXPECT_BITS(a, b) \
    EXPECT_TRUE(::ampbench::test::sameBits((a), (b))) << #a << " = " << (a) << ", " << (b)
