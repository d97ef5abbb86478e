// `list`, `show`, `export`, `presets`: read the store, print or write files.
#include "cli/Commands.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/AdviseCommand.h"
#include "cli/ExitCodes.h"
#include "cli/OpenDatabase.h"
#include "cli/Terminal.h"
#include "core/analysis/Advice.h"
#include "core/analysis/AnalysisJson.h"
#include "core/analysis/ComparisonTable.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/Format.h"
#include "core/analysis/LayerNumerics.h"
#include "core/analysis/MemoryMeasure.h"
#include "core/analysis/Reproduction.h"
#include "core/analysis/Summary.h"
#include "core/config/Placement.h"
#include "core/config/Presets.h"
#include "core/probe/Environment.h"
#include "core/run/FusedGroup.h"
#include "core/run/InputFiles.h"
#include "core/store/Database.h"
#include "core/store/Export.h"
#include "core/store/NumericsStore.h"
#include "core/store/OutputFile.h"

namespace ampbench::cli {
namespace {

std::unique_ptr<store::Database> openForReading(const std::string& path, int& code) {
    auto db = openOrSay(path, store::Database::Mode::ReadOnly);
    code = db ? kOk : kStoreError;
    return db;
}

}  // namespace

int commandPresets() {
    for (const auto& name : config::presetNames()) {
        say(stdout, "%-22s %s\n", name.c_str(), config::presetDescription(name).c_str());
    }
    return kOk;
}

int commandList(const std::string& db_path) {
    int code = kOk;
    auto db = openForReading(db_path, code);
    if (!db) {
        return code;
    }
    auto experiments = db->experiments();
    if (experiments.empty()) {
        say(stdout, "no experiments in %s\n", db_path.c_str());
    }
    for (const auto& e : experiments) {
        say(stdout, "experiment %lld  %s  (%s, %d runs)\n", static_cast<long long>(e.id),
            analysis::printable(e.name, false).c_str(), e.created_at.c_str(), e.run_count);
        analysis::TextTable t({"run", "arm", "seed", "status", "steps", "started"});
        t.alignRight({0, 2, 4});
        for (const auto& r : db->runs(e.id)) {
            t.addRow({std::to_string(r.id), r.arm, std::to_string(r.seed), run::toString(r.status),
                      std::to_string(r.last_step) + "/" + std::to_string(r.planned_steps),
                      r.started_at});
        }
        say(stdout, "%s\n", t.render().c_str());
    }
    if (const auto trash = db->trash(); !trash.empty()) {
        say(stdout, "%zu in the trash (not listed; restore or empty it in the GUI's History tab)\n",
            trash.size());
    }
    return kOk;
}

bool storedArmsReadable(const analysis::ExperimentData& data, const std::string& db_path) {
    bool readable = true;
    for (const auto& r : data.runs) {
        if (const std::string problem = analysis::storedArmProblem(r.row); !problem.empty()) {
            say(stderr, "%s: %s\n", db_path.c_str(), analysis::printable(problem, false).c_str());
            readable = false;
        }
    }
    return readable;
}

void printArmTable(const store::Database& db, const config::ExperimentSpec& spec,
                   int64_t experiment_id, const std::string& device, const char* timing,
                   const char* cpu_memory) {
    const auto arms = analysis::summarizeArms(analysis::summarizeExperimentRuns(db, experiment_id));
    const bool cuda = config::onCuda(device);
    const auto runs = db.runs(experiment_id);
    std::vector<analysis::MemoryMeasure> measures;
    for (const auto& r : runs) {
        if (!r.env_json.empty()) {
            measures.push_back(analysis::memoryMeasure(r.env_json));
        }
    }
    // What the memory column is: the CUDA allocator's, a CPU run's own tensors, or (a
    // training script) its process's resident set.
    std::string label =
        measures.empty() ? (cuda ? "peak alloc" : "peak RSS") : analysis::memoryLabel(measures);
    std::string meaning = cpu_memory;
    if (label == "peak allocated" || (measures.empty() && cuda)) {
        label = "peak alloc";
        meaning = "CUDA caching allocator, peak allocated";
    } else if (label == "peak in tensors") {
        meaning = "CPU: the most each run's own tensors held";
    } else if (label == "peak memory") {
        meaning = "measured in different ways, so not comparable";
    }
    say(stdout, "\n%s\n", analysis::printable(spec.name, false).c_str());
    say(stdout, "%s", analysis::comparisonTable(arms, label).render().c_str());
    if (!runs.empty() && !runs.front().env_json.empty()) {
        say(stdout, "on %s\n",
            probe::describe(probe::environmentFromJson(runs.front().env_json)).c_str());
    }
    const char* base = arms.empty() ? "baseline" : arms.front().arm.c_str();
    say(stdout,
        "speed-up = %s's time per sample \xC3\xB7 the arm's (each run's median over its timed "
        "steps, %s); memory = peak \xC3\xB7 %s's (%s).\n",
        base, timing, base, meaning.c_str());
    if (spec.fast_verdict && cuda) {
        say(stdout,
            "fast verdict: the table's times and memory are the packed runs' own, on a shared "
            "GPU; the verdicts' speed-up and memory come from each arm timed alone (cuDNN "
            "autotuning %s).\n",
            config::cudnnBenchmark(spec) && !spec.deterministic ? "on" : "off");
    }
}

void printVerdicts(const store::Database& db, int64_t experiment_id) {
    const auto data = analysis::loadExperiment(db, experiment_id);
    if (!data || data->runs.empty()) {
        return;
    }
    if (!storedArmsReadable(*data, db.path())) {
        say(stderr, "no verdicts: they read each run's arm\n");
        return;
    }
    const auto a = analysis::analyzeExperiment(*data);
    if (a.verdicts.size() < 2) {
        return;
    }
    say(stdout, "verdicts against %s:\n", analysis::printable(a.baseline, false).c_str());
    for (const auto& v : a.verdicts) {
        if (v.arm == a.baseline) {
            // A launch-bound baseline is why no AMP arm can show a speed-up.
            for (const auto& f : v.next_checks) {
                if (f.code == analysis::FindingCode::LaunchBound) {
                    say(stdout, "  %s (the baseline): %s\n",
                        analysis::printable(v.arm, false).c_str(), analysis::describe(f).c_str());
                }
            }
            continue;
        }
        // The answer first: the verdict, the speed and the memory against the baseline.
        say(stdout, "  %s: %s, %s %s's speed at %s its memory; %s\n",
            analysis::printable(v.arm, false).c_str(), analysis::toString(v.verdict).c_str(),
            analysis::formatRatio(v.gains.speedup).c_str(),
            analysis::printable(a.baseline, false).c_str(),
            analysis::formatRatio(v.gains.memory_ratio).c_str(),
            analysis::describe(v.summary).c_str());
        for (const auto& f : v.reasons) {
            // A fast verdict's speed-up and memory come from each arm's passes alone (the
            // table is the packed runs' own): the line that holds them is its evidence.
            const bool alone =
                f.code == analysis::FindingCode::Gains && !v.gains.timing_mode.empty();
            if (alone || f.code == analysis::FindingCode::AaCheck ||
                f.code == analysis::FindingCode::TimeToTarget) {
                say(stdout, "    %s\n", analysis::describe(f).c_str());
            }
        }
        for (const auto& f : v.next_checks) {
            if (f.code == analysis::FindingCode::AaTimingDrift ||
                f.code == analysis::FindingCode::AaFalseAlarm ||
                f.code == analysis::FindingCode::LaunchBound) {
                say(stdout, "    %s\n", analysis::describe(f).c_str());
            }
        }
    }
    for (const auto& r : a.incomplete) {
        say(stdout, "  left out: %s\n", r.describe().c_str());
    }
}

int commandShowNumerics(const std::string& db_path, int64_t id) {
    int code = kOk;
    auto db = openForReading(db_path, code);
    if (!db) {
        return code;
    }
    auto run = db->run(id);
    if (!run) {
        say(stderr, "no run %lld in %s\n", static_cast<long long>(id), db_path.c_str());
        return kNotFound;
    }
    const auto rows = store::NumericsStore(*db).rows(id);
    say(stdout, "run %lld: experiment %lld '%s', arm %s, seed %llu\n", static_cast<long long>(id),
        static_cast<long long>(run->experiment_id),
        analysis::printable(run->experiment_name, false).c_str(),
        analysis::printable(run->arm, false).c_str(), static_cast<unsigned long long>(run->seed));
    if (rows.empty()) {
        say(stdout,
            "no per-layer numerics recorded: train with numerics_every > 0 in the spec "
            "(optimizer steps between records)\n");
        return kOk;
    }
    const auto summary = analysis::summarizeNumerics(rows);
    std::string formats;
    for (const auto& f : analysis::formatsOf(summary)) {
        formats += (formats.empty() ? "" : ", ") + f;
    }
    say(stdout,
        "numerics    %zu tensors at %zu steps (%lld to %lld); the thresholds of %s (the format "
        "each tensor is held in) at the loss scale in use\n",
        summary.layers.size(), summary.steps.size(), static_cast<long long>(summary.steps.front()),
        static_cast<long long>(summary.steps.back()), formats.c_str());
    say(stdout, "%s", analysis::worstLayersText(summary, 10).c_str());
    return kOk;
}

int commandShow(const std::string& db_path, int64_t id, bool experiment, bool json) {
    int code = kOk;
    auto db = openForReading(db_path, code);
    if (!db) {
        return code;
    }
    if (experiment) {
        auto e = db->experiment(id);
        if (!e) {
            say(stderr, "no experiment %lld in %s\n", static_cast<long long>(id), db_path.c_str());
            return kNotFound;
        }
        if (!e->trashed_at.empty()) {
            say(stderr,
                "experiment %lld is in the trash (since %s); restore it in the GUI's "
                "History tab to list it again\n",
                static_cast<long long>(id), e->trashed_at.c_str());
        }
        const auto data = analysis::loadExperiment(*db, id);
        if (!data) {
            say(stderr, "no experiment %lld in %s\n", static_cast<long long>(id), db_path.c_str());
            return kNotFound;
        }
        const bool readable = storedArmsReadable(*data, db_path);
        if (json) {
            if (!readable) {
                say(stderr, "show: no analysis was written; the verdicts read each run's arm\n");
                return kStoreError;
            }
            printJson(analysis::reportJson(*data, analysis::analyzeExperiment(*data)), 2);
            return kOk;
        }
        auto arms = analysis::summarizeArms(analysis::summarizeExperimentRuns(*db, id));
        say(stdout, "experiment %lld  %s\n%s", static_cast<long long>(id),
            analysis::printable(e->name, false).c_str(),
            analysis::comparisonTable(arms, "peak memory").render().c_str());
        if (!readable) {
            say(stderr, "no verdicts: they read each run's arm\n");
            return kStoreError;
        }
        printVerdicts(*db, id);
        if (analysis::isAdvice(*data)) {
            say(stdout, "\n");
            return printAdvice(*db, id);
        }
        return kOk;
    }
    auto run = db->run(id);
    if (!run) {
        say(stderr, "no run %lld in %s\n", static_cast<long long>(id), db_path.c_str());
        return kNotFound;
    }
    auto steps = db->steps(id);
    auto evals = db->evals(id);
    auto s = analysis::summarizeRun(*run, steps, evals, run::fusedGroupSize(db->events(id)));
    say(stdout, "run %lld: experiment %lld '%s', arm %s, seed %llu\n", static_cast<long long>(id),
        static_cast<long long>(run->experiment_id),
        analysis::printable(run->experiment_name, false).c_str(),
        analysis::printable(run->arm, false).c_str(), static_cast<unsigned long long>(run->seed));
    if (!run->label.empty()) {
        say(stdout, "label       %s\n", analysis::printable(run->label, false).c_str());
    }
    if (!run->tags.empty()) {
        say(stdout, "tags        %s\n",
            analysis::printable(store::Database::joinTags(run->tags), false).c_str());
    }
    if (run->inTrash()) {
        say(stdout, "trash       in the trash%s (restore it in the GUI's History tab)\n",
            run->trashed_at.empty() ? " with its experiment"
                                    : (" since " + run->trashed_at).c_str());
    }
    say(stdout, "status      %s%s%s\n", run::toString(run->status).c_str(),
        run->error.empty() ? "" : ": ", analysis::printable(run->error).c_str());
    say(stdout, "started     %s\nended       %s\n", run->started_at.c_str(), run->ended_at.c_str());
    if (!run->env_json.empty()) {
        say(stdout, "environment %s\n",
            probe::describe(probe::environmentFromJson(run->env_json)).c_str());
    }
    const std::string arm_problem = analysis::storedArmProblem(*run);
    say(stdout, "arm spec    %s\n", analysis::printable(run->spec_json).c_str());
    if (const int64_t rows = store::NumericsStore(*db).count(id); rows > 0) {
        say(stdout, "numerics    %lld per-layer rows: show %lld --numerics for the worst layers\n",
            static_cast<long long>(rows), static_cast<long long>(id));
    }
    if (!run->env_json.empty()) {
        const auto env = probe::environmentFromJson(run->env_json);
        say(stdout, "binary      ampbench %s, commit %s\n", env.ampbench_version.c_str(),
            env.ampbench_commit.empty() ? "(not recorded)" : env.ampbench_commit.c_str());
    }
    if (const std::string bad = run::inputsProblem(run->inputs_json); !bad.empty()) {
        say(stdout, "files       cannot be read: the record (runs.inputs_json)%s\n",
            analysis::printable(bad, false).c_str());
    }
    for (const auto& f : run::inputsFromJson(run->inputs_json)) {
        say(stdout, "file        %s %s: %s\n", analysis::printable(f.field, false).c_str(),
            analysis::printable(f.path, false).c_str(),
            f.kind == "missing"
                ? "could not be read"
                : (std::to_string(f.files) + (f.files == 1 ? " file, " : " files, ") +
                   analysis::formatBytes(f.bytes) + ", CRC-32 " +
                   analysis::printable(f.checksum, false) +
                   (f.method == "listing" ? " of names, sizes and times" : ""))
                      .c_str());
    }
    if (run->rerun_of > 0) {
        say(stdout, "rerun of    run %lld\n", static_cast<long long>(run->rerun_of));
        for (const auto& c : analysis::rerunComparison(*db, id)) {
            say(stdout, "            %s\n", analysis::printable(c.sentence, false).c_str());
        }
    }
    say(stdout, "rerun with  %s\n", analysis::rerunCommand(db_path, id).c_str());
    say(stdout, "steps       %lld of %lld (%lld timed), %lld samples\n",
        static_cast<long long>(s.steps), static_cast<long long>(run->planned_steps),
        static_cast<long long>(s.timed_steps), static_cast<long long>(s.samples));
    say(stdout, "step time   median %s (p10 %s, p90 %s), %s samples/s\n",
        analysis::formatMs(s.median_step_ms).c_str(), analysis::formatMs(s.p10_step_ms).c_str(),
        analysis::formatMs(s.p90_step_ms).c_str(),
        analysis::formatNumber(s.samples_per_s, 0).c_str());
    say(stdout, "data wait   %s of step time\n",
        analysis::formatPercent(s.data_wait_share).c_str());
    say(stdout, "peak memory %s\n", analysis::formatBytes(s.peak_mem).c_str());
    say(stdout, "train loss  %s (mean of the last 10%% of steps)\n",
        analysis::formatNumber(s.final_train_loss, 4).c_str());
    say(stdout, "validation  loss %s, accuracy %s\n",
        analysis::formatNumber(s.final_val_loss, 4).c_str(),
        analysis::formatPercent(s.final_val_accuracy, 2).c_str());
    say(stdout, "skipped     %lld steps; minimum loss scale %s\n",
        static_cast<long long>(s.skipped), analysis::formatNumber(s.min_loss_scale, 0).c_str());
    auto events = db->events(id);
    if (!events.empty()) {
        say(stdout, "events:\n");
        for (const auto& ev : events) {
            say(stdout, "  step %lld  %s  %s\n", static_cast<long long>(ev.step),
                run::toString(ev.kind).c_str(), analysis::printable(ev.message).c_str());
        }
    }
    if (!arm_problem.empty()) {  // everything else of the run is shown; scripts learn of it
        say(stderr, "%s: %s\n", db_path.c_str(), arm_problem.c_str());
        return kStoreError;
    }
    return kOk;
}

int commandExport(const std::string& db_path, const std::vector<int64_t>& ids,
                  const std::string& csv, const std::string& json, bool experiment) {
    int code = kOk;
    auto db = openForReading(db_path, code);
    if (!db) {
        return code;
    }
    std::vector<int64_t> run_ids;
    for (int64_t id : ids) {
        if (experiment) {
            if (!db->experiment(id)) {
                say(stderr, "no experiment %lld in %s\n", static_cast<long long>(id),
                    db_path.c_str());
                return kNotFound;
            }
            for (const auto& r : db->runs(id)) {
                run_ids.push_back(r.id);
            }
        } else {
            if (!db->run(id)) {
                say(stderr, "no run %lld in %s\n", static_cast<long long>(id), db_path.c_str());
                return kNotFound;
            }
            run_ids.push_back(id);
        }
    }
    for (const std::string* path : {&csv, &json}) {
        if (std::string clash = store::outputClash(*path, db_path); !clash.empty()) {
            say(stderr, "%s\n", clash.c_str());
            return kIoError;
        }
    }
    try {
        if (!csv.empty()) {
            int64_t rows = 0;
            store::writeFileAtomically(
                csv, [&](std::ostream& out) { rows = store::exportCsv(*db, run_ids, out); });
            say(stderr, "wrote %lld rows to %s\n", static_cast<long long>(rows), csv.c_str());
        }
        if (!json.empty()) {
            store::writeFileAtomically(
                json, [&](std::ostream& out) { store::exportJson(*db, run_ids, out); });
            say(stderr, "wrote %zu runs to %s\n", run_ids.size(), json.c_str());
        }
    } catch (const store::OutputError& e) {
        say(stderr, "%s\n", e.what());
        return kIoError;
    }
    return kOk;
}

}  // namespace ampbench::cli
