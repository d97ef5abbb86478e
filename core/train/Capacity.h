#pragma once
// The max-batch finder on real training: each trial runs a few full steps
// (forward, backward, optimizer step) of an arm at a micro-batch size.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/store/Database.h"
#include "core/train/BatchFinder.h"
#include "core/train/Trainer.h"

namespace ampbench::train {

struct CapacityOptions {
    FinderOptions finder;
    /// Limit on the memory a trial adds: on CUDA its allocator peak, on CPU what its
    /// resident set rises above the set it started from (the process's own, LibTorch
    /// and a GUI included, is not counted). 0 = the device's own limit on CUDA
    /// (out-of-memory is caught in-process), half the machine's memory on CPU (where
    /// running out kills processes, so the finder never goes there).
    int64_t budget_bytes = 0;
    int trial_steps = 3;  ///< optimizer steps per trial
    /// CPU: the resident set before the search (measureCpuBase); a budget is held to
    /// the memory free beside it. 0: measured when the search starts; findCapacities
    /// measures it once for all arms.
    int64_t cpu_base_bytes = 0;
};

/// CPU: the resident set this process returns to between trials: the experiment's
/// data opened (a file read once per process stays), freed heap released. What a
/// trial adds to it is the trial's own; what earlier trials left behind is not.
int64_t measureCpuBase(const config::ExperimentSpec& spec);

/// How far a CPU trial's peak may differ from the resident set right after its
/// reset before the reset counts as not taken.
constexpr int64_t kCpuPeakResetTolerance = int64_t{8} << 20;

/// CPU: the time left of an arm still doubling is given only once the batch its
/// fitted peaks put over the budget lies within this factor of the largest batch
/// that fit (or the upper bound does).
constexpr int64_t kOutlookReach = 8;

/// Half of the machine's physical memory.
int64_t defaultCpuBudget();

/// The budget a search on `device` uses for a requested one (0: the default).
struct BudgetCheck {
    int64_t bytes = 0;    ///< budget to use; 0 on CUDA means the device's own limit
    std::string warning;  ///< the request was more than the device has, and was clamped
};
/// A request above the device's memory is clamped to it (with a warning); on CPU to
/// the memory beside this process's resident set before the search, `cpu_base`
/// (measureCpuBase; 0 takes the resident set now), since a trial adds to that set.
BudgetCheck checkBudget(const std::string& device, int64_t requested, int64_t cpu_base = 0);

/// One trial: `trial_steps` optimizer steps of arm `arm_index` at micro-batch `batch`.
/// Out of memory (CUDA, caught; caches freed) → OutOfMemory; peak above `budget`
/// → OverBudget; any other failure → Error with its message.
///
/// CPU: the trial is measured on its own. Freed heap is returned to the system and
/// the peak resident set reset, and the reset verified (VmHWM within
/// kCpuPeakResetTolerance of VmRSS; otherwise Error: the peak cannot be told apart
/// from earlier trials'). The peak is what the resident set rose above its value at
/// the reset: the process's own memory (a GUI's included) and what an earlier trial
/// or arm left behind count in no trial.
BatchTrial runBatchTrial(const config::ExperimentSpec& spec, int arm_index, int64_t batch,
                         int64_t budget_bytes, int trial_steps, const run::CancelToken& cancel);
/// The same on a device chosen once for the whole search (chooseDevice).
BatchTrial runBatchTrial(const config::ExperimentSpec& spec, int arm_index, int64_t batch,
                         int64_t budget_bytes, int trial_steps, const run::CancelToken& cancel,
                         const DeviceChoice& device);

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
/// PredictedOverBudget). `on_trial` gets each trial with the outlook of the rest of
/// the search (searchOutlook; on CPU the batch the fitted peaks cross the budget
/// at is the predicted first failure).
ArmCapacity findArmCapacity(
    const config::ExperimentSpec& spec, int arm_index, const CapacityOptions& options,
    const run::CancelToken& cancel, store::Database* db = nullptr, int64_t experiment_id = 0,
    const std::function<void(const BatchTrial&, const SearchOutlook&)>& on_trial = {});

/// Where a search of several arms stands after a trial.
struct CapacityProgress {
    int arm = 0;   ///< index of the arm searched
    int arms = 0;  ///< arms in all
    BatchTrial trial;
    /// The whole search: the rest of this arm (searchOutlook) and, for each arm not
    /// started, the seconds per unit of accumulation K of the arms so far (this one's
    /// elapsed time plus its rest) times its K (a trial trains K micro-batches a
    /// step). NaN while it cannot be estimated.
    double seconds_left = NAN;
};

/// Every arm of `spec` in order (findArmCapacity each), recorded under
/// `experiment_id` when `db` is given; stops early on cancel. On CPU the base the
/// arms' peaks are counted from is measured once (measureCpuBase) unless given, so
/// an arm finds the same max batch alone, first or after others.
std::vector<ArmCapacity> findCapacities(
    const config::ExperimentSpec& spec, const CapacityOptions& options,
    const run::CancelToken& cancel, store::Database* db = nullptr, int64_t experiment_id = 0,
    const std::function<void(const CapacityProgress&)>& on_trial = {});

}  // namespace ampbench::train
