// `ampbench-cli advise`: which precision, batch, accumulation and checkpointing to train
// the model with on this device, and what it gains (train/Advise.h), printed from what
// the advice recorded (analysis/Advice.h), as `show -e` prints it again later.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "cli/AdviseCommand.h"
#include "cli/ExitCodes.h"
#include "cli/Interrupt.h"
#include "cli/OpenDatabase.h"
#include "cli/Progress.h"
#include "cli/RunHooks.h"
#include "cli/ScriptRun.h"
#include "cli/Terminal.h"
#include "core/analysis/Advice.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/Format.h"
#include "core/config/SpecJson.h"
#include "core/probe/Environment.h"
#include "core/script/Trainers.h"
#include "core/store/OutputFile.h"
#include "core/train/Advise.h"
#include "core/train/Capacity.h"

namespace ampbench::cli {
namespace {

/// The progress of an advice on stderr: a line per phase and candidate, and each run's
/// own progress (a bar on a terminal) through a Progress per phase.
class AdviseDisplay {
  public:
    explicit AdviseDisplay(bool quiet) : quiet_(quiet) {}
    void phase(const train::AdviseProgress& p) {
        if (quiet_ || p.candidate == last_) {
            return;
        }
        last_ = p.candidate;
        const std::string left = std::isfinite(p.seconds_left)
                                     ? ", " + train::formatSecondsLeft(p.seconds_left)
                                     : std::string();
        say(stderr, "[%s %d/%d] %s%s\n", train::toString(p.phase).c_str(), p.done + 1, p.total,
            analysis::printable(p.candidate, false).c_str(), left.c_str());
        if (p.phase != phase_ || !runs_) {
            phase_ = p.phase;
            runs_ = std::make_unique<Progress>(p.total, isatty(STDERR_FILENO) != 0, quiet_);
            index_ = 0;
        }
    }
    run::TrainObserver* starting(const train::PlannedRun& r) {
        return runs_ ? runs_->beginRun(index_++, r.arm, r.seed, r.planned_steps) : nullptr;
    }

  private:
    bool quiet_;
    std::string last_;
    train::AdvisePhase phase_ = train::AdvisePhase::Search;
    std::unique_ptr<Progress> runs_;
    int index_ = 0;
};

int exitCodeOf(train::AdviseEnd end) {
    switch (end) {
        case train::AdviseEnd::Advised:
            return kOk;
        case train::AdviseEnd::NoMixedPrecision:
            return kNoMixedPrecision;
        case train::AdviseEnd::NothingFits:
            return kNothingFits;
        case train::AdviseEnd::BudgetTooSmall:
            return kBudgetTooSmall;
        case train::AdviseEnd::ScriptRefused:
            return kScriptRefused;
        case train::AdviseEnd::Cancelled:
            return kCancelled;
    }
    return kRunsFailed;
}

}  // namespace

int printAdvice(const store::Database& db, int64_t experiment_id, const std::string& save_spec) {
    const auto data = analysis::loadExperiment(db, experiment_id);
    if (!data) {
        return kNotFound;
    }
    const analysis::ExperimentAnalysis analysis = analysis::analyzeExperiment(*data);
    const analysis::Advice advice = analysis::readAdvice(*data, analysis);
    say(stdout, "advice %lld for '%s' on %s (batch %lld, %s)\n",
        static_cast<long long>(experiment_id),
        analysis::printable(data->experiment.name, false).c_str(), advice.device.c_str(),
        static_cast<long long>(advice.user_batch),
        data->spec_ok ? analysis::printable(config::describeWorkload(data->spec), false).c_str()
                      : "spec unreadable");
    say(stdout, "%s", analysis::adviceTable(advice).render().c_str());
    for (const auto& r : advice.rows) {
        const std::string why = analysis::reasonText(r, advice.baseline);
        if (!why.empty()) {
            say(stdout, "  %s, %s: %s\n", analysis::statusText(r).c_str(), r.f.arm.c_str(),
                analysis::printable(why, false).c_str());
        }
    }
    for (const auto& line : advice.not_for_model) {
        say(stdout, "  not for this model, %s\n", analysis::printable(line, false).c_str());
    }
    say(stdout,
        "samples/s and memory: each candidate alone (a pass of its own); step of %lld: one "
        "optimizer step of your batch at that rate; quality: %d seeds against %s's band%s\n",
        static_cast<long long>(advice.user_batch),
        data->spec_ok ? static_cast<int>(data->spec.seeds.size()) : 0, advice.baseline.c_str(),
        advice.memory_label == "peak in tensors"
            ? "; memory on a CPU: the most the run's own tensors held"
        : advice.memory_label == "peak RSS" ? "; memory on a CPU: the process's peak resident set"
                                            : "");
    say(stdout, "\nrecommendation: %s\n",
        analysis::printable(analysis::recommendationText(advice), false).c_str());
    const auto lines = analysis::pytorchLines(advice, data->spec);
    if (!lines.empty()) {
        say(stdout, "\nin your PyTorch loop:\n");
        for (const auto& l : lines) {
            say(stdout, "    %s\n", analysis::printable(l, false).c_str());
        }
    }
    if (advice.recommendation() && data->spec_ok) {
        const std::string text =
            config::specToJsonText(analysis::recommendedSpec(advice, data->spec));
        if (save_spec.empty()) {
            say(stdout,
                "\nthe recommended setting against %s as a comparison: --save-spec FILE writes "
                "it for `ampbench-cli run --config FILE`\n",
                advice.baseline.c_str());
        } else {
            if (std::string clash = store::outputClash(save_spec, db.path()); !clash.empty()) {
                say(stderr, "%s\n", clash.c_str());
                return kIoError;
            }
            try {
                store::writeFileAtomically(save_spec, text + "\n");
            } catch (const store::OutputError& e) {
                say(stderr, "%s\n", e.what());
                return kIoError;
            }
            say(stdout,
                "\nthe recommended setting against %s: %s (`ampbench-cli run --config %s`)\n",
                advice.baseline.c_str(), save_spec.c_str(), save_spec.c_str());
        }
    }
    return kOk;
}

int commandAdvise(const std::string& db_path, const RunOverrides& o, const AdviseFlags& a) {
    const auto given = buildSpec(o);
    if (!given) {
        return kUsage;
    }
    if (!a.save_spec.empty()) {
        if (std::string clash = store::outputClash(a.save_spec, db_path); !clash.empty()) {
            say(stderr, "%s\n", clash.c_str());
            return kIoError;
        }
    }
    // A training script as the model: its checks stand for the set-up check, and its
    // runs train each pass and the quality check (core/script).
    const bool is_script = !o.script.empty() || script::trainsWithScript(given->spec());
    std::optional<config::ValidSpec> prepared;
    script::ScriptSettings settings;
    std::string device;
    if (is_script) {
        if (const int code = prepareScript(*given, o, prepared, settings); code != kOk) {
            return code;
        }
        device = settings.device;
        settings.environment_json = probe::toJson(probe::probeEnvironment(device));
    } else if (const int code = preflight(given->spec(), device, o.quiet); code != kOk) {
        return code;
    }
    const config::ValidSpec& valid = prepared ? *prepared : *given;
    const config::ExperimentSpec& spec = valid.spec();
    train::AdviseOptions options;
    options.budget_s = a.budget_s;
    options.max_batch = a.max_batch;
    options.lr_rule = a.lr_rule;
    options.leaders = a.leaders;
    options.seeds = a.seeds;
    options.timed_steps = a.timed_steps;
    if (a.memory_bytes > 0) {
        const train::BudgetCheck memory = train::checkBudget(device, a.memory_bytes);
        if (!memory.warning.empty()) {
            say(stderr, "warning: %s\n", memory.warning.c_str());
        }
        options.memory_bytes = memory.bytes;
    }
    std::unique_ptr<store::Database> db = openOrSay(db_path);
    if (!db) {
        return kStoreError;
    }
    run::CancelToken cancel;
    auto interrupt = std::make_unique<InterruptScope>(cancel);
    AdviseDisplay display(o.quiet);
    train::AdviseHooks hooks;
    hooks.setup_checked = true;  // preflight
    hooks.started = [&](int64_t id) {
        if (!o.quiet) {
            say(stderr, "advice %lld: %s on %s, recording to %s%s\n", static_cast<long long>(id),
                analysis::printable(spec.name, false).c_str(), device.c_str(), db_path.c_str(),
                a.budget_s > 0 ? (", budget " + util::roughDuration(a.budget_s)).c_str() : "");
        }
    };
    hooks.note = [&](const std::string& line) {
        if (!o.quiet) {
            say(stderr, "%s\n", analysis::printable(line, false).c_str());
        }
    };
    hooks.progress = [&](const train::AdviseProgress& p) { display.phase(p); };
    hooks.starting = [&](const train::PlannedRun& r) { return display.starting(r); };
    train::AdviseResult result;
    script::Trainers trainers;
    trainers.script = settings;
    if (const int code = sayingWhatStopped([&] {
            result = train::advise(*db, valid, options, cancel, hooks,
                                   script::adviseTrainer(*db, spec, trainers));
        });
        code != kOk) {
        return code;
    }
    interrupt.reset();
    if (result.end != train::AdviseEnd::Advised) {
        say(stderr, "%s\n", analysis::printable(result.message, false).c_str());
    }
    if (result.experiment_id > 0 && result.end != train::AdviseEnd::NothingFits) {
        if (const int code = printAdvice(*db, result.experiment_id, a.save_spec); code != kOk) {
            return code;
        }
    }
    if (result.experiment_id > 0) {
        say(stdout,
            "advice %lld in %s (`ampbench-cli show -e %lld` shows it again, `report %lld` "
            "writes it)\n",
            static_cast<long long>(result.experiment_id), db_path.c_str(),
            static_cast<long long>(result.experiment_id),
            static_cast<long long>(result.experiment_id));
    }
    return exitCodeOf(result.end);
}

}  // namespace ampbench::cli
