// Measures what the per-step bookkeeping costs: the default comparison's arms run
// with full recording (probes, grad norms, batched SQLite writes) and bare (no
// probes, no observer), alternating so machine noise hits both alike. Prints the
// median wall time per optimizer step of each and the ratio.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/analysis/Statistics.h"
#include "core/config/Presets.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"

using namespace ampbench;

int main(int argc, char** argv) {
    int64_t steps = argc > 1 ? std::stoll(argv[1]) : 200;
    int rounds = argc > 2 ? std::stoi(argv[2]) : 3;
    auto spec = *config::preset("default");
    spec.steps = steps;
    spec.eval_interval = 0;
    spec.eval_batches = 1;
    auto db_path = std::filesystem::temp_directory_path() / "ampbench-overhead.db";
    std::filesystem::remove(db_path);
    auto db = store::Database::open(db_path.string());
    std::printf("recording overhead: preset 'default', %lld micro-batches per run, %d rounds\n",
                static_cast<long long>(steps), rounds);
    std::printf("%-12s %16s %16s %8s\n", "arm", "recorded ms/step", "bare ms/step", "ratio");
    for (size_t a = 0; a < spec.arms.size(); ++a) {
        std::vector<double> recorded, bare;
        for (int r = 0; r < rounds; ++r) {
            auto single = spec;
            single.arms = {spec.arms[a]};
            auto plan = train::planExperiment(*db, single);
            train::CancelToken cancel;
            auto t0 = std::chrono::steady_clock::now();
            auto out = train::executeRun(*db, single, plan.runs.front(), cancel);
            double rec_s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            train::TrainObserver none;
            train::TrainOptions off;
            off.instrument = false;
            t0 = std::chrono::steady_clock::now();
            auto out2 = train::trainRun(single, 0, single.seeds.front(), none, cancel, off);
            double bare_s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (out.status != train::RunStatus::Finished ||
                out2.status != train::RunStatus::Finished) {
                std::fprintf(stderr, "run failed: %s%s\n", out.error.c_str(), out2.error.c_str());
                return 1;
            }
            recorded.push_back(rec_s * 1000.0 / static_cast<double>(out.steps_done));
            bare.push_back(bare_s * 1000.0 / static_cast<double>(out2.steps_done));
        }
        double mr = analysis::median(recorded), mb = analysis::median(bare);
        std::printf("%-12s %16.3f %16.3f %8.4f\n", spec.arms[a].name.c_str(), mr, mb, mr / mb);
    }
    std::printf(
        "ratio = recorded / bare wall time per optimizer step (medians over rounds); "
        "includes the final evaluation in both\n");
    std::filesystem::remove(db_path);
    return 0;
}
