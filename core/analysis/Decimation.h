#pragma once
// Cutting a long curve down to what a plot of a given pixel width can show,
// without losing its envelope: min/max decimation over equal slices of x.
#include <cstddef>
#include <vector>

namespace ampbench::analysis {

/// Points of a curve in parallel arrays; x non-decreasing.
struct XYCurve {
    std::vector<double> x;
    std::vector<double> y;
};

/// A slice holding at most this many points times the bucket count is kept whole.
constexpr size_t kPointsPerBucket = 4;

/// Indices (ascending) of the points of (x, y) worth drawing when [lo, hi] of x
/// is cut into `buckets` equal slices: in each slice its first, last, lowest and
/// highest point, so spikes and the envelope stay visible, and its first
/// non-finite point, so a gap stays a gap. The last point before lo and the
/// first after hi are kept too, so lines run on to the edges. When [lo, hi]
/// holds at most kPointsPerBucket × buckets points, all of them are kept.
/// x must be non-decreasing; buckets 0 keeps every point in [lo, hi].
std::vector<size_t> decimateMinMax(const std::vector<double>& x, const std::vector<double>& y,
                                   double lo, double hi, size_t buckets);

}  // namespace ampbench::analysis
