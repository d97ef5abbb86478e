#include "core/analysis/Decimation.h"

#include <algorithm>
#include <cmath>

namespace ampbench::analysis {
namespace {

/// The points one slice keeps; npos where the slice has none of that kind.
struct Bucket {
    static constexpr size_t npos = static_cast<size_t>(-1);
    size_t first = npos, last = npos, low = npos, high = npos, gap = npos;

    void add(size_t i, double v) {
        if (first == npos) {
            first = i;
        }
        last = i;
        if (!std::isfinite(v)) {
            gap = gap == npos ? i : gap;
            return;
        }
        if (low == npos || v < lowValue) {
            low = i;
            lowValue = v;
        }
        if (high == npos || v > highValue) {
            high = i;
            highValue = v;
        }
    }
    void flush(std::vector<size_t>& out) {
        size_t kept[5] = {first, last, low, high, gap};
        std::sort(std::begin(kept), std::end(kept));
        for (size_t i : kept) {
            if (i != npos && (out.empty() || out.back() != i)) {
                out.push_back(i);
            }
        }
        *this = Bucket{};
    }

    double lowValue = 0, highValue = 0;
};

}  // namespace

std::vector<size_t> decimateMinMax(const std::vector<double>& x, const std::vector<double>& y,
                                   double lo, double hi, size_t buckets) {
    std::vector<size_t> out;
    const size_t n = std::min(x.size(), y.size());
    if (n == 0 || !(hi >= lo)) {
        return out;
    }
    const auto xEnd = x.begin() + static_cast<std::ptrdiff_t>(n);
    const size_t begin = static_cast<size_t>(std::lower_bound(x.begin(), xEnd, lo) - x.begin());
    const size_t end = static_cast<size_t>(std::upper_bound(x.begin(), xEnd, hi) - x.begin());
    if (begin > 0) {
        out.push_back(begin - 1);
    }
    if (buckets == 0 || end - begin <= kPointsPerBucket * buckets) {
        for (size_t i = begin; i < end; ++i) {
            out.push_back(i);
        }
    } else {
        const double width = (hi - lo) / static_cast<double>(buckets);
        Bucket bucket;
        size_t current = 0;
        for (size_t i = begin; i < end; ++i) {
            const size_t b =
                width > 0 ? std::min(buckets - 1, static_cast<size_t>((x[i] - lo) / width)) : 0;
            if (b != current) {
                bucket.flush(out);
                current = b;
            }
            bucket.add(i, y[i]);
        }
        bucket.flush(out);
    }
    if (end < n) {
        out.push_back(end);
    }
    return out;
}

}  // namespace ampbench::analysis
