#include "core/run/NumberFormat.h"

#include <cmath>
#include <cstdio>

#include "core/config/PrecisionFormats.h"

namespace ampbench::run {

const std::vector<NumberFormat>& numberFormats() {
    static const std::vector<NumberFormat> all = {kE4m3, kE5m2, kFp16, kBf16, kFp32};
    return all;
}

std::optional<NumberFormat> numberFormatNamed(const std::string& name) {
    for (const auto& f : numberFormats()) {
        if (name == f.name) {
            return f;
        }
    }
    return std::nullopt;
}

std::string numberFormatNames() {
    std::string out;
    for (const auto& f : numberFormats()) {
        out += (out.empty() ? "" : ", ") + std::string(f.name);
    }
    return out;
}

const NumberFormat& formatOfArm(config::Precision precision) {
    const std::string name = config::formatOf(precision).numerics_in;
    for (const auto& f : numberFormats()) {
        if (name == f.name) {
            return f;
        }
    }
    return kFp16;
}

std::string powerOfTwoText(double value) {
    int exponent = 0;
    if (value > 0 && std::isfinite(value) && std::frexp(value, &exponent) == 0.5) {
        return "2^" + std::to_string(exponent - 1);
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", value);
    return buf;
}

std::string describe(const NumberFormat& format) {
    char largest[32];
    std::snprintf(largest, sizeof largest, "%g", format.largest);
    return std::string(format.name) + " (largest " + largest + ", smallest normal " +
           powerOfTwoText(format.smallest_normal) + ", subnormal " +
           powerOfTwoText(format.smallest_subnormal) + ")";
}

}  // namespace ampbench::run
