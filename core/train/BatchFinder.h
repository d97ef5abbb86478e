#pragma once
// The max-batch search, independent of what a trial is: tests drive it with a
// fake trial function; train/Capacity.h runs real training steps.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/run/TrainObserver.h"

namespace ampbench::train {

enum class TrialOutcome { Fits, OutOfMemory, OverBudget, PredictedOverBudget, Error };
std::string toString(TrialOutcome outcome);

struct BatchTrial {
    int64_t batch = 0;
    TrialOutcome outcome = TrialOutcome::Fits;
    int64_t peak_bytes = 0;
    double step_ms = 0;
    double seconds = 0;  ///< wall time of the whole trial (set-up included); 0: not run
    std::string message;
    bool fits() const { return outcome == TrialOutcome::Fits; }
};

struct FinderOptions {
    int64_t start = 8;            ///< first micro-batch tried
    int64_t upper_bound = 65536;  ///< never tries more than this
    double margin = 0.05;         ///< safe batch = max batch × (1 − margin)
    int max_trials = 30;          ///< stops (and says so) after this many trials
    /// Relative precision of the boundary: the bisection stops once the gap between
    /// the largest fit and the smallest failure is at most resolution × largest fit
    /// (0 = exact, to one sample).
    double resolution = 0.0;
};

struct FinderResult {
    int64_t max_batch = 0;  ///< largest batch that fit (0: none)
    int64_t safe_batch = 0;
    int64_t first_failure = 0;  ///< smallest batch that did not fit (0: none found)
    int64_t peak_at_max = 0;
    bool reached_upper_bound = false;
    bool trials_exhausted = false;
    bool cancelled = false;
    std::string error;          ///< a failure that is not a memory limit stops the search
    bool budget_error = false;  ///< `error` says the budget leaves room for no batch at all
    std::vector<BatchTrial> trials;
    /// One line saying how the search ended.
    std::string summary() const;
};

using TrialFunction = std::function<BatchTrial(int64_t batch)>;

/// Doubles from `start` until a trial does not fit (or halves until one does),
/// then binary-searches the boundary exactly. A trial with outcome Error stops
/// the search with that error: it is not called a memory limit.
FinderResult findMaxBatch(const TrialFunction& trial, const FinderOptions& options,
                          const run::CancelToken* cancel = nullptr,
                          const std::function<void(const BatchTrial&)>& on_trial = {});

/// Seconds a trial at `batch` takes, from the trials measured so far (those with
/// `seconds` > 0): a line a + b·batch fitted by least squares (a, b ≥ 0). NaN
/// before two trials of different batches were measured.
double trialSecondsAt(const std::vector<BatchTrial>& trials, int64_t batch);

/// The most trials the search can still run after `trials` (in the order run), and
/// what they cost at most in seconds (each at its batch through trialSecondsAt),
/// over every outcome the remaining trials can have; the trial limit caps both.
/// While the search doubles and nothing has failed yet, how far it goes is unknown
/// unless `predicted_failure` (> 0) names the batch expected to fail first (on CPU,
/// from the peaks measured so far): then the doubling stops there.
struct SearchOutlook {
    int trials_left = -1;       ///< -1: unknown
    double seconds_left = NAN;  ///< NaN: cannot be estimated yet
    bool known() const { return trials_left >= 0 && !std::isnan(seconds_left); }
};
SearchOutlook searchOutlook(const std::vector<BatchTrial>& trials, const FinderOptions& options,
                            int64_t predicted_failure = 0);

/// "about 40 s left", "about 3 min left", "about 1 h 10 min left"; "—" for NaN.
std::string formatSecondsLeft(double seconds);

}  // namespace ampbench::train
