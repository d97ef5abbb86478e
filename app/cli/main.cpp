// ampbench-cli: the headless workbench. Trains comparisons into the store and reads them back.
#include <CLI/CLI.hpp>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "cli/AdviseCommand.h"
#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/LaunchFlags.h"
#include "cli/Launcher.h"
#include "cli/ReportCommand.h"
#include "cli/SpecFlags.h"
#include "cli/Terminal.h"
#include "cli/VersionText.h"
#include "core/analysis/Format.h"
#include "core/config/Advice.h"
#include "core/config/Presets.h"
#include "core/config/SpecFields.h"
#include "core/store/OutputFile.h"
#include "core/store/Paths.h"
#include "core/store/StoreError.h"

using namespace ampbench;

namespace {

/// "arm as NAME=PRECISION[,accum=...]...": the keys come from the arm's field table.
std::string armHelp() {
    std::string precisions;
    for (const auto& name : config::enumChoices<config::Precision>()) {
        precisions += (precisions.empty() ? "" : "|") + name;
    }
    std::string text = "arm as NAME=" + precisions;
    for (const auto& f : config::flatFields<config::ArmSpec>()) {
        if (!f.info->shorthand) {
            continue;
        }
        std::string value = "X";
        if (f.kind == config::ValueKind::Choice) {
            value.clear();
            for (const auto& c : f.choices) {
                value += (value.empty() ? "" : "|") + c;
            }
        } else if (f.kind == config::ValueKind::Bool) {
            value = "0|1";
        }
        text += std::string("[,") + f.info->shorthand + "=" + value + "]";
    }
    return text + "; repeat to replace the preset's arms";
}

/// Flags that build an experiment spec, shared by `run` and `find-batch`.
void addSpecOptions(CLI::App* cmd, cli::RunOverrides& ro) {
    auto* preset = cmd->add_option("--preset", ro.preset, "built-in experiment")
                       ->check(CLI::IsMember(config::presetNames()));
    cmd->add_option("--config", ro.config_file, "experiment spec as JSON")
        ->check(CLI::ExistingFile)
        ->excludes(preset);
    cmd->add_option("--name", ro.name, "experiment name");
    cmd->add_option("--model", ro.model,
                    "mlp | cnn | resnet | transformer, or your own model: a TorchScript .pt file");
    cmd->add_option("--dataset", ro.dataset, "fashion-mnist | synthetic-images | synthetic-tokens");
    cmd->add_option(
        "--data", ro.data_dir,
        "your data: an .npz (x, y) or .npy, an image folder (a sub-folder per class) or "
        "a .csv; or a folder with Fashion-MNIST's four IDX .gz files");
    cli::addSpecFlags(cmd, ro);  // one flag per spec field: SpecFlags.cpp
    cmd->add_option("--seeds", ro.seeds, "seeds, e.g. --seeds 1 2 3")
        ->expected(1, -1)
        ->check(CLI::Validator(
            [](std::string& text) {
                return text.find('-') == std::string::npos
                           ? std::string()
                           : "a seed is a whole number from 0 up, not " + text;
            },
            "SEED"));
    cmd->add_option("--arm", ro.arms, armHelp())->expected(1, -1);
}

/// The longest a launch waits or a cancel waits for its job: seven days.
constexpr double kMaxWaitSeconds = 7 * 24 * 3600;

/// Seconds for a waiting flag: a finite number above 0 and at most seven days
/// (inf, nan, a negative number or 1e300 would wait for ever or not at all).
CLI::Validator waitSeconds() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            const bool number = end != text.c_str() && *end == '\0';
            if (number && std::isfinite(v) && v > 0 && v <= kMaxWaitSeconds) {
                return {};
            }
            return "seconds above 0 and at most 604800 (7 days), not " + text;
        },
        "SECONDS");
}

/// A subcommand and what it does once parsed: the dispatch table of main.
struct Command {
    CLI::App* app;
    std::function<int(const std::string& db)> run;
};

/// --script and its flags, shared by `run` and `launch`: the user's own training script
/// as the model (app/cli/ScriptRun.cpp).
void addScriptOptions(CLI::App* cmd, cli::RunOverrides& ro) {
    auto* script = cmd->add_option("--script", ro.script,
                                   "your own Python training script, run once per arm and seed "
                                   "with the arm's settings in AMPBENCH_* variables; it records "
                                   "through the ampbench package (README: Your own training "
                                   "script)");
    cmd->add_option("--script-arg", ro.script_args,
                    "an argument for the script, in order; repeat it (--script-arg=--epochs "
                    "--script-arg=3 for one that starts with -)")
        ->needs(script)
        ->allow_extra_args(false);
    cmd->add_option("--python", ro.python,
                    "the Python interpreter for --script (default: $AMPBENCH_PYTHON, else python3)")
        ->needs(script);
    cmd->add_option("--script-silence", ro.script_silence_s,
                    "seconds a script may go without recording before it is stopped and its run "
                    "failed (default 900; 0: never)")
        ->needs(script)
        ->check(CLI::Range(0.0, 7.0 * 24 * 3600));
    for (const char* built_in : {"--model", "--save-weights"}) {
        if (auto* opt = cmd->get_option_no_throw(built_in)) {
            script->excludes(opt);
        }
    }
}

Command addRun(CLI::App& app) {
    auto options = std::make_shared<cli::RunOverrides>();
    cli::RunOverrides& ro = *options;
    auto* run = app.add_subcommand(
        "run", "train an experiment (default: the three-arm Fashion-MNIST comparison)");
    addSpecOptions(run, ro);
    run->add_option("--save-spec", ro.save_spec, "write the resolved spec as JSON to this file");
    run->add_option("--save-weights", ro.save_weights,
                    "folder for each run's trained model (TorchScript models)");
    run->add_flag("--dry-run", ro.dry_run, "validate and print the spec; train nothing");
    run->add_flag("-q,--quiet", ro.quiet, "no progress output");
    run->add_flag("--stream", ro.stream,
                  "also write the record stream (newline-delimited JSON) on stdout as rows are "
                  "recorded, for `ingest` on another machine; human output goes to stderr");
    addScriptOptions(run, ro);
    return {run, [options](const std::string& db) { return cli::commandRun(db, *options); }};
}

Command addLaunch(CLI::App& app) {
    auto spec = std::make_shared<cli::RunOverrides>();
    auto options = std::make_shared<cli::LaunchOptions>();
    cli::RunOverrides& lo = *spec;
    cli::LaunchOptions& launch_options = *options;
    auto* launch = app.add_subcommand(
        "launch",
        "start an experiment detached on this machine (it keeps training when the terminal or "
        "SSH session ends); prints one JSON line with the experiment id, pid and log");
    addSpecOptions(launch, lo);
    addScriptOptions(launch, lo);
    launch->add_flag("--config-stdin", launch_options.config_stdin,
                     "read the experiment spec as JSON from stdin");
    launch
        ->add_option("--wait", launch_options.wait_s,
                     "seconds to wait for the job to check its data and plan (default 300, at "
                     "most 7 days)")
        ->check(waitSeconds());
    // --slurm, --gridengine and each scheduler's options, from their declarations.
    cli::addSchedulerFlags(launch, launch_options);
    // A new collector for an experiment already launched: it plans nothing, so every
    // spec and submission option is refused beside it.
    auto* resume = launch->add_flag(
        "--resume", launch_options.resume,
        "start a new collector for a job array's experiment whose collector was killed (with "
        "--experiment): it records what the tasks streamed since and follows the array to "
        "its end");
    auto* experiment = launch
                           ->add_option("--experiment", launch_options.experiment,
                                        "the experiment to resume (with --resume)")
                           ->check(CLI::PositiveNumber);
    resume->needs(experiment);
    experiment->needs(resume);
    for (CLI::Option* opt : launch->get_options()) {
        const std::string name = opt->get_name();
        if (opt != resume && opt != experiment && name != "--wait" && name != "--help" &&
            !cli::isSchedulerSwitch(opt)) {
            resume->excludes(opt);
        }
    }
    return {launch, [spec, options](const std::string& db) {
                return cli::commandLaunch(db, *spec, *options);
            }};
}

Command addStatus(CLI::App& app) {
    auto id = std::make_shared<int64_t>(0);
    auto as_json = std::make_shared<bool>(false);
    auto* status = app.add_subcommand("status",
                                      "launched experiments: running, finished, failed, "
                                      "cancelled or interrupted, and each run's progress");
    status->add_option("--experiment", *id, "only this experiment")->check(CLI::PositiveNumber);
    status->add_flag("--json", *as_json, "as JSON");
    return {status,
            [id, as_json](const std::string& db) { return cli::commandStatus(db, *id, *as_json); }};
}

Command addCancel(CLI::App& app) {
    auto id = std::make_shared<int64_t>(0);
    auto timeout = std::make_shared<double>(120);
    auto* cancel = app.add_subcommand(
        "cancel", "cancel a launched experiment; its runs end cancelled with their rows kept");
    cancel->add_option("--experiment", *id, "experiment id")
        ->required()
        ->check(CLI::PositiveNumber);
    cancel
        ->add_option("--timeout", *timeout,
                     "seconds to wait for it to stop (default 120, at most 7 days)")
        ->check(waitSeconds());
    return {cancel,
            [id, timeout](const std::string& db) { return cli::commandCancel(db, *id, *timeout); }};
}

Command addHost(CLI::App& app) {
    auto data = std::make_shared<std::string>();
    auto as_json = std::make_shared<bool>(false);
    auto* host = app.add_subcommand(
        "host", "this machine for remote runs: version, CPU, CUDA devices, a data folder");
    host->add_option("--data", *data, "list this data folder");
    host->add_flag("--json", *as_json, "as JSON");
    return {host,
            [data, as_json](const std::string&) { return cli::commandHost(*data, *as_json); }};
}

Command addRankWorker(CLI::App& app) {
    // One rank of a data-parallel run, started by the run itself: not for people.
    auto options = std::make_shared<cli::RankWorkerOptions>();
    cli::RankWorkerOptions& rank_options = *options;
    auto* rank_worker = app.add_subcommand("rank-worker", "one rank of a data-parallel run");
    rank_worker->group("");
    rank_worker->add_option("--run", rank_options.run_id)->required();
    rank_worker->add_option("--rank", rank_options.rank)->required()->check(CLI::PositiveNumber);
    rank_worker->add_option("--world", rank_options.world)->required()->check(CLI::Range(2, 64));
    rank_worker->add_option("--store", rank_options.store)->required();
    rank_worker->add_option("--timeout", rank_options.timeout_s);
    rank_worker->add_option("--first-gpu", rank_options.first_gpu);
    return {rank_worker,
            [options](const std::string& db) { return cli::commandRankWorker(db, *options); }};
}

Command addArrayTask(CLI::App& app) {
    // One task of a job array, started by the array's batch script: not for people.
    // `slurm-task`: its name in the scripts of arrays submitted before it had others.
    auto dir = std::make_shared<std::string>();
    auto index = std::make_shared<int>(-1);
    auto attempt = std::make_shared<int>(0);
    auto* task = app.add_subcommand("array-task", "one task of a launched job array");
    task->alias("slurm-task");
    task->group("");
    task->add_option("--dir", *dir)->required();
    task->add_option("--task", *index)->required();
    task->add_option("--attempt", *attempt)->check(CLI::Range(0, 1000000));
    return {task, [dir, index, attempt](const std::string&) {
                return cli::commandArrayTask(*dir, *index, *attempt);
            }};
}

Command addTail(CLI::App& app) {
    auto options = std::make_shared<cli::TailOptions>();
    cli::TailOptions& tail_options = *options;
    auto* tail = app.add_subcommand(
        "tail", "write the record stream of a run or an experiment's runs from the database");
    auto* tail_run =
        tail->add_option("--run", tail_options.run_id, "run id")->check(CLI::PositiveNumber);
    tail->add_option("--experiment", tail_options.experiment_id,
                     "every run of this experiment, interleaved")
        ->check(CLI::PositiveNumber)
        ->excludes(tail_run);
    tail->add_option("--since", tail_options.since,
                     "only records after this sequence number: SEQ for every run, or RUN:SEQ "
                     "for one (repeatable)")
        ->expected(1, -1);
    tail->add_flag("--follow", tail_options.follow,
                   "keep reading (every 200 ms) until every run has ended (and a launched "
                   "job has exited), then write their status and exit 0");
    tail->add_flag("--stream", tail_options.stream, "write the record stream (required)");
    return {tail, [options](const std::string& db) { return cli::commandTail(db, *options); }};
}

Command addIngest(CLI::App& app) {
    auto file = std::make_shared<std::string>("-");
    auto origin = std::make_shared<std::string>();
    auto* ingest = app.add_subcommand(
        "ingest",
        "read a record stream (from `run --stream` or `tail --stream`) into the database, "
        "idempotently");
    ingest->footer(
        "Reading the same records again adds nothing. A malformed line is reported with its "
        "number and skipped; a gap in a run's records is reported (run and missing range) and "
        "the records after it are kept. Exit 0: all read; 8: read with problems (reported, the "
        "rest kept); 9: refused (not a stream, or a stream version this build does not read): "
        "nothing after the refusal is read.");
    ingest->add_option("FILE", *file, "stream file, or - for stdin (default)");
    ingest->add_option("--origin", *origin,
                       "label of the machine the stream comes from; runs and experiments map to "
                       "local rows by it (default: the host name in the stream)");
    return {ingest, [file, origin](const std::string& db) {
                return cli::commandIngest(db, *file, *origin);
            }};
}

Command addFindBatch(CLI::App& app) {
    auto spec = std::make_shared<cli::RunOverrides>();
    auto options = std::make_shared<cli::FindBatchOptions>();
    auto budget_text = std::make_shared<std::string>();
    cli::RunOverrides& fo = *spec;
    cli::FindBatchOptions& fb = *options;
    std::string& budget = *budget_text;
    auto* find = app.add_subcommand(
        "find-batch",
        "find the largest micro-batch each arm trains at (precision x checkpointing)");
    addSpecOptions(find, fo);
    auto* findExperiment =
        find->add_option("--experiment", fb.experiment_id,
                         "search the arms of this experiment (its stored spec; other spec flags "
                         "still override) and record the searches under it, for its report")
            ->check(CLI::PositiveNumber);
    findExperiment->excludes(find->get_option("--preset"));
    findExperiment->excludes(find->get_option("--config"));
    find->add_option("--budget", budget,
                     "limit on the memory a trial adds, not counting what the process holds "
                     "already, e.g. 8G or 512M (default: the GPU's memory on CUDA, half the RAM "
                     "on CPU)");
    find->add_option("--margin", fb.margin, "safety margin below the max batch (0.05 = 5%)")
        ->check(CLI::Range(0.0, 0.9));
    find->add_option("--start", fb.start, "first batch tried")->check(CLI::PositiveNumber);
    find->add_option("--max-batch", fb.upper_bound, "never try more than this")
        ->check(CLI::PositiveNumber);
    find->add_option("--trial-steps", fb.trial_steps, "optimizer steps per trial")
        ->check(CLI::Range(1, 100));
    find->add_option("--max-trials", fb.max_trials, "trials per arm at most")
        ->check(CLI::Range(1, 200));
    find->add_option("--resolution", fb.resolution,
                     "stop bisecting within this fraction of the max batch (0 = exact)")
        ->check(CLI::Range(0.0, 0.5));
    find->add_flag("-q,--quiet", fo.quiet, "no per-trial lines");
    return {find, [spec, options, budget_text](const std::string& db) -> int {
                if (!budget_text->empty()) {
                    auto bytes = analysis::parseByteSize(*budget_text);
                    if (!bytes || *bytes <= 0) {
                        cli::say(stderr,
                                 "--budget %s: expected a size such as 8G, 512M or 1073741824\n",
                                 budget_text->c_str());
                        return cli::kUsage;
                    }
                    options->budget_bytes = *bytes;
                }
                return cli::commandFindBatch(db, *spec, *options);
            }};
}

Command addAdvise(CLI::App& app) {
    auto spec = std::make_shared<cli::RunOverrides>();
    auto flags = std::make_shared<cli::AdviseFlags>();
    auto texts = std::make_shared<std::pair<std::string, std::string>>();  // budget, memory
    auto rule = std::make_shared<std::string>("linear");
    auto* advise = app.add_subcommand(
        "advise",
        "which precision, batch, accumulation and checkpointing to train your model with on "
        "this device, and what each gains: every format at your batch and at the largest that "
        "fits, timed alone, the fastest checked for quality against fp32 on two seeds");
    addSpecOptions(advise, *spec);
    advise->remove_option(advise->get_option("--arm"));  // the advice makes its own arms
    addScriptOptions(advise, *spec);
    advise->add_option("--budget", texts->first,
                       "wall time for the whole advice, e.g. 5m, 90s, 1h (default: what it "
                       "needs for this model: the searches, a pass of each candidate and a "
                       "quality check of 100 optimizer steps)");
    advise->add_option("--memory", texts->second,
                       "the max-batch searches' memory budget, as find-batch's --budget: 8G, "
                       "512M (default: the GPU's memory on CUDA, half the RAM on CPU)");
    advise
        ->add_option("--max-batch", flags->max_batch,
                     "the largest batch searched (default 8 × your batch)")
        ->check(CLI::PositiveNumber);
    advise
        ->add_option("--lr-rule", *rule,
                     "how the learning rate follows a larger batch: linear (default), sqrt, none")
        ->check(CLI::IsMember({"linear", "sqrt", "none"}));
    advise->add_option("--check", flags->leaders, "candidates checked for quality beside fp32")
        ->check(CLI::Range(1, 8));
    advise->add_option("--check-seeds", flags->seeds, "seeds of the quality check (default 2)")
        ->check(CLI::Range(2, 10));
    advise->add_option("--timed-steps", flags->timed_steps, "timed optimizer steps of each pass")
        ->check(CLI::Range(10, 1000));
    advise->add_option("--save-spec", flags->save_spec,
                       "write the recommended setting against fp32 as a spec for `run --config`");
    advise->add_flag("-q,--quiet", spec->quiet, "no progress output");
    return {advise, [spec, flags, texts, rule](const std::string& db) -> int {
                if (!texts->first.empty()) {
                    const auto seconds = config::parseDuration(texts->first);
                    if (!seconds) {
                        cli::say(stderr,
                                 "--budget %s: expected a duration above zero such as 5m, 90s, "
                                 "1h or 1h30m\n",
                                 texts->first.c_str());
                        return cli::kUsage;
                    }
                    flags->budget_s = *seconds;
                }
                if (!texts->second.empty()) {
                    auto bytes = analysis::parseByteSize(texts->second);
                    if (!bytes || *bytes <= 0) {
                        cli::say(stderr,
                                 "--memory %s: expected a size such as 8G, 512M or 1073741824\n",
                                 texts->second.c_str());
                        return cli::kUsage;
                    }
                    flags->memory_bytes = *bytes;
                }
                flags->lr_rule = config::lrRuleFromString(*rule).value_or(config::LrRule::Linear);
                return cli::commandAdvise(db, *spec, *flags);
            }};
}

Command addRerun(CLI::App& app) {
    auto id = std::make_shared<int64_t>(0);
    auto force = std::make_shared<bool>(false);
    auto quiet = std::make_shared<bool>(false);
    auto* rerun = app.add_subcommand(
        "rerun",
        "train a recorded run again (same spec, arm and seed) as a new run linked to it, and say "
        "whether the curves are identical, within noise, or different");
    rerun->add_option("RUN", *id, "run id")->required()->check(CLI::PositiveNumber);
    rerun->add_flag("--force", *force,
                    "rerun even when the run's files or environment changed since, or while "
                    "the run is still training in another process");
    rerun->add_flag("-q,--quiet", *quiet, "no progress output");
    return {rerun, [id, force, quiet](const std::string& db) {
                return cli::commandRerun(db, *id, *force, *quiet);
            }};
}

Command addShow(CLI::App& app) {
    struct Show {
        int64_t id = 0;
        bool experiment = false, json = false, numerics = false;
    };
    auto o = std::make_shared<Show>();
    auto* show =
        app.add_subcommand("show", "show one run (or --experiment: one experiment's table)");
    show->add_option("ID", o->id, "run id (or experiment id with --experiment)")->required();
    show->add_flag("-e,--experiment", o->experiment, "ID names an experiment");
    show->add_flag("--json", o->json,
                   "with --experiment: the analysis as JSON (summary, gains, verdict codes, "
                   "time to target) on stdout");
    show->add_flag("--numerics", o->numerics,
                   "the run's per-layer numerics (spec numerics_every): the layers with the most "
                   "values under the smallest subnormal and normal of the format each is held in "
                   "(fp16, bf16; e4m3, e5m2 for an FP8 layer's casts), the least headroom to its "
                   "largest value, and the tensors FP8 layers cast");
    return {show, [o](const std::string& db) -> int {
                if (o->json && !o->experiment) {
                    cli::say(stderr,
                             "show: --json needs --experiment (it writes an experiment's "
                             "analysis)\n");
                    return cli::kUsage;
                }
                if (o->numerics && o->experiment) {
                    cli::say(stderr,
                             "show: --numerics shows one run; give a run id without "
                             "--experiment\n");
                    return cli::kUsage;
                }
                if (o->numerics) {
                    return cli::commandShowNumerics(db, o->id);
                }
                return cli::commandShow(db, o->id, o->experiment, o->json);
            }};
}

Command addExport(CLI::App& app) {
    struct Export {
        std::vector<int64_t> ids;
        std::string csv, json;
        bool experiment = false;
    };
    auto o = std::make_shared<Export>();
    auto* exp = app.add_subcommand("export", "write runs' metric rows as CSV and/or JSON");
    exp->add_option("ID", o->ids, "run ids (or experiment ids with --experiment)")
        ->required()
        ->expected(1, -1);
    exp->add_option("--csv", o->csv, "CSV file (long format)");
    exp->add_option("--json", o->json, "JSON file");
    exp->add_flag("-e,--experiment", o->experiment, "IDs name experiments");
    return {exp, [o](const std::string& db) -> int {
                if (o->csv.empty() && o->json.empty()) {
                    cli::say(stderr, "export: give --csv FILE and/or --json FILE\n");
                    return cli::kUsage;
                }
                return cli::commandExport(db, o->ids, o->csv, o->json, o->experiment);
            }};
}

Command addReport(CLI::App& app) {
    auto options = std::make_shared<cli::ReportOptions>();
    auto* report = cli::addReportCommand(app, *options);
    return {report, [options](const std::string& db) { return cli::commandReport(db, *options); }};
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "AMP Workbench (headless): compare FP32 against mixed-precision training, "
        "record everything in SQLite, print the verdict in numbers."};
    // Probed only when asked: LibTorch, CUDA and Qt as this binary finds them.
    app.set_version_flag("--version", std::function<std::string()>(cli::versionText));
    std::string db = store::defaultDatabasePath();
    app.add_option("--db", db, "database file (default: " + db + ")");
    app.require_subcommand(1);
    const std::vector<Command> commands = {
        addRun(app),
        addLaunch(app),
        addStatus(app),
        addCancel(app),
        addHost(app),
        addRankWorker(app),
        addArrayTask(app),
        addTail(app),
        addIngest(app),
        addFindBatch(app),
        addAdvise(app),
        addRerun(app),
        {app.add_subcommand("list", "list experiments and their runs"),
         [](const std::string& db) { return cli::commandList(db); }},
        {app.add_subcommand("presets", "list the built-in experiments"),
         [](const std::string&) { return cli::commandPresets(); }},
        addShow(app),
        addExport(app),
        addReport(app),
    };
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? cli::kOk : cli::kUsage;
    }
    // A file size limit (ulimit -f) must fail a write with "File too large", not
    // kill the process half-way through a file.
    std::signal(SIGXFSZ, SIG_IGN);
    // Every failure of the store becomes exit 4 with its message, wherever it
    // surfaces; nothing leaves main as an exception (that would abort the process).
    try {
        for (const auto& c : commands) {
            if (c.app->parsed()) {
                return c.run(db);
            }
        }
        return cli::kUsage;  // require_subcommand(1) leaves none unparsed
    } catch (const store::StoreError& e) {
        cli::say(stderr, "%s\n", analysis::printable(e.what()).c_str());
        return cli::kStoreError;
    } catch (const store::OutputError& e) {
        cli::say(stderr, "%s\n", analysis::printable(e.what()).c_str());
        return cli::kIoError;
    } catch (const std::exception& e) {
        cli::say(stderr, "ampbench-cli: %s\n", analysis::printable(e.what()).c_str());
        return cli::kRunsFailed;
    }
}
