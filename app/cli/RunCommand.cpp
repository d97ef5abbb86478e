// `ampbench-cli run`: spec from preset/config + flags, validated, trained into the store.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/Interrupt.h"
#include "cli/OpenDatabase.h"
#include "cli/Progress.h"
#include "cli/RunHooks.h"
#include "cli/ScriptRun.h"
#include "cli/SpecFlags.h"
#include "cli/StreamOutput.h"
#include "cli/Terminal.h"
#include "core/analysis/ComparisonTable.h"
#include "core/analysis/Format.h"
#include "core/analysis/Reproduction.h"
#include "core/analysis/Summary.h"
#include "core/config/ArmShorthand.h"
#include "core/config/DataPaths.h"
#include "core/config/Presets.h"
#include "core/config/SpecJson.h"
#include "core/config/Validation.h"
#include "core/data/DataError.h"
#include "core/probe/Environment.h"
#include "core/script/Trainers.h"
#include "core/store/Database.h"
#include "core/store/OutputFile.h"
#include "core/train/Experiment.h"
#include "core/train/SetupCheck.h"

namespace ampbench::cli {
namespace {

bool readFile(const std::string& path, std::string& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return true;
}

}  // namespace

void printErrors(const std::string& what, const std::vector<config::FieldError>& errors,
                 const std::vector<config::ArmSpec>& arms) {
    say(stderr, "%s:\n", what.c_str());
    for (const auto& e : errors) {
        say(stderr, "  %s\n", analysis::printable(config::describe(e, arms), false).c_str());
    }
}

std::optional<config::ValidSpec> buildSpec(const RunOverrides& o) {
    config::ExperimentSpec spec;
    if (o.base) {
        spec = *o.base;
    } else if (!o.config_file.empty()) {
        std::string text;
        if (!readFile(o.config_file, text)) {
            say(stderr, "cannot read %s\n", o.config_file.c_str());
            return std::nullopt;
        }
        std::vector<config::FieldError> errors;
        spec = config::specFromJsonText(text, errors);
        if (!errors.empty()) {
            config::renumberArmsAfterLeftOut(errors);
            printErrors(o.config_file + " has errors", errors, spec.arms);
            return std::nullopt;
        }
    } else {
        auto p = config::preset(o.preset.empty() ? "default" : o.preset);
        if (!p) {
            say(stderr, "unknown preset '%s'\n", o.preset.c_str());
            return std::nullopt;
        }
        spec = *p;
    }
    std::vector<config::FieldError> errors;
    // A flag that was given replaces the spec's field.
    auto assign = [](const auto& flag, auto& field) {
        if (flag) {
            field = *flag;
        }
    };
    if (!o.name.empty())
        spec.name = o.name;
    applySpecFlags(o, spec, errors);
    if (o.model) {
        if (config::isModelFile(*o.model)) {
            spec.model.name = "torchscript";
            spec.model.file = *o.model;
        } else {
            spec.model.name = *o.model;
        }
    }
    assign(o.dataset, spec.data.name);
    if (o.data_dir) {
        // The kind follows from what the path is, unless --dataset names it; a path
        // that says nothing (missing, no known extension) keeps the spec's kind,
        // whose reader then says what is wrong with it.
        std::string kind = o.dataset ? *o.dataset : config::datasetForPath(*o.data_dir);
        if (kind.empty() && spec.data.name != "synthetic-images" &&
            spec.data.name != "synthetic-tokens") {
            kind = spec.data.name;
        }
        if (kind.empty()) {
            errors.push_back({"--data", *o.data_dir,
                              "is neither a folder nor an .npz, .npy or .csv file (name the "
                              "kind with --dataset)"});
        } else {
            spec.data.name = kind;
        }
        if (kind == "fashion-mnist") {
            spec.data.dir = *o.data_dir;
        } else {
            spec.data.path = *o.data_dir;
        }
    }
    assign(o.save_weights, spec.save_weights);
    if (!o.seeds.empty())
        spec.seeds = o.seeds;
    if (!o.arms.empty()) {
        spec.arms.clear();
        for (const auto& text : o.arms) {
            std::string error;
            if (auto arm = config::parseArmShorthand(text, error)) {
                spec.arms.push_back(*arm);
            } else {
                errors.push_back({"--arm", text, error});
            }
        }
    }
    std::vector<config::FieldError> invalid;
    auto valid = config::ValidSpec::check(spec, invalid);
    const bool bad_arm_flags =
        std::any_of(errors.begin(), errors.end(), [](const auto& e) { return e.field == "--arm"; });
    for (auto& e : invalid) {
        // "arms = []" only repeats that the --arm flags above could not be read.
        if (!(bad_arm_flags && e.field == "arms" && spec.arms.empty())) {
            errors.push_back(std::move(e));
        }
    }
    if (!errors.empty()) {
        printErrors("invalid experiment (nothing was run)", errors, spec.arms);
        return std::nullopt;
    }
    return valid;
}

namespace {

/// What the spec does that its author may not expect; it runs all the same.
void printWarnings(const config::ExperimentSpec& spec) {
    for (const auto& w : config::warnings(spec)) {
        say(stderr, "warning: %s\n",
            analysis::printable(config::describe(w, spec.arms), false).c_str());
    }
}

}  // namespace

int preflight(const config::ExperimentSpec& spec, std::string& device, bool quiet) {
    const auto t0 = std::chrono::steady_clock::now();
    const train::SetupReport report = train::checkSetup(spec);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!report.ok()) {
        say(stderr, "cannot train this spec (nothing was run):\n");
        for (const auto& p : report.problems) {
            say(stderr, "  %s: %s\n", p.field.c_str(),
                analysis::printable(p.message, false).c_str());
        }
        return report.unreadable() ? kDataMissing : kUsage;
    }
    for (const auto& w : report.warnings) {
        say(stderr, "warning: %s\n", analysis::printable(w, false).c_str());
    }
    if (!quiet) {
        say(stderr, "%s (set-up checked in %.1f s)\n",
            analysis::printable(report.summary(), false).c_str(), took);
    }
    device = report.device;
    return kOk;
}

int commandRun(const std::string& db_path, const RunOverrides& o) {
    // With --stream, stdout carries only the stream: every human line goes to stderr.
    std::FILE* stream = nullptr;
    if (o.stream && !(stream = takeStdoutForStream()))
        return kIoError;
    const auto valid = buildSpec(o);
    if (!valid) {
        return kUsage;
    }
    // A script experiment's spec is the one stored: the script as the model, its
    // arguments and interpreter (what --dry-run prints and --save-spec writes).
    const bool is_script = !o.script.empty() || script::trainsWithScript(valid->spec());
    std::optional<config::ValidSpec> prepared;
    if (is_script && (o.dry_run || !o.save_spec.empty())) {
        script::ScriptSettings settings;
        if (const int code = prepareScript(*valid, o, prepared, settings); code != kOk) {
            return code;
        }
    }
    const config::ExperimentSpec& spec = prepared ? prepared->spec() : valid->spec();
    printWarnings(spec);
    if (!o.save_spec.empty()) {
        if (std::string clash = store::outputClash(o.save_spec, db_path); !clash.empty()) {
            say(stderr, "%s\n", clash.c_str());
            return kIoError;
        }
        try {
            store::writeFileAtomically(o.save_spec, config::specToJsonText(spec));
        } catch (const store::OutputError& e) {
            say(stderr, "%s\n", e.what());
            return kIoError;
        }
    }
    if (o.dry_run) {
        std::fputs((config::specToJsonText(spec) + "\n").c_str(), stdout);
        return kOk;
    }
    if (is_script) {  // the script is the model; it prepares from the spec as given
        return runScript(db_path, *valid, o, stream);
    }
    std::string device;
    if (int code = preflight(spec, device, o.quiet); code != kOk) {
        return code;
    }
    return trainSpec(db_path, *valid, device, o.quiet, 0, stream);
}

namespace {
/// When the program started (static initialisation, before main): the "total time"
/// a run prints counts from here, the set-up check and the fast verdict's passes in.
const std::chrono::steady_clock::time_point kProgramStart = std::chrono::steady_clock::now();
}  // namespace

int trainSpec(const std::string& db_path, const config::ValidSpec& valid, const std::string& device,
              bool quiet, int64_t rerun_of, std::FILE* stream,
              const script::ScriptSettings* script) {
    const config::ExperimentSpec& spec = valid.spec();
    std::unique_ptr<store::Database> db = openOrSay(db_path);
    if (!db) {
        return kStoreError;
    }
    // The stream hears the rows as the recorder commits them on this connection.
    StreamTap tap(*db, stream);
    RunStreamer* const streamer = tap.streamer();
    StreamOutput* const stream_out = tap.output();
    script::Trainers trainers;
    if (script) {
        trainers.script = *script;
        trainers.script.environment_json = probe::toJson(probe::probeEnvironment(device));
    }
    RunHooks::Options options;
    options.spec = &spec;
    options.device = device;
    options.db_path = db_path;
    options.script = script;
    options.quiet = quiet;
    options.terminal = isatty(STDERR_FILENO) != 0;
    options.planned = [&](const train::ExperimentPlan& plan) {
        if (streamer) {
            streamer->planned(script ? trainers.script.environment_json
                                     : probe::toJson(probe::probeEnvironment(device)),
                              plan.experiment_id);
            stream_out->setAdvice("training goes on into " + db_path + "; `ampbench-cli --db " +
                                  db_path + " tail --experiment " +
                                  std::to_string(plan.experiment_id) +
                                  " --follow --stream` streams it again");
        }
    };
    RunHooks hooks(std::move(options));
    run::CancelToken cancel;
    auto interrupt = std::make_unique<InterruptScope>(cancel);
    train::ExperimentResult result;
    if (const int code = sayingWhatStopped([&] {
            result = script::trainExperiment(*db, valid, cancel, hooks.hooks(), trainers, rerun_of);
        });
        code != kOk) {
        return code;
    }
    interrupt.reset();
    const train::ExperimentPlan& plan = result.plan;
    if (streamer) {
        streamer->closeExperiment(plan.experiment_id);
        db->setRecordListener(nullptr);
    }
    if (script) {
        printArmTable(*db, spec, plan.experiment_id, device, "as the script recorded them",
                      "CPU: peak resident set of the script's process");
    } else {
        printArmTable(*db, spec, plan.experiment_id, device, "mean over runs",
                      "CPU: peak resident set of the process, an upper bound");
    }
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - kProgramStart).count();
    if (rerun_of > 0) {
        for (const auto& c : analysis::rerunsOfExperiment(*db, db->run(rerun_of)->experiment_id)) {
            if (!plan.runs.empty() && c.rerun == plan.runs.front().run_id) {
                say(stdout, "%s\n", analysis::printable(c.sentence, false).c_str());
            }
        }
    } else {
        printVerdicts(*db, plan.experiment_id);
    }
    say(stdout, "experiment %lld in %s; total time %.1f s\n",
        static_cast<long long>(plan.experiment_id), db_path.c_str(), total);
    if (cancel.cancelled()) {
        say(stderr, "cancelled: the rows recorded so far are kept\n");
    }
    return hooks.exitCode(result, cancel);
}

}  // namespace ampbench::cli
