#pragma once
// The max-batch finder on real training: each trial runs a few full steps
// (forward, backward, optimizer step) of an arm at a micro-batch size.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/store/Database.h"
#include "core/train/BatchFinder.h"

namespace ampbench::train {

struct CapacityOptions {
    FinderOptions finder;
    /// Peak-memory limit a trial must stay under. 0 = the device's own limit on
    /// CUDA (out-of-memory is caught in-process), half the machine's memory on CPU
    /// (where running out kills processes, so the finder never goes there).
    int64_t budget_bytes = 0;
    int trial_steps = 3;  ///< optimizer steps per trial
};

/// Half of the machine's physical memory.
int64_t defaultCpuBudget();

/// The budget a search on `device` uses for a requested one (0: the default).
struct BudgetCheck {
    int64_t bytes = 0;    ///< budget to use; 0 on CUDA means the device's own limit
    std::string warning;  ///< the request was more than the device has, and was clamped
    std::string error;    ///< no batch can fit: the budget is below what the process holds
};
/// A request above the device's memory is clamped to it (with a warning); on CPU a
/// budget at or below this process's resident set before any trial is an error,
/// since the peak a trial is measured by includes that set.
BudgetCheck checkBudget(const std::string& device, int64_t requested);

/// One trial: `trial_steps` optimizer steps of arm `arm_index` at micro-batch `batch`.
/// Out of memory (CUDA, caught; caches freed) → OutOfMemory; peak above `budget`
/// → OverBudget; any other failure → Error with its message.
BatchTrial runBatchTrial(const config::ExperimentSpec& spec, int arm_index, int64_t batch,
                         int64_t budget_bytes, int trial_steps, const run::CancelToken& cancel);

struct ArmCapacity {
    std::string arm;
    std::string precision;  ///< resolved
    bool checkpointing = false;
    std::string device;
    int64_t budget_bytes = 0;
    FinderResult result;
    int64_t search_id = 0;  ///< row in the store, 0 when not recorded
};

/// Searches one arm's max batch. With `db`, the search and each trial are recorded
/// as they happen (status running → finished / cancelled / failed). On CPU a trial
/// whose peak, extrapolated from the trials so far, would be far over the budget
/// (1.5× from a fitted line, 2× from a single point) is not run (outcome
/// PredictedOverBudget).
ArmCapacity findArmCapacity(const config::ExperimentSpec& spec, int arm_index,
                            const CapacityOptions& options, const run::CancelToken& cancel,
                            store::Database* db = nullptr, int64_t experiment_id = 0,
                            const std::function<void(const BatchTrial&)>& on_trial = {});

/// Every arm of `spec` in order (findArmCapacity each), recorded under
/// `experiment_id` when `db` is given; stops early on cancel. `on_trial` gets the
/// arm's index with each trial.
std::vector<ArmCapacity> findCapacities(
    const config::ExperimentSpec& spec, const CapacityOptions& options,
    const run::CancelToken& cancel, store::Database* db = nullptr, int64_t experiment_id = 0,
    const std::function<void(int, const BatchTrial&)>& on_trial = {});

}  // namespace ampbench::train
