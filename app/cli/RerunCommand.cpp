// `ampbench-cli rerun RUN`: the run's arm and seed trained again, as a new run linked
// to it, then compared with it.
#include <cstdio>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "core/analysis/Format.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/Rerun.h"

namespace ampbench::cli {

int commandRerun(const std::string& db_path, int64_t run_id, bool force, bool quiet) {
    train::RerunPlan plan;
    try {
        auto db = store::Database::open(db_path, store::Database::Mode::ReadOnly);
        if (const auto run = db->run(run_id); run && run->inTrash()) {
            std::fprintf(stderr,
                         "run %lld is in the trash%s; restore it in the GUI's History tab to "
                         "rerun it\n",
                         static_cast<long long>(run_id),
                         run->trashed_at.empty() ? " with its experiment" : "");
            return kUsage;
        }
        plan = train::planRerun(*db, run_id);
    } catch (const store::StoreError& e) {
        std::fprintf(stderr, "%s\n", analysis::printable(e.what(), false).c_str());
        return e.kind() == store::StoreError::Kind::NotFound ? kNotFound : kStoreError;
    } catch (const train::SpecError& e) {
        std::fprintf(stderr, "cannot rerun run %lld: %s\n", static_cast<long long>(run_id),
                     analysis::printable(e.what(), false).c_str());
        return kUsage;
    }
    std::string device;
    if (int code = preflight(plan.spec, device, quiet); code != kOk) {
        return code;
    }
    const auto differences = train::rerunDifferences(plan, device);
    if (!differences.empty()) {
        std::fprintf(stderr, "run %lld ran under other conditions than this rerun would:\n",
                     static_cast<long long>(run_id));
        for (const auto& d : differences) {
            std::fprintf(stderr, "  %s\n", analysis::printable(d, false).c_str());
        }
        if (!force) {
            std::fprintf(stderr,
                         "nothing was run; give --force to rerun anyway (its curves may then "
                         "differ for these reasons alone)\n");
            return kChanged;
        }
        std::fprintf(stderr, "--force: rerunning anyway\n");
    }
    if (!quiet) {
        std::fprintf(
            stderr, "rerunning run %lld (%s, seed %llu%s)%s\n", static_cast<long long>(run_id),
            analysis::printable(plan.original.arm, false).c_str(),
            static_cast<unsigned long long>(plan.original.seed),
            plan.deterministic ? ", deterministic mode" : "",
            plan.link_to != run_id
                ? (", compared with its original run " + std::to_string(plan.link_to)).c_str()
                : "");
    }
    return trainSpec(db_path, plan.spec, device, quiet, plan.link_to);
}

}  // namespace ampbench::cli
