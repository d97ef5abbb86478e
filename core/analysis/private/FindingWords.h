#pragma once
// Private to analysis/: the words the findings' sentences share (numbers, counts, the
// metric and the baseline a finding speaks of), written in FindingWords.cpp.
#include <string>

#include "core/analysis/Finding.h"

namespace ampbench::analysis::detail {

inline constexpr const char* kMinus = "\xE2\x88\x92";  // U+2212, reads better than '-' in prose
inline constexpr const char* kSigma = "\xCF\x83";
inline constexpr const char* kDelta = "\xCE\x94";
inline constexpr const char* kTimes = "\xC3\x97";

std::string num(double v, int decimals);
std::string signedNum(double v, int decimals);
/// "0.00012" or "65536": loss scales span many decades.
std::string scaleText(double v);
/// Four significant digits: an FP8 scale is no round number ("12.5", "3712", "1.2e+06").
std::string significant(double v);
std::string count(double v);
std::string plural(double n, const char* word);
/// "seed 2", "seeds 1, 3": `n` seeds listed in `seeds`.
std::string seedList(double n, const std::string& seeds);

/// The metric a finding speaks of: "accuracy" 1 → validation accuracy in points,
/// else a loss.
std::string metricName(const Finding& f);
std::string metricAmount(const Finding& f, double v);
std::string metricGap(const Finding& f);

std::string baseline(const Finding& f);
/// Where a curve sits against the baseline's.
const char* side(const Finding& f);

/// The sentences of TimeToTarget and FinalMetric.
std::string timeToTarget(const Finding& f);
std::string finalMetric(const Finding& f);

}  // namespace ampbench::analysis::detail
