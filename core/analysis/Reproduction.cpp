#include "core/analysis/Reproduction.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "core/analysis/Format.h"
#include "core/analysis/Statistics.h"
#include "core/analysis/Summary.h"

namespace ampbench::analysis {
namespace {

bool sameBits(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

/// The final metric both runs can be judged by, as summarizeRun computes it.
std::string commonMetric(const std::vector<const RunData*>& runs) {
    bool eval = true, accuracy = true;
    for (const auto* r : runs) {
        eval = eval && !r->evals.empty();
        for (const auto& e : r->evals) {
            accuracy = accuracy && std::isfinite(e.val_accuracy);
        }
    }
    return !eval ? "train_loss" : accuracy ? "val_accuracy" : "val_loss";
}

double finalValue(const RunData& r, const std::string& metric) {
    const RunSummary s = summarizeRun(r.row, r.steps, r.evals);
    return metric == "val_accuracy" ? s.final_val_accuracy
           : metric == "val_loss"   ? s.final_val_loss
                                    : s.final_train_loss;
}

std::string metricText(const std::string& metric, double v) {
    return metric == "val_accuracy" ? formatPercent(v, 2) : formatNumber(v, 4);
}

std::string metricLabel(const std::string& metric) {
    return metric == "val_accuracy" ? "final validation accuracy"
           : metric == "val_loss"   ? "final validation loss"
                                    : "final training loss";
}

std::string significant(double v) {
    return formatSignificant(v, 3);
}

}  // namespace

std::string toString(RerunAgreement a) {
    switch (a) {
        case RerunAgreement::Identical:
            return "identical";
        case RerunAgreement::WithinNoise:
            return "within noise";
        case RerunAgreement::Different:
            return "different";
        case RerunAgreement::NoiseUnknown:
            return "differs (noise unknown)";
        case RerunAgreement::Incomplete:
            return "not compared";
    }
    return "not compared";
}

RerunComparison compareRerun(const RunData& original, const RunData& rerun,
                             const std::vector<const RunData*>& arm_runs, bool deterministic) {
    RerunComparison c;
    c.original_run = original.row.id;
    c.rerun = rerun.row.id;
    c.rerun_experiment = rerun.row.experiment_id;
    c.arm = original.row.arm;
    c.seed = original.row.seed;
    c.deterministic = deterministic;
    const std::string who = "Run " + std::to_string(c.rerun) + " (rerun of run " +
                            std::to_string(c.original_run) + ", " + c.arm + ", seed " +
                            std::to_string(c.seed) + ")";
    const bool done = rerun.row.status == run::RunStatus::Finished &&
                      original.row.status == run::RunStatus::Finished;
    // Step by step, bit for bit, over the steps both recorded.
    std::map<int64_t, double> then;
    for (const auto& s : original.steps) {
        then[s.step] = s.loss;
    }
    for (const auto& s : rerun.steps) {
        auto it = then.find(s.step);
        if (it == then.end()) {
            continue;
        }
        ++c.steps_compared;
        if (sameBits(it->second, s.loss)) {
            ++c.steps_identical;
        } else {
            if (c.first_difference == 0) {
                c.first_difference = s.step;
            }
            const double d = std::fabs(it->second - s.loss);
            c.max_loss_difference =
                std::isfinite(d) ? std::max(c.max_loss_difference, d) : INFINITY;
        }
    }
    bool evals_identical = original.evals.size() == rerun.evals.size();
    for (size_t i = 0; evals_identical && i < rerun.evals.size(); ++i) {
        const auto &a = original.evals[i], &b = rerun.evals[i];
        evals_identical = a.step == b.step && sameBits(a.val_loss, b.val_loss) &&
                          sameBits(a.val_accuracy, b.val_accuracy);
    }
    if (!done) {
        c.agreement = RerunAgreement::Incomplete;
        c.sentence = who + " was not compared: " +
                     (rerun.row.status != run::RunStatus::Finished
                          ? "the rerun is " + run::toString(rerun.row.status)
                          : "the original is " + run::toString(original.row.status)) +
                     "; " + std::to_string(c.steps_identical) + " of the " +
                     std::to_string(c.steps_compared) +
                     " steps both recorded have identical losses.";
        return c;
    }
    const bool identical = c.steps_compared > 0 && c.steps_identical == c.steps_compared &&
                           original.steps.size() == rerun.steps.size() && evals_identical;
    // The final metric, and the curve, against the arm's seeds.
    std::vector<const RunData*> finished;
    for (const auto* r : arm_runs) {
        if (r->row.status == run::RunStatus::Finished && !r->steps.empty()) {
            finished.push_back(r);
        }
    }
    c.band_seeds = static_cast<int>(finished.size());
    std::vector<const RunData*> all = finished;
    all.push_back(&rerun);
    c.metric = commonMetric(all);
    c.final_original = finalValue(original, c.metric);
    c.final_rerun = finalValue(rerun, c.metric);
    if (identical) {
        c.agreement = RerunAgreement::Identical;
        c.sentence = who + " is identical to its original: all " +
                     std::to_string(c.steps_compared) + " step losses" +
                     (rerun.evals.empty() ? "" : " and every evaluation") + " bit for bit.";
        return c;
    }
    const std::string differs =
        std::to_string(c.steps_compared - c.steps_identical) + " of " +
        std::to_string(c.steps_compared) + " step losses differ from the original (first at step " +
        std::to_string(c.first_difference) + ", largest |Δ| " + significant(c.max_loss_difference) +
        "); " + metricLabel(c.metric) + " " + metricText(c.metric, c.final_rerun) + " against " +
        metricText(c.metric, c.final_original);
    if (c.band_seeds >= 2) {
        double max_samples = 0;
        for (const auto* r : all) {
            max_samples = std::max(max_samples, static_cast<double>(r->steps.back().samples));
        }
        const double tau = 0.05 * max_samples;
        std::vector<RunCurve> curves;
        curves.reserve(all.size());
        for (const auto* r : all) {
            curves.push_back(lossCurve(*r, tau));
        }
        std::vector<const RunCurve*> arm_curves, every;
        for (size_t i = 0; i < curves.size(); ++i) {
            every.push_back(&curves[i]);
            if (i + 1 < curves.size()) {
                arm_curves.push_back(&curves[i]);
            }
        }
        const auto grid = commonGrid(every, 100);
        const NoiseBand band = noiseBand(arm_curves, grid);
        const CurveDeviation dev = compareCurves(band, meanCurve({&curves.back()}, grid), 0.25);
        c.curve_units = dev.tail_mean_abs;
        std::vector<double> values;
        for (const auto* r : finished) {
            values.push_back(finalValue(*r, c.metric));
        }
        const double floor = c.metric == "val_accuracy" ? 0.001 : 1e-3 * std::fabs(mean(values));
        const FinalGap gap = finalGap(c.metric, values, {c.final_rerun}, floor);
        c.final_units = gap.units;
        const bool curve_ok = std::isfinite(c.curve_units) && c.curve_units <= 1.0;
        const bool final_ok = !std::isfinite(c.final_units) || c.final_units <= 1.0;
        c.agreement =
            curve_ok && final_ok ? RerunAgreement::WithinNoise : RerunAgreement::Different;
        c.sentence =
            who +
            (c.agreement == RerunAgreement::WithinNoise ? " is within noise of its original: "
                                                        : " is different from its original: ") +
            differs + "; its loss curve sits " + formatNumber(c.curve_units, 2) +
            " band widths from the arm's mean over the last quarter, its " + metricLabel(c.metric) +
            " " + formatNumber(c.final_units, 2) + " (1 = the edge of the " +
            std::to_string(c.band_seeds) + " seeds' ±2σ).";
    } else {
        c.agreement = RerunAgreement::NoiseUnknown;
        c.sentence = who + " differs from its original: " + differs +
                     "; the arm ran one seed, so there is no seed noise to judge the "
                     "difference by.";
    }
    if (!deterministic) {
        c.sentence +=
            " The original ran without deterministic mode, so bit-identical losses "
            "were not expected.";
    }
    return c;
}

std::vector<RerunComparison> compareReruns(const ExperimentData& data) {
    std::vector<RerunComparison> out;
    for (const auto& rerun : data.reruns) {
        auto original = std::find_if(data.runs.begin(), data.runs.end(), [&](const RunData& r) {
            return r.row.id == rerun.row.rerun_of;
        });
        if (original == data.runs.end()) {
            continue;
        }
        std::vector<const RunData*> arm_runs;
        for (const auto& r : data.runs) {
            if (r.row.arm == original->row.arm) {
                arm_runs.push_back(&r);
            }
        }
        out.push_back(compareRerun(*original, rerun, arm_runs, data.spec.deterministic));
    }
    return out;
}

std::vector<RerunComparison> rerunsOfExperiment(const store::Database& db, int64_t experiment_id) {
    if (db.rerunsOf(experiment_id).empty()) {
        return {};
    }
    const auto data = loadExperiment(db, experiment_id);
    return data ? compareReruns(*data) : std::vector<RerunComparison>{};
}

std::vector<RerunComparison> rerunComparison(const store::Database& db, int64_t rerun_id) {
    const auto row = db.run(rerun_id);
    if (!row || row->rerun_of == 0) {
        return {};
    }
    const auto original = db.run(row->rerun_of);
    if (!original) {
        return {};
    }
    std::vector<RerunComparison> out;
    for (auto& c : rerunsOfExperiment(db, original->experiment_id)) {
        if (c.rerun == rerun_id) {
            out.push_back(std::move(c));
        }
    }
    return out;
}

std::string rerunCommand(const std::string& db_path, int64_t run_id) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(db_path, ec);
    const std::string given = ec ? db_path : absolute.lexically_normal().string();
    std::string path = given;
    if (given.find_first_of(" '\"$`\\*?[]#~&;|<>(){}!") != std::string::npos) {
        path = "'";
        for (char c : given) {
            path += c == '\'' ? std::string("'\\''") : std::string(1, c);
        }
        path += "'";
    }
    return "ampbench-cli --db " + path + " rerun " + std::to_string(run_id);
}

}  // namespace ampbench::analysis
