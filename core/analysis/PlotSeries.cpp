#include "core/analysis/PlotSeries.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace ampbench::analysis {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMiB = 1024.0 * 1024.0;
}  // namespace

std::string toString(XAxis axis) {
    switch (axis) {
        case XAxis::Step:
            return "step";
        case XAxis::Samples:
            return "samples seen";
        case XAxis::WallSeconds:
            return "wall time (s)";
    }
    return "step";
}

namespace {

double stepX(const run::StepRecord& s, XAxis axis) {
    switch (axis) {
        case XAxis::Step:
            return static_cast<double>(s.step);
        case XAxis::Samples:
            return static_cast<double>(s.samples);
        case XAxis::WallSeconds:
            return s.wall_s;
    }
    return kNaN;
}

}  // namespace

std::vector<double> stepXs(const std::vector<run::StepRecord>& steps, XAxis axis) {
    std::vector<double> out;
    out.reserve(steps.size());
    for (const auto& s : steps) {
        out.push_back(stepX(s, axis));
    }
    return out;
}

std::vector<double> evalXs(const std::vector<run::EvalRecord>& evals, XAxis axis) {
    std::vector<double> out;
    out.reserve(evals.size());
    for (const auto& e : evals) {
        switch (axis) {
            case XAxis::Step:
                out.push_back(static_cast<double>(e.step));
                break;
            case XAxis::Samples:
                out.push_back(static_cast<double>(e.samples));
                break;
            case XAxis::WallSeconds:
                out.push_back(e.wall_s);
                break;
        }
    }
    return out;
}

double stepValue(const run::StepRecord& s, StepMetric metric) {
    switch (metric) {
        case StepMetric::Loss:
            return s.loss;
        case StepMetric::LossScale:
            return s.loss_scale;
        case StepMetric::StepMs:
            return s.step_ms;
        case StepMetric::MemAllocatedMiB:
            return static_cast<double>(s.mem_allocated) / kMiB;
        case StepMetric::MemPeakMiB:
            return static_cast<double>(s.mem_peak) / kMiB;
        case StepMetric::GradNorm:
            return s.grad_norm;
        case StepMetric::Lr:
            return s.lr;
        case StepMetric::MsPerSample:
            return s.samples > 0 && s.step > 0
                       ? s.step_ms * static_cast<double>(s.step) / static_cast<double>(s.samples)
                       : kNaN;
        case StepMetric::DataWaitMs:
            return s.data_wait_ms;
    }
    return kNaN;
}

std::vector<double> stepValues(const std::vector<run::StepRecord>& steps, StepMetric metric) {
    std::vector<double> out;
    out.reserve(steps.size());
    for (const auto& s : steps) {
        out.push_back(stepValue(s, metric));
    }
    return out;
}

StepColumns stepColumns(const std::vector<run::StepRecord>& steps, XAxis axis) {
    StepColumns c;
    c.axis = axis;
    const size_t n = steps.size();
    c.x.resize(n);
    c.values.resize(kStepMetrics);
    std::array<double*, kStepMetrics> out{};
    for (size_t m = 0; m < kStepMetrics; ++m) {
        c.values[m].resize(n);
        out[m] = c.values[m].data();
    }
    for (size_t i = 0; i < n; ++i) {
        const run::StepRecord& s = steps[i];
        c.x[i] = stepX(s, axis);
        // Unrolled, each stepValue folds to its one field: a plain copy per column.
#pragma GCC unroll 16
        for (size_t m = 0; m < kStepMetrics; ++m) {
            out[m][i] = stepValue(s, static_cast<StepMetric>(m));
        }
        if (s.skipped) {
            c.skipped.push_back(i);
        }
    }
    return c;
}

std::vector<double> forLogAxis(std::vector<double> values) {
    for (double& v : values) {
        if (!std::isfinite(v) || v <= 0) {
            v = kNaN;
        }
    }
    return values;
}

std::vector<size_t> skippedIndices(const std::vector<run::StepRecord>& steps) {
    std::vector<size_t> out;
    for (size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].skipped) {
            out.push_back(i);
        }
    }
    return out;
}

double smoothingWeight(int percent) {
    return 0.99 * static_cast<double>(std::clamp(percent, 0, 100)) / 100.0;
}

}  // namespace ampbench::analysis
