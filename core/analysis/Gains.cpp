#include "core/analysis/Gains.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/run/AloneTiming.h"
#include "core/run/FusedGroup.h"

namespace ampbench::analysis {
namespace {

/// Median by selection on a scratch copy (the bootstrap calls this thousands of times).
double fastMedian(std::vector<double>& v) {
    const size_t n = v.size();
    auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
    std::nth_element(v.begin(), mid, v.end());
    double hi = *mid;
    if (n % 2 == 1) {
        return hi;
    }
    double lo = *std::max_element(v.begin(), mid);
    return 0.5 * (lo + hi);
}

struct Pooled {
    std::vector<double> ms_per_sample, step_ms;
    std::vector<double> run_ms_per_sample;  ///< each run's median
    double timed_ms = 0;
    int64_t timed_samples = 0;
    int64_t peak = 0;
    int64_t max_steps = 0;
};

Pooled pool(const std::vector<const RunData*>& runs) {
    Pooled p;
    for (const auto* run : runs) {
        auto v = msPerSample(*run);
        p.ms_per_sample.insert(p.ms_per_sample.end(), v.begin(), v.end());
        if (!v.empty()) {
            p.run_ms_per_sample.push_back(median(v));
        }
        // A fused step trained the samples of every member of its group at once.
        const int64_t group = run::fusedGroupSize(run->events);
        int64_t prev = 0;
        for (const auto& s : run->steps) {
            const int64_t in_step = (s.samples - prev) * group;
            prev = s.samples;
            p.peak = std::max(p.peak, s.mem_peak / group);  // a fused member's share
            if (s.timed && s.step_ms > 0 && in_step > 0) {
                p.step_ms.push_back(s.step_ms);
                p.timed_ms += s.step_ms;
                p.timed_samples += in_step;
            }
        }
        p.max_steps = std::max(p.max_steps, static_cast<int64_t>(run->steps.size()));
    }
    return p;
}

}  // namespace

std::vector<double> msPerSample(const RunData& run) {
    std::vector<double> out;
    // A member of fused seeds records the fused step's time, which trained the samples
    // of every member at once: each member's share is its samples' part of it.
    const int64_t group = run::fusedGroupSize(run.events);
    int64_t prev = 0;
    for (const auto& s : run.steps) {
        const int64_t in_step = (s.samples - prev) * group;
        prev = s.samples;
        if (s.timed && s.step_ms > 0 && in_step > 0) {
            out.push_back(s.step_ms / static_cast<double>(in_step));
        }
    }
    return out;
}

Interval bootstrapMedianRatio(const std::vector<double>& a, const std::vector<double>& b,
                              int resamples, uint64_t seed, double confidence) {
    Interval r{kUnknown, kUnknown};
    if (a.empty() || b.empty() || resamples < 10) {
        return r;
    }
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<size_t> pick_a(0, a.size() - 1), pick_b(0, b.size() - 1);
    std::vector<double> sa(a.size()), sb(b.size()), ratios;
    ratios.reserve(static_cast<size_t>(resamples));
    for (int i = 0; i < resamples; ++i) {
        for (auto& x : sa) {
            x = a[pick_a(rng)];
        }
        for (auto& x : sb) {
            x = b[pick_b(rng)];
        }
        const double mb = fastMedian(sb);
        if (mb > 0) {
            ratios.push_back(fastMedian(sa) / mb);
        }
    }
    const double tail = (1.0 - confidence) / 2.0;
    r.low = quantile(ratios, tail);
    r.high = quantile(ratios, 1.0 - tail);
    return r;
}

double speedupOf(const std::vector<double>& base_run_ms_per_sample,
                 const std::vector<double>& arm_run_ms_per_sample) {
    const double b = mean(base_run_ms_per_sample), a = mean(arm_run_ms_per_sample);
    return a > 0 && std::isfinite(b) && b > 0 ? b / a : kUnknown;
}

/// 95% interval of the speed-up from run-to-run variation: Welch's t on the log time
/// per sample of each run.
Interval acrossRuns(const std::vector<double>& base, const std::vector<double>& arm) {
    std::vector<double> lb, la;
    for (double v : base) {
        lb.push_back(std::log(v));
    }
    for (double v : arm) {
        la.push_back(std::log(v));
    }
    const WelchResult w = welchTest(la, lb);  // delta = mean(log base) - mean(log arm)
    const double vb = stddev(lb), va = stddev(la);
    const double se = std::sqrt(vb * vb / static_cast<double>(lb.size()) +
                                va * va / static_cast<double>(la.size()));
    const double q = studentTQuantile(0.975, std::max(1.0, w.df));
    return {std::exp(w.delta - q * se), std::exp(w.delta + q * se)};
}

Gains computeGains(const std::vector<const RunData*>& baseline,
                   const std::vector<const RunData*>& arm) {
    Gains g;
    const Pooled b = pool(baseline), a = pool(arm);
    g.ms_per_sample = mean(a.run_ms_per_sample);
    g.base_ms_per_sample = mean(b.run_ms_per_sample);
    g.median_step_ms = median(a.step_ms);
    g.timed_steps = static_cast<int64_t>(a.step_ms.size());
    g.optimizer_steps = a.max_steps;
    g.speedup = speedupOf(b.run_ms_per_sample, a.run_ms_per_sample);
    if (std::isfinite(g.speedup)) {
        if (a.run_ms_per_sample.size() >= 2 && b.run_ms_per_sample.size() >= 2) {
            g.speedup_ci = acrossRuns(b.run_ms_per_sample, a.run_ms_per_sample);
            g.ci_across_runs = true;
        } else {
            // Fewer resamples for very long runs keep a report quick; the interval barely moves.
            const size_t n = a.ms_per_sample.size() + b.ms_per_sample.size();
            g.speedup_ci =
                bootstrapMedianRatio(b.ms_per_sample, a.ms_per_sample, n > 50000 ? 200 : 1000);
        }
    }
    if (a.timed_ms > 0) {
        g.samples_per_s = static_cast<double>(a.timed_samples) / (a.timed_ms / 1000.0);
    }
    if (b.timed_ms > 0) {
        g.base_samples_per_s = static_cast<double>(b.timed_samples) / (b.timed_ms / 1000.0);
    }
    if (g.base_samples_per_s > 0) {
        g.throughput_ratio = g.samples_per_s / g.base_samples_per_s;
    }
    g.peak_mem = a.peak;
    g.base_peak_mem = b.peak;
    if (b.peak > 0 && a.peak > 0) {
        g.memory_ratio = static_cast<double>(a.peak) / static_cast<double>(b.peak);
    }
    return g;
}

std::vector<RunData> alonePasses(const std::vector<const RunData*>& runs, const std::string& mode) {
    std::vector<RunData> out;
    for (const auto* r : runs) {
        if (mode == "eager" && finishedPass(r->row)) {
            if (!msPerSample(*r).empty()) {
                out.push_back(*r);  // an advice's pass: a run of its own, timed as runs are
            }
            continue;
        }
        for (const auto& e : r->events) {
            const auto t = run::aloneTimingOf(e);
            if (!t || t->mode != mode) {
                continue;
            }
            RunData pass;
            pass.row = r->row;
            pass.row.status = run::RunStatus::Finished;
            int64_t samples = 0;
            for (size_t i = 0; i < t->step_ms.size(); ++i) {
                run::StepRecord s;
                s.step = static_cast<int64_t>(i) + 1;
                samples += t->step_samples[i];
                s.samples = samples;
                s.step_ms = t->step_ms[i];
                s.timed = true;
                s.mem_peak = t->peak_allocated;
                s.mem_allocated = t->peak_allocated;
                s.mem_reserved = t->peak_reserved;
                pass.steps.push_back(s);
            }
            if (!pass.steps.empty()) {
                out.push_back(std::move(pass));
            }
        }
    }
    return out;
}

std::optional<Gains> aloneGains(const std::vector<const RunData*>& baseline,
                                const std::vector<const RunData*>& arm) {
    auto pointers = [](const std::vector<RunData>& runs) {
        std::vector<const RunData*> out;
        for (const auto& r : runs) {
            out.push_back(&r);
        }
        return out;
    };
    const auto base_graph = alonePasses(baseline, "graph"), arm_graph = alonePasses(arm, "graph");
    const auto base_eager = alonePasses(baseline, "eager"), arm_eager = alonePasses(arm, "eager");
    std::optional<Gains> eager;
    if (!base_eager.empty() && !arm_eager.empty()) {
        eager = computeGains(pointers(base_eager), pointers(arm_eager));
        eager->timing_mode = "eager";
    }
    if (base_graph.empty() || arm_graph.empty()) {
        return eager;
    }
    Gains g = computeGains(pointers(base_graph), pointers(arm_graph));
    g.timing_mode = "graph";
    if (eager) {
        g.eager_speedup = eager->speedup;
        g.eager_memory_ratio = eager->memory_ratio;
    }
    return g;
}

}  // namespace ampbench::analysis
