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
#include "core/store/RunRecorder.h"
#include "core/train/Experiment.h"

using namespace ampbench;
using Clock = std::chrono::steady_clock;

namespace {

/// Forwards to the recorder and adds up the time spent inside it: the direct
/// cost of recording, robust to a busy machine where A/B wall times are noisy.
struct TimedRecorder : train::TrainObserver {
    explicit TimedRecorder(train::TrainObserver& inner) : inner_(inner) {}
    template <class F>
    void timed(F&& f) {
        auto t = Clock::now();
        f();
        spent += std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    }
    void onStart(const train::RunInfo& i) override { inner_.onStart(i); }
    void onStep(const train::StepRecord& s) override {
        timed([&] { inner_.onStep(s); });
        step_ms += s.step_ms;
        ++steps;
    }
    void onEval(const train::EvalRecord& e) override {
        timed([&] { inner_.onEval(e); });
    }
    void onEvent(const train::EventRecord& e) override {
        timed([&] { inner_.onEvent(e); });
    }
    void onFinish(const train::RunOutcome& o) override {
        timed([&] { inner_.onFinish(o); });
    }
    train::TrainObserver& inner_;
    double spent = 0, step_ms = 0;
    int64_t steps = 0;
};

}  // namespace

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
    std::printf("%-12s %16s %16s %8s %14s\n", "arm", "recorded ms/step", "bare ms/step", "ratio",
                "store share");
    for (size_t a = 0; a < spec.arms.size(); ++a) {
        std::vector<double> recorded, bare, store_share;
        for (int r = 0; r < rounds; ++r) {
            auto single = spec;
            single.arms = {spec.arms[a]};
            auto plan = train::planExperiment(*db, single);
            train::CancelToken cancel;
            auto t0 = std::chrono::steady_clock::now();
            store::RunRecorder recorder(*db, plan.runs.front().run_id);
            TimedRecorder timed(recorder);
            auto out = train::trainRun(single, 0, single.seeds.front(), timed, cancel);
            store_share.push_back(timed.spent / timed.step_ms);
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
        std::printf("%-12s %16.3f %16.3f %8.4f %13.3f%%\n", spec.arms[a].name.c_str(), mr, mb,
                    mr / mb, 100.0 * analysis::median(store_share));
    }
    std::printf(
        "ratio = recorded / bare wall time per optimizer step (medians over rounds; includes "
        "the final evaluation in both; noisy on a busy machine)\n"
        "store share = time inside the SQLite recorder / summed step time\n");
    std::filesystem::remove(db_path);
    return 0;
}
