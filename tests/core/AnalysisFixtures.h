#pragma once
// Synthetic runs whose answer is known by construction, for the analysis tests.
#include <cmath>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>

#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/ExperimentData.h"

namespace ampbench::analysis::fixtures {

constexpr int64_t kMicroBatch = 64;
constexpr int64_t kMicroBatches = 400;

/// A loss curve over samples seen with a seed-dependent offset and small step noise:
/// seeds 1, 2, 3 sit at −σ, 0, +σ with σ = 0.02, so the band half-width is about 0.04.
inline double lossAt(double samples, uint64_t seed, double shift) {
    const double seed_offset = (static_cast<double>(seed) - 2.0) * 0.02;
    return 2.0 * std::exp(-samples / 6000.0) + 0.3 + seed_offset + shift;
}

struct RunShape {
    std::string arm = "fp32";
    uint64_t seed = 1;
    int accumulation = 1;
    double shift = 0;          ///< added to the loss everywhere
    double accuracy = 0.85;    ///< final validation accuracy
    double ms_per_sample = 1;  ///< step time ÷ samples
    std::string precision = "fp32";
    std::string lr_rule = "linear";
    double loss_scale = 1;
    bool loss_scaling = true;
    run::RunStatus status = run::RunStatus::Finished;
};

inline RunData makeRun(int64_t id, const RunShape& s) {
    RunData r;
    r.row.id = id;
    r.row.experiment_id = 1;
    r.row.arm = s.arm;
    r.row.seed = s.seed;
    r.row.status = s.status;
    nlohmann::json arm = {{"name", s.arm},
                          {"precision", s.precision},
                          {"accumulation", s.accumulation},
                          {"lr_rule", s.lr_rule},
                          {"loss_scaling", s.loss_scaling},
                          {"lr", 0.05},
                          {"effective_batch", kMicroBatch * s.accumulation}};
    r.row.spec_json = arm.dump();
    r.row.env_json = R"({"device":"cpu","device_name":"test","hostname":"h"})";
    std::mt19937_64 rng(s.seed * 7919 + static_cast<uint64_t>(id));
    std::normal_distribution<double> noise(0.0, 0.01);
    const int64_t steps = kMicroBatches / s.accumulation;
    r.row.planned_steps = steps;
    for (int64_t i = 1; i <= steps; ++i) {
        run::StepRecord st;
        st.step = i;
        st.samples = i * kMicroBatch * s.accumulation;
        st.loss = lossAt(static_cast<double>(st.samples), s.seed, s.shift) + noise(rng);
        st.loss_scale = s.loss_scale;
        st.timed = i > 2;
        st.step_ms = s.ms_per_sample * static_cast<double>(kMicroBatch * s.accumulation) *
                     (1.0 + 0.05 * noise(rng) / 0.01);
        st.data_wait_ms = 0.01 * st.step_ms;
        st.mem_peak = 100 << 20;
        r.steps.push_back(st);
    }
    r.row.last_step = steps;
    run::EvalRecord ev;
    ev.step = steps;
    ev.samples = r.steps.back().samples;
    ev.val_accuracy = s.accuracy;
    ev.val_loss = r.steps.back().loss;
    r.evals.push_back(ev);
    return r;
}

/// The verdict on `arm`; throws when the analysis has none.
/// An fp32 arm and an AMP arm (`amp_precision`) of three seeds each; `shape` may
/// change a run's shape before it is made, `adjust` the run made (its events).
inline ExperimentData fp32AndAmp(
    const std::string& name, const std::string& amp_precision,
    const std::function<void(RunShape&)>& shape = {},
    const std::function<void(RunData&, const RunShape&)>& adjust = {}) {
    ExperimentData d;
    d.experiment.id = 1;
    d.experiment.name = name;
    int64_t id = 1;
    for (const char* arm : {"fp32", "amp"}) {
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            RunShape s;
            s.arm = arm;
            s.seed = seed;
            s.precision = std::string(arm) == "amp" ? amp_precision : "fp32";
            if (shape) {
                shape(s);
            }
            RunData r = makeRun(id++, s);
            if (adjust) {
                adjust(r, s);
            }
            d.runs.push_back(std::move(r));
        }
    }
    return d;
}

inline const ArmVerdict& verdictOf(const ExperimentAnalysis& a, const std::string& arm) {
    for (const auto& v : a.verdicts) {
        if (v.arm == arm) {
            return v;
        }
    }
    throw std::runtime_error("no verdict for " + arm);
}

}  // namespace ampbench::analysis::fixtures
