#pragma once
// Figures as text where the engine reports them (a saved model's size, a memory
// budget); analysis/Format.h has the rest of the formatting for tables and reports.
#include <cstdint>
#include <string>

namespace ampbench::util {

std::string formatBytes(int64_t bytes);  ///< "1.23 GiB", "512 KiB"; "–" for 0
/// A time as a person estimates it: "40 s" (to 5 s), "3 min", "1 h 10 min"; "—" for
/// NaN or a negative time.
std::string roughDuration(double seconds);
/// Now as ISO-8601 UTC to the second: "2026-12-02T01:41:33Z".
std::string utcNowText();

}  // namespace ampbench::util
