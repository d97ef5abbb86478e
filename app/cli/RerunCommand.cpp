// `ampbench-cli rerun RUN`: the run's arm and seed trained again, as a new run linked
// to it, then compared with it.
#include <cstdio>
#include <optional>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/Terminal.h"
#include "core/analysis/ExperimentData.h"
#include "core/analysis/Format.h"
#include "core/config/ExperimentSpec.h"
#include "core/run/InputFiles.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/Rerun.h"

namespace ampbench::cli {

int commandRerun(const std::string& db_path, int64_t run_id, bool force, bool quiet) {
    train::RerunPlan plan;
    try {
        auto db = store::Database::open(db_path, store::Database::Mode::ReadOnly);
        if (const auto run = db->run(run_id); run && run->inTrash()) {
            say(stderr,
                "run %lld is in the trash%s; restore it in the GUI's History tab to "
                "rerun it\n",
                static_cast<long long>(run_id),
                run->trashed_at.empty() ? " with its experiment" : "");
            return kUsage;
        }
        plan = train::planRerun(*db, run_id);
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", analysis::printable(e.what(), false).c_str());
        return e.kind() == store::StoreError::Kind::NotFound ? kNotFound : kStoreError;
    } catch (const train::SpecError& e) {
        // What the run was trained with is stored with it; a record that no longer
        // reads is damage to the store, not a usage error.
        say(stderr,
            "cannot rerun run %lld: its experiment's stored spec (experiments.spec_json "
            "in %s) cannot be read:\n",
            static_cast<long long>(run_id), db_path.c_str());
        for (const auto& f : e.errors()) {
            say(stderr, "  %s\n", analysis::printable(f.toString(), false).c_str());
        }
        return kStoreError;
    }
    // What the run was trained with, as stored: a record that no longer reads is damage
    // to the store, named with its field, and nothing is run.
    std::string problem = analysis::storedArmProblem(plan.original);
    if (problem.empty()) {
        if (const std::string inputs = run::inputsProblem(plan.original.inputs_json);
            !inputs.empty()) {
            problem = "run " + std::to_string(run_id) +
                      "'s record of its files (runs.inputs_json)" + inputs;
        } else if (plan.original.seed > config::kMaxSeed) {
            problem = "run " + std::to_string(run_id) + "'s seed (runs.seed) reads " +
                      std::to_string(static_cast<int64_t>(plan.original.seed)) +
                      ": a seed is a whole number from 0 to " + std::to_string(config::kMaxSeed);
        }
    }
    if (!problem.empty()) {
        say(stderr, "cannot rerun run %lld: %s: %s; nothing was run\n",
            static_cast<long long>(run_id), db_path.c_str(),
            analysis::printable(problem, false).c_str());
        return kStoreError;
    }
    // A run that is still training (its process is alive: a dead one reads as
    // interrupted) has no final curve yet to compare with, and a rerun now would
    // share the device with it and slow both.
    if (plan.original.status == run::RunStatus::Running ||
        plan.original.status == run::RunStatus::Queued) {
        const bool running = plan.original.status == run::RunStatus::Running;
        say(stderr, "run %lld is %s in another process (step %lld of %lld)%s\n",
            static_cast<long long>(run_id), running ? "still training" : "queued to train",
            static_cast<long long>(plan.original.last_step),
            static_cast<long long>(plan.original.planned_steps),
            force ? "" : "; nothing was run: wait until it ends, or give --force to rerun it now");
        if (!force) {
            return kChanged;
        }
        say(stderr,
            "--force: rerunning anyway (its comparison is with the run as it is when "
            "this rerun ends)\n");
    }
    std::string device;
    if (int code = preflight(plan.spec, device, quiet); code != kOk) {
        return code;
    }
    const auto differences = train::rerunDifferences(plan, device);
    if (!differences.empty()) {
        say(stderr, "run %lld ran under other conditions than this rerun would:\n",
            static_cast<long long>(run_id));
        for (const auto& d : differences) {
            say(stderr, "  %s\n", analysis::printable(d, false).c_str());
        }
        if (!force) {
            say(stderr,
                "nothing was run; give --force to rerun anyway (its curves may then "
                "differ for these reasons alone)\n");
            return kChanged;
        }
        say(stderr, "--force: rerunning anyway\n");
    }
    if (!quiet) {
        say(stderr, "rerunning run %lld (%s, seed %llu%s)%s\n", static_cast<long long>(run_id),
            analysis::printable(plan.original.arm, false).c_str(),
            static_cast<unsigned long long>(plan.original.seed),
            plan.deterministic ? ", deterministic mode" : "",
            plan.link_to != run_id
                ? (", compared with its original run " + std::to_string(plan.link_to)).c_str()
                : "");
    }
    std::optional<config::ValidSpec> valid;
    try {
        valid = train::validSpec(plan.spec);
    } catch (const train::SpecError& e) {
        say(stderr, "%s\n", e.what());
        return kUsage;
    }
    return trainSpec(db_path, *valid, device, quiet, plan.link_to);
}

}  // namespace ampbench::cli
