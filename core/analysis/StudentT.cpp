#include "core/analysis/StudentT.h"

#include <cmath>
#include <limits>

#include "core/analysis/Statistics.h"

namespace ampbench::analysis {
namespace {

/// Continued fraction of the incomplete beta (modified Lentz), converges for x < (a+1)/(a+b+2).
double betaContinuedFraction(double a, double b, double x) {
    constexpr int kMaxIterations = 300;
    constexpr double kEpsilon = 1e-15;
    constexpr double kTiny = 1e-300;
    const double qab = a + b, qap = a + 1.0, qam = a - 1.0;
    double c = 1.0;
    double d = 1.0 - qab * x / qap;
    if (std::fabs(d) < kTiny) {
        d = kTiny;
    }
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= kMaxIterations; ++m) {
        const double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = std::fabs(d) < kTiny ? kTiny : d;
        c = 1.0 + aa / c;
        c = std::fabs(c) < kTiny ? kTiny : c;
        d = 1.0 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = std::fabs(d) < kTiny ? kTiny : d;
        c = 1.0 + aa / c;
        c = std::fabs(c) < kTiny ? kTiny : c;
        d = 1.0 / d;
        const double delta = d * c;
        h *= delta;
        if (std::fabs(delta - 1.0) < kEpsilon) {
            break;
        }
    }
    return h;
}

}  // namespace

double incompleteBeta(double a, double b, double x) {
    if (!(a > 0) || !(b > 0) || std::isnan(x)) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    if (x <= 0) {
        return 0.0;
    }
    if (x >= 1) {
        return 1.0;
    }
    const double log_front =
        std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
    const double front = std::exp(log_front);
    // Use the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction converges faster.
    if (x < (a + 1.0) / (a + b + 2.0)) {
        return front * betaContinuedFraction(a, b, x) / a;
    }
    return 1.0 - front * betaContinuedFraction(b, a, 1.0 - x) / b;
}

double studentTCdf(double t, double df) {
    if (std::isnan(t) || !(df > 0)) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    if (std::isinf(t)) {
        return t > 0 ? 1.0 : 0.0;
    }
    // P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2).
    const double tail = 0.5 * incompleteBeta(df / 2.0, 0.5, df / (df + t * t));
    return t >= 0 ? 1.0 - tail : tail;
}

double studentTQuantile(double p, double df) {
    double lo = -1e6, hi = 1e6;
    for (int i = 0; i < 200; ++i) {  // halves 2e6 down to the last bit
        const double mid = 0.5 * (lo + hi);
        (studentTCdf(mid, df) < p ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

WelchResult welchTest(const std::vector<double>& a, const std::vector<double>& b) {
    WelchResult r;
    if (a.size() < 2 || b.size() < 2) {
        return r;
    }
    r.valid = true;
    const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
    const double va = stddev(a) * stddev(a) / na, vb = stddev(b) * stddev(b) / nb;
    r.delta = mean(b) - mean(a);
    const double se2 = va + vb;
    if (!(se2 > 0)) {
        // No spread on either side: the means either agree exactly or they do not.
        r.t = r.delta == 0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), r.delta);
        r.df = na + nb - 2.0;
        r.p = r.delta == 0 ? 1.0 : 0.0;
        return r;
    }
    r.t = r.delta / std::sqrt(se2);
    r.df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    r.p = 2.0 * (1.0 - studentTCdf(std::fabs(r.t), r.df));
    return r;
}

}  // namespace ampbench::analysis
