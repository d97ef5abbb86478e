// The words the findings' sentences share: numbers, counts and plurals, the metric and
// the baseline a finding speaks of, and the two longest sentences (time to target, final
// metric).
#include "core/analysis/private/FindingWords.h"

#include <cmath>

#include "core/analysis/Format.h"

namespace ampbench::analysis::detail {

std::string num(double v, int decimals) {
    return formatNumber(v, decimals);
}

std::string signedNum(double v, int decimals) {
    if (!std::isfinite(v)) {
        return formatNumber(v, decimals);
    }
    return (v < 0 ? std::string(kMinus) : std::string("+")) + formatNumber(std::fabs(v), decimals);
}

/// "0.00012" or "65536": loss scales span many decades.
std::string scaleText(double v) {
    if (!std::isfinite(v)) {
        return formatNumber(v, 0);
    }
    return v >= 1 ? formatNumber(v, 0) : formatNumber(v, 6);
}

/// Four significant digits: an FP8 scale is no round number ("12.5", "3712", "1.2e+06").
std::string significant(double v) {
    return formatSignificant(v, 4);
}

std::string count(double v) {
    return std::to_string(static_cast<long long>(v));
}

std::string plural(double n, const char* word) {
    return count(n) + " " + word + (n == 1 ? "" : "s");
}

/// "seed 2", "seeds 1, 3": `n` seeds listed in `seeds`.
std::string seedList(double n, const std::string& seeds) {
    return (n == 1 ? "seed " : "seeds ") + seeds;
}

/// The metric a finding speaks of: "accuracy" 1 → validation accuracy in points,
/// else a loss.
std::string metricName(const Finding& f) {
    return f.value(FindingKey::Accuracy) != 0 ? "validation accuracy" : "loss";
}
std::string metricAmount(const Finding& f, double v) {
    return f.value(FindingKey::Accuracy) != 0 ? num(v * 100.0, 2) + " points" : num(v, 4);
}
std::string metricGap(const Finding& f) {
    return metricAmount(f, std::fabs(f.value(FindingKey::Delta)));
}

std::string baseline(const Finding& f) {
    return f.name(FindingKey::Baseline);
}

/// Where a curve sits against the baseline's.
const char* side(const Finding& f) {
    return f.value(FindingKey::Above) != 0 ? "above" : "below";
}

std::string timeToTarget(const Finding& f) {
    const bool acc = f.value(FindingKey::Accuracy) != 0;
    const std::string target =
        acc ? formatPercent(f.value(FindingKey::Target), 2) : num(f.value(FindingKey::Target), 4);
    const std::string what = std::string("time to the baseline's final ") +
                             (acc ? "accuracy " : "validation loss ") + target + ": ";
    if (f.value(FindingKey::Reached) == 0) {
        return what + "not reached by any of " + count(f.value(FindingKey::Runs)) + " runs";
    }
    std::string text = what + formatMs(f.value(FindingKey::WallS) * 1000) + " and " +
                       count(f.value(FindingKey::Samples)) + " samples";
    if (std::isfinite(f.value(FindingKey::BaseWallS))) {
        text += " (baseline " + formatMs(f.value(FindingKey::BaseWallS) * 1000) + ", " +
                count(f.value(FindingKey::BaseSamples)) + " samples";
        if (f.value(FindingKey::BaseWallS) > 0) {
            text += "; " + num(f.value(FindingKey::BaseWallS) / f.value(FindingKey::WallS), 2) +
                    kTimes + " as fast to the target";
        }
        text += ")";
    }
    if (f.value(FindingKey::Reached) < f.value(FindingKey::Runs)) {
        text += "; " + count(f.value(FindingKey::Reached)) + " of " +
                count(f.value(FindingKey::Runs)) + " runs reached it";
    }
    return text;
}

std::string finalMetric(const Finding& f) {
    const std::string base = f.name(FindingKey::Baseline);
    const bool acc = f.value(FindingKey::Accuracy) != 0;
    const double scale = acc ? 100.0 : 1.0;
    const int dec = acc ? 2 : 4;
    std::string text =
        acc ? "final validation accuracy " + formatPercent(f.value(FindingKey::Arm), 2) + " vs " +
                  formatPercent(f.value(FindingKey::Base), 2) + " for " + base
            : std::string(f.value(FindingKey::ValidationLoss) == 1 ? "final validation loss "
                                                                   : "final training loss ") +
                  num(f.value(FindingKey::Arm), 4) + " vs " + num(f.value(FindingKey::Base), 4) +
                  " for " + base;
    text += std::string(" (") + kDelta + " " + signedNum(f.value(FindingKey::Delta) * scale, dec) +
            (acc ? " points" : "");
    if (std::isfinite(f.value(FindingKey::BaseSd))) {
        text +=
            std::string(", seed ") + kSigma + " " + num(f.value(FindingKey::BaseSd) * scale, dec);
    }
    if (std::isfinite(f.value(FindingKey::WelchP))) {
        text += ", Welch p = " + num(f.value(FindingKey::WelchP), 3);
    } else if (std::isfinite(f.value(FindingKey::Units))) {
        text += ", " + num(f.value(FindingKey::Units), 2) + " " + kTimes + " 2" + kSigma;
    }
    text += ")";
    if (f.value(FindingKey::Judged) != 0) {
        text += f.value(FindingKey::Significant) != 0 ? ": beyond the seed spread"
                                                      : ": within the seed spread";
    }
    return text;
}

}  // namespace ampbench::analysis::detail
