#include "core/train/BatchFinder.h"

#include <algorithm>
#include <cmath>

namespace ampbench::train {

using namespace run;  // the records a run emits

std::string toString(TrialOutcome o) {
    switch (o) {
        case TrialOutcome::Fits:
            return "fits";
        case TrialOutcome::OutOfMemory:
            return "out_of_memory";
        case TrialOutcome::OverBudget:
            return "over_budget";
        case TrialOutcome::PredictedOverBudget:
            return "predicted_over_budget";
        case TrialOutcome::Error:
            return "error";
    }
    return "error";
}

std::string FinderResult::summary() const {
    if (!error.empty()) {
        return budget_error ? error : "stopped by an error that is not a memory limit: " + error;
    }
    std::string s;
    if (max_batch == 0) {
        s = "no batch fits, not even " + std::to_string(first_failure > 0 ? first_failure : 1);
    } else {
        s = "max batch " + std::to_string(max_batch) + ", safe " + std::to_string(safe_batch);
        if (first_failure > 0) {
            s += ", " + std::to_string(first_failure) + " does not fit";
        }
    }
    if (reached_upper_bound) {
        s += "; reached the upper bound, the true limit may be higher";
    }
    if (trials_exhausted) {
        s += "; stopped at the trial limit, the boundary is not exact";
    }
    if (cancelled) {
        s += "; cancelled: partial result";
    }
    return s;
}

FinderResult findMaxBatch(const TrialFunction& trial, const FinderOptions& o,
                          const CancelToken* cancel,
                          const std::function<void(const BatchTrial&)>& on_trial) {
    FinderResult r;
    const int64_t upper = std::max<int64_t>(1, o.upper_bound);
    int64_t lo = 0, hi = 0;  // largest fit, smallest failure
    bool stop = false;
    auto run = [&](int64_t b) -> const BatchTrial* {
        if (cancel && cancel->cancelled()) {
            r.cancelled = true;
            stop = true;
            return nullptr;
        }
        if (static_cast<int>(r.trials.size()) >= o.max_trials) {
            r.trials_exhausted = true;
            stop = true;
            return nullptr;
        }
        BatchTrial t = trial(b);
        if (cancel && cancel->cancelled() && t.outcome == TrialOutcome::Error) {
            // Cut short by the cancel (the trial's training stopped): not a result.
            r.cancelled = true;
            stop = true;
            return nullptr;
        }
        t.batch = b;
        r.trials.push_back(t);
        if (on_trial) {
            on_trial(t);
        }
        if (t.outcome == TrialOutcome::Error) {
            r.error = "batch " + std::to_string(b) + ": " + t.message;
            stop = true;
            return nullptr;
        }
        if (t.fits()) {
            lo = std::max(lo, b);
            if (lo == b) {
                r.peak_at_max = t.peak_bytes;
            }
        } else {
            hi = hi == 0 ? b : std::min(hi, b);
        }
        return &r.trials.back();
    };

    int64_t b = std::clamp<int64_t>(o.start, 1, upper);
    const BatchTrial* t = run(b);
    if (t && t->fits()) {
        while (!stop && hi == 0 && lo < upper) {
            run(std::min(lo * 2, upper));
        }
        r.reached_upper_bound = !stop && hi == 0 && lo == upper;
    } else if (t) {
        while (!stop && lo == 0 && hi > 1) {
            run(hi / 2);
        }
    }
    auto gap_ok = [&] {
        return hi - lo <=
               std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(lo) * o.resolution));
    };
    while (!stop && lo > 0 && hi > 0 && !gap_ok()) {
        run(lo + (hi - lo) / 2);
    }
    r.max_batch = lo;
    r.first_failure = hi;
    if (lo > 0) {
        r.safe_batch = std::max<int64_t>(
            1, static_cast<int64_t>(std::floor(static_cast<double>(lo) * (1.0 - o.margin))));
    }
    return r;
}

}  // namespace ampbench::train
