#include "core/analysis/ScaleHistory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "core/analysis/Format.h"

namespace ampbench::analysis {

CastRole castRoleOf(const std::string& name) {
    const size_t colon = name.rfind(':');
    const std::string part = colon == std::string::npos ? std::string() : name.substr(colon + 1);
    if (part == "input") {
        return CastRole::Input;
    }
    if (part == "weight") {
        return CastRole::Weight;
    }
    if (part == "grad_output") {
        return CastRole::GradOutput;
    }
    return CastRole::Other;
}

const char* castRoleName(CastRole role) {
    switch (role) {
        case CastRole::Input:
            return "input";
        case CastRole::Weight:
            return "weight";
        case CastRole::GradOutput:
            return "grad_output";
        case CastRole::Other:
            return "other";
    }
    return "other";
}

ScaleHistory scaleHistory(const std::vector<run::NumericsRecord>& rows) {
    ScaleHistory h;
    std::vector<const run::NumericsRecord*> casts;
    for (const auto& r : rows) {
        if (r.kind == run::NumericsKind::Cast) {
            casts.push_back(&r);
            h.steps.push_back(r.step);
        }
    }
    std::sort(h.steps.begin(), h.steps.end());
    h.steps.erase(std::unique(h.steps.begin(), h.steps.end()), h.steps.end());
    // Curves by role, then name: each role's tensors together, as the bands are.
    std::map<std::tuple<int, std::string>, size_t> index;
    for (const auto* r : casts) {
        index.emplace(std::make_tuple(static_cast<int>(castRoleOf(r->name)), r->name), 0);
    }
    for (auto& [key, i] : index) {
        i = h.curves.size();
        ScaleCurve c;
        c.name = std::get<1>(key);
        c.role = static_cast<CastRole>(std::get<0>(key));
        c.log2_scale.assign(h.steps.size(), NAN);
        c.saturated.assign(h.steps.size(), NAN);
        h.curves.push_back(std::move(c));
    }
    for (const auto* r : casts) {
        ScaleCurve& c =
            h.curves[index.at(std::make_tuple(static_cast<int>(castRoleOf(r->name)), r->name))];
        const size_t col = static_cast<size_t>(
            std::lower_bound(h.steps.begin(), h.steps.end(), r->step) - h.steps.begin());
        // log2 of zero, a negative or a non-finite scale is no point on the axis.
        c.log2_scale[col] = std::isfinite(r->scale) && r->scale > 0 ? std::log2(r->scale) : NAN;
        c.saturated[col] = r->saturated;
        c.format = r->format;
    }
    for (size_t i = 0; i < h.curves.size(); ++i) {
        ScaleCurve& c = h.curves[i];
        for (size_t col = 0; col < h.steps.size(); ++col) {
            if (c.saturated[col] > 0) {  // NaN (not observed) is not
                ++c.saturated_steps;
                c.max_saturated = std::max(c.max_saturated, c.saturated[col]);
                if (c.first_saturated_step == 0) {
                    c.first_saturated_step = h.steps[col];
                }
            }
        }
        if (c.saturated_steps > 0) {
            h.saturated.push_back(i);
        }
    }
    std::stable_sort(h.saturated.begin(), h.saturated.end(), [&](size_t a, size_t b) {
        const auto& x = h.curves[a];
        const auto& y = h.curves[b];
        return std::make_tuple(-x.max_saturated, -x.saturated_steps, x.name) <
               std::make_tuple(-y.max_saturated, -y.saturated_steps, y.name);
    });
    for (const CastRole role :
         {CastRole::Input, CastRole::Weight, CastRole::GradOutput, CastRole::Other}) {
        ScaleBand band;
        band.role = role;
        std::vector<size_t> members;
        for (size_t i = 0; i < h.curves.size(); ++i) {
            if (h.curves[i].role == role) {
                members.push_back(i);
            }
        }
        if (members.empty()) {
            continue;
        }
        band.tensors = members.size();
        const size_t n = h.steps.size();
        band.median.assign(n, NAN);
        band.min.assign(n, NAN);
        band.max.assign(n, NAN);
        band.min_curve.assign(n, 0);
        band.max_curve.assign(n, 0);
        for (size_t col = 0; col < n; ++col) {
            std::vector<double> values;
            for (size_t i : members) {
                const double v = h.curves[i].log2_scale[col];
                if (std::isnan(v)) {
                    continue;
                }
                values.push_back(v);
                if (values.size() == 1 || v < band.min[col]) {
                    band.min[col] = v;
                    band.min_curve[col] = i;
                }
                if (values.size() == 1 || v > band.max[col]) {
                    band.max[col] = v;
                    band.max_curve[col] = i;
                }
            }
            if (values.empty()) {
                continue;
            }
            std::sort(values.begin(), values.end());
            const size_t mid = values.size() / 2;
            band.median[col] =
                values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
        }
        h.bands.push_back(std::move(band));
    }
    return h;
}

std::string log2Text(double log2) {
    if (std::isnan(log2)) {
        return "\u2013";
    }
    char buf[32];
    if (std::abs(log2 - std::round(log2)) < 1e-9) {
        std::snprintf(buf, sizeof buf, "2^%.0f", log2);
    } else {
        std::snprintf(buf, sizeof buf, "2^%.2f", log2);
    }
    return buf;
}

std::string scaleStepText(const ScaleHistory& h, size_t column) {
    if (column >= h.steps.size()) {
        return "";
    }
    std::string text = "step " + std::to_string(h.steps[column]) + ": scale";
    for (const auto& b : h.bands) {
        text += std::string("\n") + castRoleName(b.role) + " (" + std::to_string(b.tensors) +
                (b.tensors == 1 ? " tensor" : " tensors") + "): ";
        if (std::isnan(b.median[column])) {
            text += "not observed";
            continue;
        }
        text += "median " + log2Text(b.median[column]);
        if (b.tensors > 1) {
            text += ", least " + log2Text(b.min[column]) + " (" +
                    printable(h.curves[b.min_curve[column]].name, false) + "), largest " +
                    log2Text(b.max[column]) + " (" +
                    printable(h.curves[b.max_curve[column]].name, false) + ")";
        }
    }
    for (size_t i : h.saturated) {
        const auto& c = h.curves[i];
        if (c.saturated[column] > 0) {
            text += "\nsaturated: " + printable(c.name, false) + " (" + c.format + ") " +
                    formatPercent(c.saturated[column], 2) + " at scale " +
                    log2Text(c.log2_scale[column]);
        }
    }
    return text;
}

std::string scaleHistorySummary(const ScaleHistory& h, size_t named) {
    if (h.empty()) {
        return "no FP8 cast recorded";
    }
    std::string text = std::to_string(h.curves.size()) + " cast tensors (";
    for (size_t i = 0; i < h.bands.size(); ++i) {
        text += (i ? ", " : "") + std::to_string(h.bands[i].tensors) + " " +
                castRoleName(h.bands[i].role);
    }
    text +=
        ") at " + std::to_string(h.steps.size()) + (h.steps.size() == 1 ? " step; " : " steps; ");
    if (h.saturated.empty()) {
        return text + "none saturated";
    }
    text += std::to_string(h.saturated.size()) + " saturated";
    for (size_t k = 0; k < h.saturated.size() && k < named; ++k) {
        const auto& c = h.curves[h.saturated[k]];
        text += (k ? ", " : ": ") + printable(c.name, false) + " (" + c.format + ", worst " +
                formatPercent(c.max_saturated, 2) + ", " + std::to_string(c.saturated_steps) +
                (c.saturated_steps == 1 ? " step" : " steps") + ", first at step " +
                std::to_string(c.first_saturated_step) + ")";
    }
    if (h.saturated.size() > named) {
        text += ", and " + std::to_string(h.saturated.size() - named) + " more";
    }
    return text;
}

}  // namespace ampbench::analysis
