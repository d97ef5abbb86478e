// Measures what the per-step recording costs on the default comparison's arms, two
// ways:
// - A/B: each arm trains recorded (step timers, memory probe, gradient norm, a
//   batched read-back, batched SQLite writes) and bare (none of these, and no
//   read-back before the end), in alternating order from one round to the next. Each run's
//   steady-state time per optimizer step is taken from its own step clock between a step after
//   warm-up and the last one, so set-up, the final evaluation and closing the run are not in it.
// - Direct: the trainer adds up the host time of every recording call
//   (TrainOptions::recording_host_ms). On a launch-bound model the host is the
//   critical path, so this is what recording adds to a step; unlike the A/B it does
//   not drown in the machine's run-to-run noise.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "SteadyClock.h"
#include "core/analysis/Statistics.h"
#include "core/config/Presets.h"
#include "core/store/Database.h"
#include "core/store/RunRecorder.h"
#include "core/train/Experiment.h"

using namespace ampbench;
using Clock = std::chrono::steady_clock;

namespace {

struct Sample {
    double ms_per_step = 0;
    train::RecordingCost cost;  // per optimizer step
};

}  // namespace

int main(int argc, char** argv) {
    int64_t steps = argc > 1 ? std::stoll(argv[1]) : 200;
    int rounds = argc > 2 ? std::stoi(argv[2]) : 3;
    auto spec = *config::preset("default");
    spec.micro_steps = steps;
    spec.eval_interval = 0;
    spec.eval_batches = 1;
    auto db_path = std::filesystem::temp_directory_path() / "ampbench-overhead.db";
    std::filesystem::remove(db_path);
    auto db = store::Database::open(db_path.string());
    std::printf(
        "recording overhead: preset 'default', %lld micro-batches per run, %d rounds "
        "(order alternates)\n",
        static_cast<long long>(steps), rounds);
    std::printf("%-11s %8s %8s %7s %13s | %6s %6s %6s %6s %6s %6s\n", "arm", "recorded", "bare",
                "A/B", "A/B range", "host", "timers", "memory", "norm", "read", "store");
    for (size_t a = 0; a < spec.arms.size(); ++a) {
        auto single = spec;
        single.arms = {spec.arms[a]};
        const int64_t opt_steps = steps / std::max(1, single.arms[0].accumulation);
        const int64_t skip = std::clamp<int64_t>(opt_steps / 10, 1, 50);
        auto runOnce = [&](bool recorded, Sample& out) {
            run::CancelToken cancel;
            train::TrainOptions opt = recorded ? train::TrainOptions{} : bench::bareOptions();
            opt.recording_cost = &out.cost;
            std::unique_ptr<store::RunRecorder> recorder;
            if (recorded) {
                auto plan = train::planExperiment(*db, single);
                recorder = std::make_unique<store::RunRecorder>(*db, plan.runs.front().run_id);
            }
            bench::SteadyClock clock(recorder.get(), skip);
            auto o = train::trainRun(single, 0, single.seeds.front(), clock, cancel, opt);
            if (o.status != run::RunStatus::Finished || !clock.measured()) {
                std::fprintf(stderr, "run failed: %s\n", o.error.c_str());
                return false;
            }
            out.ms_per_step = clock.msPerStep();
            const auto n = static_cast<double>(o.steps_done);
            for (double* part : {&out.cost.timers_ms, &out.cost.memory_ms, &out.cost.grad_norm_ms,
                                 &out.cost.readback_ms, &out.cost.observer_ms}) {
                *part /= n;
            }
            return true;
        };
        std::vector<double> rec_ms, bare_ms, ratios;
        std::vector<std::vector<double>> shares(6);
        for (int r = 0; r < rounds; ++r) {
            Sample rec, bare;
            const bool recorded_first = r % 2 == 0;
            if (!runOnce(recorded_first, recorded_first ? rec : bare) ||
                !runOnce(!recorded_first, recorded_first ? bare : rec)) {
                return 1;
            }
            rec_ms.push_back(rec.ms_per_step);
            bare_ms.push_back(bare.ms_per_step);
            ratios.push_back(rec.ms_per_step / bare.ms_per_step);
            const auto& c = rec.cost;
            const double parts[6] = {c.total(),      c.timers_ms,   c.memory_ms,
                                     c.grad_norm_ms, c.readback_ms, c.observer_ms};
            for (int i = 0; i < 6; ++i) {
                shares[i].push_back(100.0 * parts[i] / bare.ms_per_step);
            }
        }
        auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
        char range[32];
        std::snprintf(range, sizeof range, "%.3f-%.3f", *lo, *hi);
        std::printf("%-11s %8.3f %8.3f %7.4f %13s |", spec.arms[a].name.c_str(),
                    analysis::median(rec_ms), analysis::median(bare_ms), analysis::median(ratios),
                    range);
        for (const auto& share : shares) {
            std::printf(" %5.2f%%", analysis::median(share));
        }
        std::printf("\n");
    }
    std::printf(
        "recorded / bare = steady-state wall ms per optimizer step (medians over rounds);\n"
        "A/B = median over rounds of recorded / bare, with its range;\n"
        "host = host time inside recording calls per step / bare step time (medians), by part:\n"
        "  timers (CUDA events), memory (allocator statistics), norm (gradient norms), read\n"
        "  (the batched read-back, with its wait for the device), store (the observer:\n"
        "  batched SQLite writes)\n");
    std::filesystem::remove(db_path);
    return 0;
}
