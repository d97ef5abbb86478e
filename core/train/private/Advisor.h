#pragma once
// Private to train/: one advice at work (Advisor), shared by Advise.cpp (the device, the
// searches, the candidates and their runs planned) and AdvisePhases.cpp (the passes and
// the quality check), with the shares of the budget each part may take.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "core/train/Advise.h"

namespace ampbench::train::detail {

using Clock = std::chrono::steady_clock;

/// The searches may take this share of a budget, the passes the next; the quality check
/// has what is left.
inline constexpr double kSearchShare = 0.3;
inline constexpr double kPassShare = 0.3;
/// Steps of a probe trial at the user's batch, which sizes the least budget.
inline constexpr int kProbeSteps = 3;

inline std::string joined(const std::vector<std::string>& parts, const char* separator) {
    std::string out;
    for (const auto& p : parts) {
        out += (out.empty() ? "" : separator) + p;
    }
    return out;
}

/// One advice at work: the steps advise() takes, in order, and what they leave for the next.
class Advisor {
  public:
    Advisor(store::Database& db, const config::ExperimentSpec& user, const AdviseOptions& options,
            const run::CancelToken& cancel, const AdviseHooks& hooks, const AdviseTrainer& trainer)
        : db_(db), user_(user), opt_(options), cancel_(cancel), hooks_(hooks), trainer_(trainer) {}

    AdviseResult run();

  private:
    double spent() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
    /// Seconds of the budget left for a part that may use up to `share` of it in all
    /// (with the parts before); 0 without a budget.
    double leftFor(double share) const {
        return opt_.budget_s > 0 ? std::max(0.0, opt_.budget_s * share - spent()) : 0.0;
    }
    void note(const std::string& line) const {
        if (hooks_.note) {
            hooks_.note(line);
        }
    }
    void progress(AdvisePhase phase, const std::string& what, int done, int total,
                  double left = NAN) const {
        if (!hooks_.progress) {
            return;
        }
        AdviseProgress p;
        p.phase = phase;
        p.candidate = what;
        p.done = done;
        p.total = total;
        p.seconds_spent = spent();
        p.seconds_left = left;
        if (opt_.budget_s > 0) {
            const double rest = std::max(0.0, opt_.budget_s - spent());
            p.seconds_left = std::isnan(left) ? rest : std::min(left, rest);
        }
        hooks_.progress(p);
    }
    bool stopped() {
        if (cancel_.cancelled()) {
            result_.end = AdviseEnd::Cancelled;
            result_.message = "cancelled: what was measured is kept";
        }
        return cancel_.cancelled();
    }

    bool probeBudget();
    void createExperiment();
    void search();
    bool chooseCandidates();
    void storeSpec(int64_t micro_steps);
    void recordUnsupported();
    void passes();
    void refusedEnd();
    void quality();
    PlannedRun planRun(int arm_index, uint64_t seed, int64_t steps, bool pass);

    store::Database& db_;
    const config::ExperimentSpec& user_;
    AdviseOptions opt_;
    const run::CancelToken& cancel_;
    const AdviseHooks& hooks_;
    AdviseTrainer trainer_;
    Clock::time_point t0_ = Clock::now();
    DeviceChoice choice_;  ///< where every run of the advice trains, chosen once
    std::string device_;
    bool cuda_ = false;
    config::AdviceDevice facts_;
    std::vector<config::AdviceFormat> formats_;
    std::vector<config::FormatCapacity> capacities_;
    std::vector<ArmCapacity> searches_;
    double probe_step_ms_ = 0;     ///< a step of fp32 at the user's batch; 0: not measured
    double probe_seconds_ = 0;     ///< the probe trial, its set-up included
    config::ExperimentSpec spec_;  ///< the experiment's, as stored last
    std::string inputs_json_;
    int64_t train_size_ = 0;
    std::vector<config::PassFigure> figures_;
    std::vector<int> refused_;  ///< candidates whose pass trained another batch than given
    AdviseResult result_;
};

}  // namespace ampbench::train::detail
