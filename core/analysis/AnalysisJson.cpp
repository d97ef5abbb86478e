#include "core/analysis/AnalysisJson.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/analysis/Advice.h"
#include "core/analysis/IslandCost.h"
#include "core/analysis/LayerNumerics.h"

namespace ampbench::analysis {
namespace {

using nlohmann::json;

json real(double v) {
    return std::isfinite(v) ? json(v) : json(nullptr);
}

json reals(const std::vector<double>& v) {
    json out = json::array();
    for (double x : v) {
        out.push_back(real(x));
    }
    return out;
}

json toJson(const RunSummary& s) {
    return {{"run_id", s.run_id},
            {"arm", s.arm},
            {"seed", s.seed},
            {"status", run::toString(s.status)},
            {"steps", s.steps},
            {"timed_steps", s.timed_steps},
            {"samples", s.samples},
            {"median_step_ms", real(s.median_step_ms)},
            {"p10_step_ms", real(s.p10_step_ms)},
            {"p90_step_ms", real(s.p90_step_ms)},
            {"median_ms_per_sample", real(s.median_ms_per_sample)},
            {"samples_per_s", real(s.samples_per_s)},
            {"peak_mem", s.peak_mem},
            {"final_val_accuracy", real(s.final_val_accuracy)},
            {"final_val_loss", real(s.final_val_loss)},
            {"final_train_loss", real(s.final_train_loss)},
            {"skipped", s.skipped},
            {"min_loss_scale", real(s.min_loss_scale)},
            {"data_wait_share", real(s.data_wait_share)},
            {"wall_s", real(s.wall_s)}};
}

json toJson(const ArmSummary& a) {
    return {{"arm", a.arm},
            {"runs", a.runs},
            {"finished", a.finished},
            {"median_step_ms", real(a.median_step_ms)},
            {"p10_step_ms", real(a.p10_step_ms)},
            {"p90_step_ms", real(a.p90_step_ms)},
            {"samples_per_s", real(a.samples_per_s)},
            {"peak_mem", a.peak_mem},
            {"val_accuracy", real(a.val_accuracy)},
            {"val_accuracy_sd", real(a.val_accuracy_sd)},
            {"skipped", a.skipped},
            {"data_wait_share", real(a.data_wait_share)},
            {"speedup", real(a.speedup)},
            {"memory_ratio", real(a.memory_ratio)}};
}

json toJson(const Gains& g) {
    return {{"speedup", real(g.speedup)},
            {"speedup_ci95", {real(g.speedup_ci.low), real(g.speedup_ci.high)}},
            {"ms_per_sample", real(g.ms_per_sample)},
            {"baseline_ms_per_sample", real(g.base_ms_per_sample)},
            {"median_step_ms", real(g.median_step_ms)},
            {"samples_per_s", real(g.samples_per_s)},
            {"baseline_samples_per_s", real(g.base_samples_per_s)},
            {"throughput_ratio", real(g.throughput_ratio)},
            {"peak_mem", g.peak_mem},
            {"baseline_peak_mem", g.base_peak_mem},
            {"memory_ratio", real(g.memory_ratio)},
            {"process_memory", g.process_memory},
            {"timed_steps", g.timed_steps},
            {"max_batch", g.max_batch},
            {"baseline_max_batch", g.base_max_batch},
            {"max_batch_ratio", real(g.max_batch_ratio)},
            {"optimizer_steps", g.optimizer_steps},
            // "runs": the runs' own timed steps; "alone_graph"/"alone_eager": each arm's
            // pass alone on the GPU (fast verdict), with the eager pass's figures beside.
            {"timing", g.timing_mode.empty() ? std::string("runs") : "alone_" + g.timing_mode},
            {"eager_speedup", real(g.eager_speedup)},
            {"eager_memory_ratio", real(g.eager_memory_ratio)}};
}

json failuresJson(const std::vector<Health::Failure>& failures) {
    json out = json::array();
    for (const auto& f : failures) {
        out.push_back({{"seed", f.seed}, {"kind", run::toString(f.kind)}, {"error", f.error}});
    }
    return out;
}

json toJson(const Health& h) {
    return {{"runs", h.runs},
            {"steps", h.steps},
            {"skipped", h.skipped},
            {"skipped_share", real(h.skipped_share)},
            {"early_skipped", h.early_skipped},
            {"skipped_where", h.skipped_where},
            {"longest_skip_run", h.longest_skip_run},
            {"longest_skip_start", h.longest_skip_start},
            {"min_loss_scale", real(h.min_loss_scale)},
            {"final_loss_scale", real(h.final_loss_scale)},
            {"scaler_active", h.scaler_active},
            {"nonfinite_events", h.nonfinite_events},
            {"oom_events", h.oom_events},
            {"warning_events", h.warning_events},
            {"failures", failuresJson(h.failures)},
            {"data_wait_share", real(h.data_wait_share)},
            {"input_bound", h.input_bound}};
}

json toJson(const CurveDeviation& c) {
    return {{"whole_mean_band_units", real(c.whole_mean_abs)},
            {"whole_max_band_units", real(c.whole_max_abs)},
            {"tail_mean_band_units", real(c.tail_mean_abs)},
            {"tail_signed_band_units", real(c.tail_signed)},
            {"outside_band_share", real(c.outside_share)},
            {"relative_whole", real(c.relative_whole)},
            {"relative_tail", real(c.relative_tail)},
            {"progress_lost", real(c.progress_lost)},
            {"trend_r", real(c.trend_r)}};
}

json toJson(const FinalGap& g) {
    json j = {{"metric", g.metric},
              {"baseline", reals(g.base)},
              {"arm", reals(g.arm)},
              {"baseline_mean", real(g.base_mean)},
              {"baseline_sd", real(g.base_sd)},
              {"arm_mean", real(g.arm_mean)},
              {"arm_sd", real(g.arm_sd)},
              {"delta", real(g.delta)},
              {"units_of_2sd", real(g.units)},
              {"significant", g.significant}};
    if (g.welch.valid) {
        j["welch"] = {{"t", real(g.welch.t)}, {"df", real(g.welch.df)}, {"p", real(g.welch.p)}};
    } else {
        j["welch"] = nullptr;
    }
    return j;
}

/// Findings as data: their codes, numbers and names, for a program reading the report.
json toJson(const Finding& f) {
    json values = json::object();
    for (const auto& [key, value] : f.values) {
        values[keyName(key)] = real(value);
    }
    json names = json::object();
    for (const auto& [key, name] : f.names) {
        names[keyName(key)] = name;
    }
    return {{"code", codeName(f.code)}, {"values", values}, {"names", names}};
}

json findingsJson(const std::vector<Finding>& findings) {
    json out = json::array();
    for (const auto& f : findings) {
        out.push_back(toJson(f));
    }
    return out;
}

}  // namespace

json toJson(const ArmVerdict& v) {
    json j = {{"arm", v.arm},
              {"verdict", toString(v.verdict)},
              {"code", codeName(v.summary.code)},
              {"summary", describe(v.summary)},
              {"noise_known", v.noise_known},
              {"runs_used", v.runs_used},
              {"reasons", describeAll(v.reasons)},
              {"next_checks", describeAll(v.next_checks)},
              {"findings",
               {{"summary", toJson(v.summary)},
                {"reasons", findingsJson(v.reasons)},
                {"next_checks", findingsJson(v.next_checks)}}},
              {"facts",
               {{"baseline", v.facts.baseline},
                {"precision", config::toString(v.facts.precision)},
                {"accumulation", v.facts.accumulation},
                {"lr_rule", config::toString(v.facts.lr_rule)},
                {"lr", real(v.facts.lr)},
                {"effective_batch", v.facts.effective_batch},
                {"loss_scaling", v.facts.loss_scaling},
                {"aa_copy", v.facts.aa_copy}}},
              {"health", toJson(v.health)},
              {"gains", toJson(v.gains)}};
    if (v.verdict != Verdict::Baseline) {
        j["curve"] = toJson(v.curve);
        j["final_gap"] = toJson(v.final_gap);
        const TimeToTarget& tt = v.time_to_target;
        j["time_to_target"] = {{"metric", tt.accuracy ? "val_accuracy" : "val_loss"},
                               {"target", real(tt.target)},
                               {"runs", tt.runs},
                               {"reached", tt.reached},
                               {"wall_s", real(tt.wall_s)},
                               {"samples", real(tt.samples)},
                               {"baseline_wall_s", real(tt.base_wall_s)},
                               {"baseline_samples", real(tt.base_samples)}};
    }
    return j;
}

json toJson(const ExperimentAnalysis& a) {
    json runs = json::array(), arms = json::array(), verdicts = json::array(),
         incomplete = json::array(), curves = json::array();
    for (const auto& r : a.runs) {
        runs.push_back(toJson(r));
    }
    for (const auto& s : a.arms) {
        arms.push_back(toJson(s));
    }
    for (const auto& v : a.verdicts) {
        verdicts.push_back(toJson(v));
    }
    for (const auto& r : a.incomplete) {
        incomplete.push_back({{"run_id", r.run_id},
                              {"arm", r.arm},
                              {"seed", r.seed},
                              {"status", run::toString(r.status)},
                              {"last_step", r.last_step},
                              {"planned_steps", r.planned_steps},
                              {"text", r.describe()}});
    }
    for (const auto& c : a.arm_curves) {
        curves.push_back({{"arm", c.arm}, {"runs", c.runs}, {"mean_loss", reals(c.mean)}});
    }
    json validation = json::array();
    for (const auto& b : a.validation) {
        validation.push_back({{"arm", b.arm},
                              {"runs", b.runs},
                              {"samples", reals(b.x)},
                              {"mean", reals(b.mean)},
                              {"sd", reals(b.sd)}});
    }
    json reruns = json::array();
    for (const auto& c : a.reruns) {
        reruns.push_back({{"rerun", c.rerun},
                          {"original", c.original_run},
                          {"experiment", c.rerun_experiment},
                          {"arm", c.arm},
                          {"seed", c.seed},
                          {"agreement", toString(c.agreement)},
                          {"steps_compared", c.steps_compared},
                          {"steps_identical", c.steps_identical},
                          {"first_difference", c.first_difference},
                          {"max_loss_difference", real(c.max_loss_difference)},
                          {"band_seeds", c.band_seeds},
                          {"curve_units", real(c.curve_units)},
                          {"metric", c.metric},
                          {"final_original", real(c.final_original)},
                          {"final_rerun", real(c.final_rerun)},
                          {"final_units", real(c.final_units)},
                          {"sentence", c.sentence}});
    }
    return {{"experiment", {{"id", a.experiment_id}, {"name", a.name}}},
            {"baseline", a.baseline},
            {"device", a.device},
            {"memory_label", a.memory_label},
            {"summary", {{"arms", arms}, {"runs", runs}}},
            {"verdicts", verdicts},
            {"incomplete_runs", incomplete},
            {"warnings", a.warnings},
            {"bit_reproducible", a.reproducibility.empty()},
            {"reproducibility", a.reproducibility},
            {"reruns", reruns},
            {"noise_band",
             {{"seeds", a.band.seeds},
              {"samples", reals(a.band.x)},
              {"mean", reals(a.band.mean)},
              {"low", reals(a.band.low)},
              {"high", reals(a.band.high)},
              {"min", reals(a.band.min)},
              {"max", reals(a.band.max)}}},
            {"curves", curves},
            {"validation", {{"metric", a.validation_metric}, {"arms", validation}}}};
}

/// Per run with numerics: its worst layers by underflow and by headroom (ten each).
static json numericsJson(const ExperimentData& data) {
    auto finite = [](double v) {
        return std::isfinite(v) ? json(v) : json(v > 0 ? "inf" : "-inf");
    };
    json out = json::array();
    for (const auto& rn : experimentNumerics(data)) {
        json under = json::array(), head = json::array();
        for (const auto& l : worstUnderflow(rn.summary, 10)) {
            under.push_back({{"name", l.name},
                             {"kind", run::toString(l.kind)},
                             {"format", l.format},
                             {"max_underflow_subnormal", l.max_underflow_subnormal},
                             {"mean_underflow_subnormal", l.mean_underflow_subnormal},
                             {"max_underflow_normal", l.max_underflow_normal},
                             {"max_saturated", l.max_saturated}});
        }
        for (const auto& l : leastHeadroom(rn.summary, 10)) {
            head.push_back({{"name", l.name},
                            {"kind", run::toString(l.kind)},
                            {"format", l.format},
                            {"min_headroom_log2", finite(l.min_headroom_log2)},
                            {"at_step", l.min_headroom_step},
                            {"max_saturated", l.max_saturated},
                            {"nonfinite_steps", l.nonfinite_steps}});
        }
        // The tensors FP8 layers cast, each in its format at its scale.
        json casts = json::array();
        for (const auto& l : castTensors(rn.summary)) {
            casts.push_back({{"name", l.name},
                             {"format", l.format},
                             {"scale", finite(l.last_scale)},
                             {"max_absmax", finite(l.max_absmax)},
                             {"max_saturated", l.max_saturated},
                             {"mean_saturated", l.mean_saturated},
                             {"max_underflow_subnormal", l.max_underflow_subnormal},
                             {"max_underflow_normal", l.max_underflow_normal},
                             {"min_headroom_log2", finite(l.min_headroom_log2)}});
        }
        out.push_back({{"run", rn.run_id},
                       {"arm", rn.arm},
                       {"seed", rn.seed},
                       {"tensors", rn.summary.layers.size()},
                       {"steps", rn.summary.steps},
                       {"formats", formatsOf(rn.summary)},
                       {"worst_underflow", under},
                       {"least_headroom", head},
                       {"casts", casts}});
    }
    return out;
}

json reportJson(const ExperimentData& data, const ExperimentAnalysis& analysis) {
    json j = toJson(analysis);
    json spec = json::parse(data.experiment.spec_json, nullptr, false);
    j["spec"] = spec.is_discarded() ? json(data.experiment.spec_json) : spec;
    for (const auto& r : data.runs) {
        json env = json::parse(r.row.env_json, nullptr, false);
        if (!env.is_discarded() && env.is_object()) {
            j["environment"] = env;
            break;
        }
    }
    // What a rerun needs: the command per run, and the files the runs read.
    json runs = json::array();
    json inputs = json::array();
    for (const auto& r : data.runs) {
        runs.push_back({{"run", r.row.id},
                        {"arm", r.row.arm},
                        {"seed", r.row.seed},
                        {"command", rerunCommand(data.database_path, r.row.id)}});
        json files = json::parse(r.row.inputs_json, nullptr, false);
        if (inputs.empty() && files.is_array()) {
            inputs = files;
        }
    }
    j["numerics"] = numericsJson(data);
    if (isAdvice(data)) {
        j["advice"] = adviceJson(readAdvice(data, analysis), data.spec);
    }
    json islands = json::array();
    for (const auto& c : islandCosts(data.spec, analysis)) {
        islands.push_back({{"arm", c.arm},
                           {"fp32_modules", c.modules},
                           {"plain_arm", c.plain},
                           {"time_per_sample_ratio", real(c.step_ratio)},
                           {"memory_ratio", real(c.memory_ratio)},
                           {"median_step_ms", real(c.median_step_ms)},
                           {"plain_median_step_ms", real(c.plain_median_step_ms)},
                           {"peak_mem", c.peak_mem},
                           {"plain_peak_mem", c.plain_peak_mem}});
    }
    j["islands"] = islands;
    j["reproduce"] = {{"deterministic", data.spec.deterministic},
                      {"spec_command", "ampbench-cli run --config spec.json"},
                      {"runs", runs},
                      {"inputs", inputs}};
    return j;
}

}  // namespace ampbench::analysis
