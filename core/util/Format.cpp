#include "core/util/Format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace ampbench::util {

std::string formatBytes(int64_t bytes) {
    if (bytes <= 0) {
        return "\xE2\x80\x93";  // en dash
    }
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf,
                  u == 0 ? "%.0f %s" : (v < 10 ? "%.2f %s" : (v < 100 ? "%.1f %s" : "%.0f %s")), v,
                  units[u]);
    return buf;
}

std::string roughDuration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) {
        return "\xE2\x80\x94";  // an em dash
    }
    char buf[48];
    if (seconds < 57.5) {
        std::snprintf(buf, sizeof buf, "%ld s", std::max(5L, std::lround(seconds / 5.0) * 5));
    } else if (seconds < 3570) {
        std::snprintf(buf, sizeof buf, "%ld min", std::max(1L, std::lround(seconds / 60.0)));
    } else {
        const long m = std::lround(seconds / 60.0);
        std::snprintf(buf, sizeof buf, "%ld h %ld min", m / 60, m % 60);
    }
    return buf;
}

std::string utcNowText() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

}  // namespace ampbench::util
