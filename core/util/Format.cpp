#include "core/util/Format.h"

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

std::string utcNowText() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

}  // namespace ampbench::util
