// `ampbench-cli find-batch`: the largest micro-batch each arm trains at.
#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/Interrupt.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/config/SpecJson.h"
#include "core/data/DataError.h"
#include "core/store/Database.h"
#include "core/train/Capacity.h"
#include "core/train/Experiment.h"
#include "core/train/Trainer.h"

namespace ampbench::cli {
namespace {

/// `text` padded with spaces to `width` columns (UTF-8: one column per character).
std::string padded(const std::string& text, size_t width) {
    size_t columns = 0;
    for (unsigned char c : text) {
        columns += (c & 0xC0) != 0x80 ? 1 : 0;
    }
    return text + std::string(width > columns ? width - columns : 0, ' ');
}

}  // namespace

int commandFindBatch(const std::string& db_path, const RunOverrides& overrides,
                     const FindBatchOptions& f) {
    std::unique_ptr<store::Database> db;
    try {
        db = store::Database::open(db_path);
        db->requireIntact();  // nothing is added to a damaged file
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        return kStoreError;
    }
    RunOverrides o = overrides;
    if (f.experiment_id != 0) {
        // The experiment's own spec; flags given as well still override its fields.
        try {
            o.base = train::storedSpec(*db, f.experiment_id);
        } catch (const store::StoreError& e) {
            say(stderr, "%s\n", e.what());
            return e.kind() == store::StoreError::Kind::NotFound ? kNotFound : kStoreError;
        } catch (const train::SpecError& e) {
            printErrors("experiment " + std::to_string(f.experiment_id) +
                            "'s stored spec (experiments.spec_json in " + db_path +
                            ") cannot be read",
                        e.errors());
            return kStoreError;
        }
    }
    const auto valid = buildSpec(o);
    if (!valid) {
        return kUsage;
    }
    const config::ExperimentSpec& spec = valid->spec();
    std::string device;
    if (int code = preflight(spec, device); code != kOk) {
        return code;
    }
    // Checked before any trial: a budget above what the device has is clamped.
    const train::BudgetCheck budget = train::checkBudget(device, f.budget_bytes);
    if (!budget.warning.empty()) {
        say(stderr, "warning: %s\n", budget.warning.c_str());
    }
    train::CapacityOptions opts;
    opts.budget_bytes = f.budget_bytes > 0 ? budget.bytes : 0;
    opts.trial_steps = f.trial_steps;
    opts.finder.start = f.start;
    opts.finder.upper_bound = f.upper_bound;
    opts.finder.margin = f.margin;
    opts.finder.max_trials = f.max_trials;
    opts.finder.resolution = f.resolution;
    std::string limit = budget.bytes > 0 ? "budget " + analysis::formatBytes(budget.bytes) +
                                               " of memory a trial adds"
                                         : std::string("up to the device's memory");
    if (device == "cpu") {
        opts.cpu_base_bytes = train::measureCpuBase(spec);
        limit += "; each trial measured on its own, above the " +
                 analysis::formatBytes(opts.cpu_base_bytes) +
                 " this process holds between trials (not counted)";
    }
    say(stderr, "max-batch search on %s; %s\n", device.c_str(), limit.c_str());
    run::CancelToken cancel;
    InterruptScope interrupt(cancel);
    const std::vector<train::ArmCapacity> results = train::findCapacities(
        spec, opts, cancel, db.get(), f.experiment_id, [&](const train::CapacityProgress& p) {
            if (o.quiet) {
                return;
            }
            const train::BatchTrial& t = p.trial;
            const std::string arm = spec.arms[static_cast<size_t>(p.arm)].name + " (" +
                                    std::to_string(p.arm + 1) + "/" + std::to_string(p.arms) + ")";
            say(stderr, "  %-20s batch %6lld: %-22s peak %-10s %s%s\n", arm.c_str(),
                static_cast<long long>(t.batch), train::toString(t.outcome).c_str(),
                analysis::formatBytes(t.peak_bytes).c_str(),
                padded(train::formatSecondsLeft(p.seconds_left), 22).c_str(),
                t.fits() ? "" : analysis::printable(t.message, false).c_str());
        });
    const bool failed = std::any_of(results.begin(), results.end(),
                                    [](const auto& c) { return !c.result.error.empty(); });

    analysis::TextTable t({"arm", "precision", "ckpt", "max batch", "safe batch", "fails at",
                           "peak at max", "vs first", "trials", "result"});
    t.alignRight({3, 4, 5, 6, 7, 8});
    const double base =
        results.empty() ? 0.0 : static_cast<double>(results.front().result.max_batch);
    for (const auto& c : results) {
        const auto& r = c.result;
        t.addRow({c.arm, c.precision, c.checkpointing ? "yes" : "no", std::to_string(r.max_batch),
                  std::to_string(r.safe_batch),
                  r.first_failure > 0 ? std::to_string(r.first_failure) : "\xE2\x80\x93",
                  analysis::formatBytes(r.peak_at_max),
                  analysis::formatRatio(base > 0 ? double(r.max_batch) / base : NAN),
                  std::to_string(r.trials.size()), r.summary()});
    }
    say(stdout, "%s", t.render().c_str());
    say(stdout, "safe batch = max batch less a %.0f%% margin; searches recorded in %s%s\n",
        opts.finder.margin * 100.0, db_path.c_str(),
        f.experiment_id != 0
            ? (" under experiment " + std::to_string(f.experiment_id) + " (see its report)").c_str()
            : "");
    if (cancel.cancelled()) {
        say(stderr, "cancelled: the trials so far are kept and the search marked cancelled\n");
        return kCancelled;
    }
    return failed ? kRunsFailed : kOk;
}

}  // namespace ampbench::cli
