#include "core/run/Numerics.h"

#include <cstdio>
#include <regex>

namespace ampbench::run {

std::string describe(const OverflowOrigin& o) {
    char scale[32];
    std::snprintf(scale, sizeof scale, "%g", o.loss_scale);
    const std::string what = o.where == "loss" || o.name.empty() ? std::string("the loss")
                                                                 : "`" + o.name + "` " + o.where;
    return "overflow first in " + what + ", " + o.dtype + ", at step " + std::to_string(o.step) +
           ", loss scale " + scale;
}

std::optional<OverflowOrigin> overflowOriginFromMessage(const std::string& message) {
    static const std::regex pattern(
        "^overflow first in (?:`([^`]*)` (output gradient|output|parameter gradient)|the loss), "
        "([A-Za-z0-9]+), at step ([0-9]+), loss scale ([^ ,;]+)");
    std::smatch m;
    if (!std::regex_search(message, m, pattern)) {
        return std::nullopt;
    }
    OverflowOrigin o;
    o.name = m[1].str();
    o.where = m[2].matched ? m[2].str() : "loss";
    o.dtype = m[3].str();
    o.step = std::stoll(m[4].str());
    try {
        o.loss_scale = std::stod(m[5].str());
    } catch (...) {
        o.loss_scale = 0.0;
    }
    return o;
}

}  // namespace ampbench::run
