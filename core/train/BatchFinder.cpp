#include "core/train/BatchFinder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/util/Format.h"

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

double trialSecondsAt(const std::vector<BatchTrial>& trials, int64_t batch) {
    double n = 0, sb = 0, st = 0, sbb = 0, sbt = 0;
    int64_t first = 0;
    bool distinct = false;
    for (const auto& t : trials) {
        if (t.seconds <= 0) {
            continue;
        }
        if (n == 0) {
            first = t.batch;
        }
        distinct = distinct || t.batch != first;
        const double b = static_cast<double>(t.batch);
        n += 1;
        sb += b;
        st += t.seconds;
        sbb += b * b;
        sbt += b * t.seconds;
    }
    if (!distinct) {
        return NAN;
    }
    const double slope = std::max(0.0, (n * sbt - sb * st) / (n * sbb - sb * sb));
    const double intercept = std::max(0.0, (st - slope * sb) / n);
    return intercept + slope * static_cast<double>(batch);
}

namespace {

/// The worst case of the rest of a search: most trials, most seconds.
struct Rest {
    int trials = 0;
    double seconds = 0;
    static Rest worse(const Rest& a, const Rest& b) {
        return {std::max(a.trials, b.trials), std::max(a.seconds, b.seconds)};
    }
};

struct RestOfSearch {
    const std::vector<BatchTrial>& trials;
    const FinderOptions& o;
    int64_t upper;

    Rest trial(int64_t batch, const Rest& after) const {
        return {after.trials + 1, after.seconds + trialSecondsAt(trials, batch)};
    }
    bool gapOk(int64_t lo, int64_t hi) const {
        return hi - lo <=
               std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(lo) * o.resolution));
    }
    Rest bisect(int64_t lo, int64_t hi, int left) const {
        if (left <= 0 || gapOk(lo, hi)) {
            return {};
        }
        const int64_t mid = lo + (hi - lo) / 2;
        return trial(mid, Rest::worse(bisect(mid, hi, left - 1), bisect(lo, mid, left - 1)));
    }
    Rest halve(int64_t hi, int left) const {
        if (left <= 0 || hi <= 1) {
            return {};
        }
        const int64_t b = hi / 2;
        return trial(b, Rest::worse(halve(b, left - 1), bisect(b, hi, left - 1)));
    }
    Rest doubling(int64_t lo, int left, int64_t predicted_failure) const {
        if (left <= 0 || lo >= upper) {
            return {};
        }
        const int64_t b = std::min(lo * 2, upper);
        return trial(b, b >= predicted_failure ? bisect(lo, b, left - 1)
                                               : doubling(b, left - 1, predicted_failure));
    }
};

}  // namespace

SearchOutlook searchOutlook(const std::vector<BatchTrial>& trials, const FinderOptions& o,
                            int64_t predicted_failure) {
    SearchOutlook out;
    int64_t lo = 0, hi = 0;
    for (const auto& t : trials) {
        if (t.outcome == TrialOutcome::Error) {
            return {0, 0.0};  // the search stops on an error
        }
        if (t.fits()) {
            lo = std::max(lo, t.batch);
        } else {
            hi = hi == 0 ? t.batch : std::min(hi, t.batch);
        }
    }
    const int left = o.max_trials - static_cast<int>(trials.size());
    const RestOfSearch rest{trials, o, std::max<int64_t>(1, o.upper_bound)};
    Rest r;
    if (trials.empty()) {
        return out;
    } else if (lo > 0 && hi > 0) {
        r = rest.bisect(lo, hi, left);
    } else if (hi > 0) {
        r = rest.halve(hi, left);
    } else if (lo >= rest.upper) {
        r = {};
    } else if (predicted_failure > lo) {
        r = rest.doubling(lo, left, predicted_failure);
    } else {
        return out;  // doubling with no failure in sight: no bound worth giving
    }
    out.trials_left = std::max(0, r.trials);
    out.seconds_left = r.trials <= 0 ? 0.0 : r.seconds;
    return out;
}

std::string formatSecondsLeft(double seconds) {
    const std::string rough = util::roughDuration(seconds);
    return std::isfinite(seconds) && seconds >= 0 ? "about " + rough + " left" : rough;
}

}  // namespace ampbench::train
