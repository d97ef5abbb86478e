#include "cli/RunHooks.h"

#include <utility>

#include "cli/ExitCodes.h"
#include "cli/ScriptRun.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/data/DataError.h"
#include "core/store/Database.h"
#include "core/train/SetupCheck.h"
#include "core/util/Words.h"

namespace ampbench::cli {

RunHooks::RunHooks(Options options) : options_(std::move(options)) {
    hooks_.setup_checked = true;  // every command checks the set-up before it trains
    hooks_.note = [this](const std::string& line) {
        if (!options_.quiet) {
            say(stderr, "%s\n", analysis::printable(line, false).c_str());
        }
    };
    hooks_.planned = [this](const train::ExperimentPlan& plan) {
        if (!options_.quiet) {
            const config::ExperimentSpec& spec = *options_.spec;
            const script::ScriptSettings* script = options_.script;
            // A script's runs: its command line, and how many train at a time.
            const std::string of =
                script ? " of " + util::joinWords(script::commandLine(spec.model, script->python))
                       : std::string();
            const std::string packing = script ? packingText(spec, *script) : std::string();
            say(stderr, "experiment %lld '%s': %zu runs%s on %s%s, recording to %s\n",
                static_cast<long long>(plan.experiment_id),
                analysis::printable(spec.name, false).c_str(), plan.runs.size(),
                analysis::printable(of, false).c_str(), options_.device.c_str(), packing.c_str(),
                options_.db_path.c_str());
        }
        if (options_.planned) {
            options_.planned(plan);
        }
        progress_ = std::make_unique<Progress>(static_cast<int>(plan.runs.size()),
                                               options_.terminal, options_.quiet);
    };
    hooks_.starting = [this](const train::PlannedRun& run) -> run::TrainObserver* {
        // Runs planned elsewhere (an array task's) have no progress lines.
        return progress_ ? progress_->beginRun(index_++, run.arm, run.seed, run.planned_steps)
                         : nullptr;
    };
    // A killed script ends its run interrupted, not failed: the command did not succeed.
    hooks_.finished = [this](const train::PlannedRun& run, const run::RunOutcome& outcome) {
        unfinished_ = unfinished_ || outcome.status != run::RunStatus::Finished;
        if (!outcome.record_error.empty()) {
            say(stderr, "run %lld: %s\n", static_cast<long long>(run.run_id),
                outcome.record_error.c_str());
        }
        if (options_.finished) {
            options_.finished(run, outcome);
        }
    };
}

int RunHooks::exitCode(const train::ExperimentResult& result,
                       const run::CancelToken& cancel) const {
    return cancel.cancelled() ? kCancelled : result.any_failed || unfinished_ ? kRunsFailed : kOk;
}

int sayingWhatStopped(const std::function<void()>& train) {
    try {
        train();
        return kOk;
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        return kStoreError;
    } catch (const train::SpecError& e) {
        say(stderr, "%s\n", e.what());
        return kUsage;
    } catch (const train::SetupError& e) {
        say(stderr, "%s\n", e.what());
        return e.report().unreadable() ? kDataMissing : kUsage;
    } catch (const data::DataError& e) {
        say(stderr, "%s\n", e.what());
        return kDataMissing;
    } catch (const std::exception& e) {
        say(stderr, "%s\n", e.what());
        return kUsage;
    }
}

}  // namespace ampbench::cli
