#include "core/analysis/PlotSeries.h"

#include <algorithm>
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

std::vector<double> stepXs(const std::vector<run::StepRecord>& steps, XAxis axis) {
    std::vector<double> out;
    out.reserve(steps.size());
    for (const auto& s : steps) {
        switch (axis) {
            case XAxis::Step:
                out.push_back(static_cast<double>(s.step));
                break;
            case XAxis::Samples:
                out.push_back(static_cast<double>(s.samples));
                break;
            case XAxis::WallSeconds:
                out.push_back(s.wall_s);
                break;
        }
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

std::vector<double> stepValues(const std::vector<run::StepRecord>& steps, StepMetric metric) {
    std::vector<double> out;
    out.reserve(steps.size());
    for (const auto& s : steps) {
        switch (metric) {
            case StepMetric::Loss:
                out.push_back(s.loss);
                break;
            case StepMetric::LossScale:
                out.push_back(s.loss_scale);
                break;
            case StepMetric::StepMs:
                out.push_back(s.step_ms);
                break;
            case StepMetric::MemAllocatedMiB:
                out.push_back(static_cast<double>(s.mem_allocated) / kMiB);
                break;
            case StepMetric::MemPeakMiB:
                out.push_back(static_cast<double>(s.mem_peak) / kMiB);
                break;
            case StepMetric::GradNorm:
                out.push_back(s.grad_norm);
                break;
            case StepMetric::Lr:
                out.push_back(s.lr);
                break;
            case StepMetric::MsPerSample:
                out.push_back(s.samples > 0 && s.step > 0
                                  ? s.step_ms * static_cast<double>(s.step) /
                                        static_cast<double>(s.samples)
                                  : kNaN);
                break;
            case StepMetric::DataWaitMs:
                out.push_back(s.data_wait_ms);
                break;
        }
    }
    return out;
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
