#include "cli/Progress.h"
#include "cli/Terminal.h"

#include "core/analysis/Format.h"

namespace ampbench::cli {
using Clock = std::chrono::steady_clock;

/// One run's lines.
class Progress::Run : public run::TrainObserver {
  public:
    Run(int index, int run_count, const std::string& arm, uint64_t seed, int64_t planned,
        bool terminal, bool quiet)
        : index_(index),
          run_count_(run_count),
          arm_(arm),
          seed_(seed),
          planned_(planned),
          terminal_(terminal),
          quiet_(quiet),
          last_draw_(Clock::now()) {}
    void onStep(const run::StepRecord& step) override;
    void onEval(const run::EvalRecord& eval) override;
    void onEvent(const run::EventRecord& event) override;
    void onFinish(const run::RunOutcome& outcome) override;

  private:
    void draw(bool force);

    const int index_;
    const int run_count_;
    const std::string arm_;
    const uint64_t seed_;
    const int64_t planned_;
    const bool terminal_;
    const bool quiet_;
    int64_t step_ = 0;
    double loss_ = 0;
    // The rate behind the ETA counts from the first step heard of, so that the set-up,
    // cuDNN's first choices and a graph's capture do not stretch it.
    int64_t first_step_ = -1;
    Clock::time_point last_draw_, first_seen_;
};

Progress::Progress(int run_count, bool terminal, bool quiet)
    : run_count_(run_count), terminal_(terminal), quiet_(quiet) {}

Progress::~Progress() = default;

run::TrainObserver* Progress::beginRun(int index, const std::string& arm, uint64_t seed,
                                       int64_t planned) {
    runs_.push_back(
        std::make_unique<Run>(index, run_count_, arm, seed, planned, terminal_, quiet_));
    if (!quiet_ && !terminal_) {
        say(stderr, "[run %d/%d] %s seed %llu: %lld optimizer steps\n", index + 1, run_count_,
            arm.c_str(), static_cast<unsigned long long>(seed), static_cast<long long>(planned));
    }
    return runs_.back().get();
}

void Progress::Run::onStep(const run::StepRecord& step) {
    if (first_step_ < 0) {
        first_step_ = step.step;
        first_seen_ = Clock::now();
    }
    step_ = step.step;
    loss_ = step.loss;
    draw(false);
}

void Progress::Run::onEval(const run::EvalRecord& eval) {
    if (!quiet_ && !terminal_) {
        say(stderr, "[run %d/%d] %s step %lld: val loss %.4f, val acc %.2f%%\n", index_ + 1,
            run_count_, arm_.c_str(), static_cast<long long>(eval.step), eval.val_loss,
            eval.val_accuracy * 100.0);
    }
}

void Progress::Run::onEvent(const run::EventRecord& event) {
    if (quiet_ || event.kind == run::EventKind::SkippedStep || event.kind == run::EventKind::Info ||
        event.kind == run::EventKind::AloneTiming) {
        return;
    }
    if (terminal_) {
        std::fputs("\r\033[K", stderr);
    }
    say(stderr, "[run %d/%d] %s: %s: %s\n", index_ + 1, run_count_, arm_.c_str(),
        run::toString(event.kind).c_str(), event.message.c_str());
}

void Progress::Run::onFinish(const run::RunOutcome& outcome) {
    if (quiet_) {
        return;
    }
    if (terminal_) {
        std::fputs("\r\033[K", stderr);
    }
    say(stderr, "[run %d/%d] %s seed %llu: %s after %lld steps in %s%s%s\n", index_ + 1, run_count_,
        arm_.c_str(), static_cast<unsigned long long>(seed_), run::toString(outcome.status).c_str(),
        static_cast<long long>(outcome.steps_done),
        analysis::formatDuration(outcome.wall_s).c_str(), outcome.error.empty() ? "" : ": ",
        outcome.error.c_str());
}

void Progress::Run::draw(bool force) {
    if (quiet_) {
        return;
    }
    auto now = Clock::now();
    auto since = std::chrono::duration<double>(now - last_draw_).count();
    if (!force && since < (terminal_ ? 0.1 : 5.0)) {
        return;
    }
    last_draw_ = now;
    const double since_first = std::chrono::duration<double>(now - first_seen_).count();
    const double frac =
        planned_ > 0 ? static_cast<double>(step_) / static_cast<double>(planned_) : 0.0;
    std::string eta = "–";  // until a rate is known
    if (first_step_ >= 0 && step_ > first_step_ && since_first > 0) {
        const double per_step = since_first / static_cast<double>(step_ - first_step_);
        eta = analysis::formatDuration(per_step * static_cast<double>(planned_ - step_));
    }
    if (terminal_) {
        constexpr int kWidth = 28;
        int filled = static_cast<int>(frac * kWidth);
        std::string bar(static_cast<size_t>(filled), '#');
        bar += std::string(static_cast<size_t>(kWidth - filled), '.');
        std::fputs("\r\033[K", stderr);
        say(stderr, "[run %d/%d] %-12s [%s] %lld/%lld loss %.4f ETA %s", index_ + 1, run_count_,
            arm_.c_str(), bar.c_str(), static_cast<long long>(step_),
            static_cast<long long>(planned_), loss_, eta.c_str());
    } else {
        say(stderr, "[run %d/%d] %s step %lld/%lld loss %.4f ETA %s\n", index_ + 1, run_count_,
            arm_.c_str(), static_cast<long long>(step_), static_cast<long long>(planned_), loss_,
            eta.c_str());
    }
    std::fflush(stderr);
}

}  // namespace ampbench::cli
