#include "core/analysis/ExperimentAnalysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <utility>

#include "core/analysis/MemoryMeasure.h"
#include "core/config/Placement.h"
#include "core/config/PlannedArm.h"
#include "core/run/FusedGroup.h"

namespace ampbench::analysis {
namespace {

using nlohmann::json;

json parseOrEmpty(const std::string& text) {
    if (text.empty()) {
        return json::object();
    }
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    return j.is_object() ? j : json::object();
}

template <class T>
T field(const json& j, const char* key, T fallback) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        return fallback;
    }
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        return fallback;
    }
}

ArmFacts factsOf(const RunData* run, const std::string& device) {
    ArmFacts f;
    if (!run) {
        return f;
    }
    const config::PlannedArm planned = config::plannedArmFromJson(run->row.spec_json);
    f.precision = planned.resolvedOn(device);
    f.accumulation = planned.arm.accumulation;
    f.lr_rule = planned.arm.lr_rule;
    f.lr = std::isfinite(planned.lr) ? planned.lr : kUnknown;
    f.effective_batch = planned.effective_batch;
    f.channels_last = planned.arm.channels_last;
    f.cuda_graph = planned.arm.cuda_graph;
    f.fp8_recipe = planned.arm.fp8_recipe;
    f.loss_scaling = planned.arm.loss_scaling;
    return f;
}

/// Whether two runs' arms train alike: every setting but the name and the seeds.
bool sameSettings(const RunData* a, const RunData* b) {
    if (!a || !b) {
        return false;
    }
    config::ArmSpec x = config::plannedArmFromJson(a->row.spec_json).arm;
    config::ArmSpec y = config::plannedArmFromJson(b->row.spec_json).arm;
    x.name = y.name;
    x.seed_offset = y.seed_offset;
    x.repeats = y.repeats;
    return x == y;
}

/// The metric every finished run on both sides has: validation accuracy when all
/// evaluated with an accuracy, validation loss when all evaluated without one
/// (regression), the final training loss otherwise.
FinalGap finalMetricGap(const std::vector<const RunData*>& base,
                        const std::vector<const RunData*>& arm,
                        const std::map<int64_t, RunSummary>& summaries) {
    bool all_eval = !base.empty() && !arm.empty();
    for (const auto* r : base) {
        all_eval = all_eval && !r->evals.empty();
    }
    for (const auto* r : arm) {
        all_eval = all_eval && !r->evals.empty();
    }
    bool accuracy = all_eval;
    for (const auto* side : {&base, &arm}) {
        for (const auto* r : *side) {
            accuracy = accuracy && std::isfinite(summaries.at(r->row.id).final_val_accuracy);
        }
    }
    const std::string metric = accuracy ? "val_accuracy" : all_eval ? "val_loss" : "train_loss";
    auto value = [&](const RunData* r) {
        const auto& s = summaries.at(r->row.id);
        return accuracy ? s.final_val_accuracy : all_eval ? s.final_val_loss : s.final_train_loss;
    };
    std::vector<double> b, a;
    for (const auto* r : base) {
        b.push_back(value(r));
    }
    for (const auto* r : arm) {
        a.push_back(value(r));
    }
    // Accuracy below a tenth of a point, or loss below 0.1% of itself, is resolution.
    const double floor = accuracy ? 0.001 : 1e-3 * std::fabs(mean(b));
    return finalGap(metric, b, a, floor);
}

/// When each run first evaluated at the baseline's final mean metric or better.
TimeToTarget timeToTarget(const std::vector<const RunData*>& base,
                          const std::vector<const RunData*>& arm, const FinalGap& g) {
    TimeToTarget tt;
    if (g.metric == "train_loss" || !std::isfinite(g.base_mean)) {
        return tt;
    }
    const bool accuracy = g.metric == "val_accuracy";
    const double slack = 1e-12;
    // An accuracy under a tenth of a point (the metric's resolution, finalMetricGap) is
    // chance on synthetic tokens or a metric the task does not have: it is reached
    // before training, and no time to it means anything.
    if (accuracy && g.base_mean < 0.001) {
        return tt;
    }
    // A baseline that ended no better than its first evaluation (an accuracy that
    // stayed at 0 on data it cannot classify) sets no target worth reaching.
    double first_sum = 0;
    int firsts = 0;
    for (const auto* r : base) {
        double first = 0;
        int finite = 0;
        for (const auto& e : r->evals) {
            const double m = accuracy ? e.val_accuracy : e.val_loss;
            if (std::isfinite(m) && finite++ == 0) {
                first = m;
            }
        }
        if (finite > 1) {  // its first evaluation is not its last
            first_sum += first;
            ++firsts;
        }
    }
    if (firsts > 0) {
        const double first = first_sum / firsts;
        if (accuracy ? g.base_mean <= first + slack : g.base_mean >= first - slack) {
            return tt;
        }
    }
    tt.accuracy = accuracy;
    tt.target = g.base_mean;
    auto mean_reach = [&](const std::vector<const RunData*>& runs, int& reached, double& wall,
                          double& samples) {
        double wall_sum = 0, samples_sum = 0;
        reached = 0;
        for (const auto* r : runs) {
            for (const auto& e : r->evals) {
                const double m = tt.accuracy ? e.val_accuracy : e.val_loss;
                if (std::isfinite(m) &&
                    (tt.accuracy ? m >= tt.target - slack : m <= tt.target + slack)) {
                    wall_sum += e.wall_s;
                    samples_sum += static_cast<double>(e.samples);
                    ++reached;
                    break;
                }
            }
        }
        wall = reached ? wall_sum / reached : kUnknown;
        samples = reached ? samples_sum / reached : kUnknown;
    };
    tt.runs = static_cast<int>(arm.size());
    mean_reach(arm, tt.reached, tt.wall_s, tt.samples);
    int base_reached = 0;
    mean_reach(base, base_reached, tt.base_wall_s, tt.base_samples);
    return tt;
}

}  // namespace

std::string IncompleteRun::describe() const {
    return "run " + std::to_string(run_id) + " (" + arm + ", seed " + std::to_string(seed) +
           "): " + run::toString(status) + " at step " + std::to_string(last_step) + " of " +
           std::to_string(planned_steps);
}

std::vector<std::string> armOrder(const ExperimentData& data) {
    std::vector<std::string> order;
    std::set<std::string> seen;
    if (data.spec_ok) {
        for (const auto& arm : data.spec.arms) {
            if (seen.insert(arm.name).second) {
                order.push_back(arm.name);
            }
        }
    }
    for (const auto& r : data.runs) {
        if (seen.insert(r.row.arm).second) {
            order.push_back(r.row.arm);
        }
    }
    return order;
}

MetricBand validationBand(const std::string& arm, const std::vector<const RunData*>& runs,
                          bool accuracy) {
    std::vector<const std::vector<run::EvalRecord>*> evals;
    for (const auto* r : runs) {
        evals.push_back(&r->evals);
    }
    return evaluationBand(arm, evals, accuracy);
}

namespace {

/// The runs of an experiment by what they may enter. Looking up an arm without runs
/// gives an empty list (or no run), as every step expects.
struct RunSets {
    std::map<std::string, std::vector<const RunData*>> complete;  ///< not partial
    std::map<std::string, std::vector<const RunData*>> finished;  ///< enter the figures
    std::map<std::string, std::vector<const RunData*>> every;     ///< partial runs too
    std::map<std::string, int> passes;  ///< runs that only timed the arm (timingPass)
    std::map<std::string, const RunData*> first_of_arm;
    std::map<int64_t, RunSummary> summaries;  ///< of the complete runs, by run id
};

/// Which arm is the baseline (the chosen one where it names an arm, else the first);
/// returns the arms in table order, the baseline first.
std::vector<std::string> orderArms(ExperimentAnalysis& a, const ExperimentData& data,
                                   const AnalysisOptions& options) {
    auto order = armOrder(data);
    a.arm_order = order;
    a.baseline = order.empty() ? std::string() : order.front();
    auto chosen = std::find(order.begin(), order.end(), options.baseline);
    if (!options.baseline.empty() && chosen != order.end()) {
        a.baseline = options.baseline;
        std::rotate(order.begin(), chosen, chosen + 1);  // the baseline leads every table
    }
    return order;
}

/// What the device makes "amp" and "peak memory" mean, whether runs repeat exactly,
/// and whether their times compare (one machine).
void describeEnvironment(ExperimentAnalysis& a, const ExperimentData& data) {
    std::set<std::string> machines;
    for (const auto& r : data.runs) {
        const json env = parseOrEmpty(r.row.env_json);
        if (env.empty()) {
            continue;
        }
        if (a.device.empty()) {
            a.device = field<std::string>(env, "device", "");
        }
        machines.insert(field<std::string>(env, "hostname", "") + " / " +
                        field<std::string>(env, "device_name", ""));
    }
    std::vector<MemoryMeasure> measures;
    for (const auto& r : data.runs) {
        if (!r.row.env_json.empty()) {
            measures.push_back(memoryMeasure(r.row.env_json));
        }
    }
    a.memory_label = measures.empty() && config::onCuda(a.device) ? "peak allocated"
                     : measures.empty()                           ? "peak RSS"
                                                                  : memoryLabel(measures);
    if (a.memory_label == "peak memory") {
        a.warnings.push_back(
            "the runs' memory was measured in different ways (the run's own tensors, the "
            "process's resident set, the CUDA allocator): their peaks do not compare");
    }
    if (data.spec_ok && !data.spec.deterministic && !data.runs.empty()) {
        a.reproducibility =
            std::string("runs are not bit-reproducible: deterministic mode was off, so ") +
            (config::onCuda(a.device)
                 ? "cuDNN's benchmark may pick other algorithms in another process and some "
                   "kernels add in a varying order; "
                 : "") +
            "the same seed can give another curve. Turn it on (--deterministic, spec "
            "\"deterministic\": true) to repeat a run exactly";
    }
    if (machines.size() > 1) {
        a.warnings.push_back("runs ran on " + std::to_string(machines.size()) +
                             " different machines or devices; step times and memory are only "
                             "comparable between runs of the same one");
    }
}

/// Which runs are partial (named and left out), complete and finished; the complete
/// runs' summaries and each arm's, in table order.
RunSets partitionRuns(ExperimentAnalysis& a, const ExperimentData& data,
                      const std::vector<std::string>& order) {
    RunSets sets;
    for (const auto& r : data.runs) {
        sets.first_of_arm.emplace(r.row.arm, &r);
        sets.every[r.row.arm].push_back(&r);
        // A finished pass gives its arm's speed and memory (aloneGains), not a curve; one
        // that failed or was cut short counts as any such run does.
        if (finishedPass(r.row)) {
            ++sets.passes[r.row.arm];
            continue;
        }
        if (isIncomplete(r.row.status)) {
            a.incomplete.push_back({r.row.id, r.row.arm, r.row.seed, r.row.status, r.row.last_step,
                                    r.row.planned_steps});
            continue;
        }
        sets.complete[r.row.arm].push_back(&r);
        if (entersFigures(r.row.status, static_cast<int64_t>(r.steps.size()))) {
            sets.finished[r.row.arm].push_back(&r);
        }
        auto s = summarizeRun(r.row, r.steps, r.evals, run::fusedGroupSize(r.events));
        sets.summaries[r.row.id] = s;
        a.runs.push_back(s);
    }
    const auto arm_summaries = summarizeArms(a.runs, a.baseline);
    for (const auto& arm : order) {
        for (const auto& s : arm_summaries) {
            if (s.arm == arm) {
                a.arms.push_back(s);
            }
        }
    }
    return sets;
}

/// The loss curves: one EMA horizon in samples for every run, then a common grid for
/// the baseline's noise band and each arm's mean.
void buildCurves(ExperimentAnalysis& a, const ExperimentData& data,
                 const std::vector<std::string>& order, RunSets& sets,
                 const AnalysisOptions& options) {
    double max_samples = 0;
    for (const auto& r : data.runs) {
        if (!r.steps.empty() && !finishedPass(r.row)) {
            max_samples = std::max(max_samples, static_cast<double>(r.steps.back().samples));
        }
    }
    const double tau = options.smoothing * max_samples;
    std::map<int64_t, size_t> curve_of_run;
    for (const auto& arm : order) {
        for (const auto* r : sets.complete[arm]) {
            if (!r->steps.empty()) {
                curve_of_run[r->row.id] = a.run_curves.size();
                a.run_curves.push_back(lossCurve(*r, tau));
            }
        }
    }
    auto curvesOf = [&](const std::vector<const RunData*>& runs) {
        std::vector<const RunCurve*> out;
        for (const auto* r : runs) {
            out.push_back(&a.run_curves[curve_of_run.at(r->row.id)]);
        }
        return out;
    };
    std::vector<const RunCurve*> all_finished;
    for (const auto& arm : order) {
        auto c = curvesOf(sets.finished[arm]);
        all_finished.insert(all_finished.end(), c.begin(), c.end());
    }
    const auto grid = commonGrid(all_finished, options.grid_points);
    a.band = noiseBand(curvesOf(sets.finished[a.baseline]), grid);
    for (const auto& arm : order) {
        if (!sets.finished[arm].empty() && !grid.empty()) {
            a.arm_curves.push_back({arm, static_cast<int>(sets.finished[arm].size()),
                                    meanCurve(curvesOf(sets.finished[arm]), grid)});
        }
    }
}

/// Validation: the metric every finished run has (accuracy where all have one, else
/// loss), as mean and sd per arm.
void buildValidation(ExperimentAnalysis& a, const std::vector<std::string>& order, RunSets& sets) {
    bool any_eval = false, accuracy = true;
    for (const auto& arm : order) {
        for (const auto* r : sets.finished[arm]) {
            for (const auto& e : r->evals) {
                any_eval = true;
                accuracy = accuracy && std::isfinite(e.val_accuracy);
            }
        }
    }
    if (!any_eval) {
        return;
    }
    a.validation_metric = accuracy ? "val_accuracy" : "val_loss";
    for (const auto& arm : order) {
        if (!sets.finished[arm].empty()) {
            MetricBand b = validationBand(arm, sets.finished[arm], accuracy);
            if (!b.x.empty()) {
                a.validation.push_back(std::move(b));
            }
        }
    }
}

/// The largest batch of each arm: its latest finished search's.
std::map<std::string, int64_t> maxBatches(const ExperimentData& data) {
    std::map<std::string, int64_t> max_batch;
    for (const auto& s : data.batch_searches) {
        if (s.status == "finished" && s.max_batch > 0) {
            max_batch[s.arm] = s.max_batch;
        }
    }
    return max_batch;
}

/// An arm's speed and memory against the baseline: from each arm alone where the
/// runs were packed (fast verdict), else from the finished runs; and its max batch.
Gains armGains(const std::string& arm, const std::string& baseline, RunSets& sets,
               std::map<std::string, int64_t>& max_batch) {
    Gains g = computeGains(sets.finished[baseline], sets.finished[arm]);
    if (auto alone = aloneGains(sets.every[baseline], sets.every[arm])) {
        alone->optimizer_steps = g.optimizer_steps;
        g = *alone;
    }
    g.max_batch = max_batch.count(arm) ? max_batch[arm] : 0;
    g.base_max_batch = max_batch.count(baseline) ? max_batch[baseline] : 0;
    if (g.max_batch > 0 && g.base_max_batch > 0) {
        g.max_batch_ratio =
            static_cast<double>(g.max_batch) / static_cast<double>(g.base_max_batch);
    }
    return g;
}

/// One arm's verdict: what it trains with, its health and gains, and for any arm but
/// the baseline how its curve, final metric and time to target compare.
ArmVerdict judgeArm(const std::string& arm, const ExperimentAnalysis& a, RunSets& sets,
                    const ArmFacts& base_facts, const std::string& model,
                    std::map<std::string, int64_t>& max_batch, const VerdictThresholds& thresholds,
                    const AnalysisOptions& options) {
    ArmVerdict v;
    v.arm = arm;
    v.facts = factsOf(sets.first_of_arm[arm], a.device);
    v.facts.baseline = a.baseline;
    v.facts.device = a.device;
    v.facts.base_lr = base_facts.lr;
    v.facts.base_effective_batch = base_facts.effective_batch;
    v.facts.model = model;
    v.facts.aa_copy =
        arm != a.baseline && sameSettings(sets.first_of_arm[arm], sets.first_of_arm[a.baseline]);
    v.runs_used = static_cast<int>(sets.complete[arm].size());
    // Runs not ended yet, or cancelled before they finished (the incomplete ones).
    auto seedsOf = [&](const std::string& of, bool (*which)(run::RunStatus)) {
        int n = 0;
        std::string seeds;
        for (const auto& r : a.incomplete) {
            if (r.arm == of && which(r.status)) {
                seeds += (n++ ? ", " : "") + std::to_string(r.seed);
            }
        }
        return std::make_pair(n, seeds);
    };
    const auto pending = [](run::RunStatus s) {
        return s == run::RunStatus::Queued || s == run::RunStatus::Running;
    };
    std::tie(v.pending, v.pending_seeds) = seedsOf(arm, pending);
    v.cancelled =
        seedsOf(arm, [](run::RunStatus s) { return s == run::RunStatus::Cancelled; }).first;
    std::tie(v.baseline_pending, v.baseline_pending_seeds) = seedsOf(a.baseline, pending);
    v.timing_passes = sets.passes[arm];
    v.health = armHealth(sets.complete[arm]);
    v.gains = armGains(arm, a.baseline, sets, max_batch);
    // A peak that is a process's resident set holds the program too: say so beside it.
    for (const auto* side : {&sets.complete[arm], &sets.complete[a.baseline]}) {
        for (const auto* r : *side) {
            v.gains.process_memory =
                v.gains.process_memory || memoryMeasure(r->row.env_json) == MemoryMeasure::Resident;
        }
    }
    if (arm == a.baseline) {
        v.verdict = Verdict::Baseline;
        v.gains.speedup_ci = {kUnknown, kUnknown};  // against itself: no interval to give
    } else {
        for (const auto& c : a.arm_curves) {
            if (c.arm == arm) {
                v.curve = compareCurves(a.band, c.mean, options.tail_fraction);
            }
        }
        const auto& base = sets.finished[a.baseline];
        v.final_gap = finalMetricGap(base, sets.finished[arm], sets.summaries);
        v.time_to_target = timeToTarget(base, sets.finished[arm], v.final_gap);
    }
    decideVerdict(v, a.band.seeds, thresholds);
    return v;
}

/// Every arm's verdict, in table order, under the spec's margin where it is wider.
void judgeArms(ExperimentAnalysis& a, const ExperimentData& data,
               const std::vector<std::string>& order, RunSets& sets,
               const AnalysisOptions& options) {
    auto max_batch = maxBatches(data);
    const json spec = parseOrEmpty(data.experiment.spec_json);
    const std::string model =
        spec.contains("model") ? field<std::string>(spec["model"], "name", "") : std::string();
    const ArmFacts base_facts = factsOf(sets.first_of_arm[a.baseline], a.device);
    VerdictThresholds thresholds = options.thresholds;
    if (data.spec_ok) {
        thresholds.margin = std::max(thresholds.margin, data.spec.tolerance_margin);
    }
    for (const auto& arm : order) {
        a.verdicts.push_back(
            judgeArm(arm, a, sets, base_facts, model, max_batch, thresholds, options));
    }
}

}  // namespace

ExperimentAnalysis analyzeExperiment(const ExperimentData& data, const AnalysisOptions& options) {
    ExperimentAnalysis a;
    a.experiment_id = data.experiment.id;
    a.name = data.experiment.name;
    a.reruns = compareReruns(data);
    const auto order = orderArms(a, data, options);
    describeEnvironment(a, data);
    RunSets sets = partitionRuns(a, data, order);
    buildCurves(a, data, order, sets, options);
    buildValidation(a, order, sets);
    if (sets.finished[a.baseline].empty() && !a.baseline.empty()) {
        a.warnings.push_back("the baseline arm " + a.baseline +
                             " has no finished run: there is nothing to judge the others against");
    }
    judgeArms(a, data, order, sets, options);
    return a;
}

}  // namespace ampbench::analysis
