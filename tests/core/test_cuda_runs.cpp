// GPU-only checks of whole runs: how busy the device keeps during a step, graph
// memory given back between runs, and graph runs side by side on streams of their
// own. Each skips where there is no CUDA device; bench/device.sh runs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/run/RemoveTree.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/Trainer.h"
#include "core/train/private/StepGraph.h"
#include "tests/core/CudaSpecs.h"
#include "tests/core/FileDataFiles.h"

#ifdef AMPBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

using namespace ampbench;
using namespace ampbench::test_cuda;

namespace {

double median(std::vector<double> v) {
    if (v.empty())
        return NAN;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// A run's timed step times and its DeviceBusy figure.
struct Busy : run::TrainObserver {
    std::vector<double> times;
    double device_ms = NAN;
    std::string said;
    void onStep(const run::StepRecord& r) override {
        if (r.timed)
            times.push_back(r.step_ms);
    }
    void onEvent(const run::EventRecord& e) override {
        if (e.kind == run::EventKind::DeviceBusy) {
            device_ms = e.value;
            said = e.message;
        }
    }
    double share() const { return device_ms / median(times); }
};

Busy busyOf(const config::ExperimentSpec& spec) {
    Busy b;
    run::CancelToken cancel;
    const auto r = train::trainRun(spec, 0, 1, b, cancel);
    EXPECT_EQ(r.status, run::RunStatus::Finished) << r.error;
    return b;
}

}  // namespace

// The default CNN at batch 64 is launch-bound on a recent GPU (each kernel takes a
// few microseconds, the host's launches set the pace): its device is busy for a small
// share of the step, and its graph arm (one launch per step) keeps it busier. A wide
// decoder keeps the device busy for almost all of its step.
TEST(Cuda, TheDeviceBusyShareTellsALaunchBoundModelFromADeviceBoundOne) {
    REQUIRE_CUDA();
    auto cnn = cudaCnnSpec(40, config::Precision::Fp32);
    const Busy eager = busyOf(cnn);
    ASSERT_TRUE(std::isfinite(eager.device_ms)) << "no DeviceBusy event";
    EXPECT_NE(eager.said.find("median of 5 probe steps"), std::string::npos) << eager.said;
    const auto big =
        busyOf(cudaDecoderSpec(1024, 8, 16, 1024, 8192, 8, 40, config::Precision::Fp32));
    ASSERT_TRUE(std::isfinite(big.device_ms)) << "no DeviceBusy event for the decoder";
    std::printf("device busy share: cnn %.3f (%.3f of %.3f ms), decoder %.3f (%.3f of %.3f ms)\n",
                eager.share(), eager.device_ms, median(eager.times), big.share(), big.device_ms,
                median(big.times));
    EXPECT_LT(eager.share(), 0.6);
    EXPECT_GT(big.share(), 0.8);
    if (train::StepGraph::available()) {
        cnn.arms[0].cuda_graph = true;
        const Busy graph = busyOf(cnn);
        ASSERT_TRUE(std::isfinite(graph.device_ms)) << "no DeviceBusy event for the graph arm";
        std::printf("device busy share: cnn graph %.3f (%.3f of %.3f ms)\n", graph.share(),
                    graph.device_ms, median(graph.times));
        EXPECT_GT(graph.share(), eager.share());
    }
}

// A graph keeps its memory in a private pool of the caching allocator, kept reserved
// after the graph is gone unless given back: nine graph runs of a GPT-2-sized decoder
// in one process used to pile up until the device ran out. Each run gives it back at
// its end, so the ninth reserves at its peak what the first did (within 5 %).
TEST(Cuda, GraphPoolsAreReleasedAtTheEndOfEachRun) {
    REQUIRE_CUDA();
    if (!train::StepGraph::available()) {
        GTEST_SKIP() << "CUDA graphs need LibTorch 2.x with CUDA";
    }
#ifdef AMPBENCH_WITH_CUDA
    auto s = cudaDecoderSpec(768, 12, 12, 512, 50257, 8, 8, config::Precision::AmpBf16);
    s.arms[0].cuda_graph = true;
    std::vector<int64_t> peaks;
    for (uint64_t seed = 1; seed <= 9; ++seed) {
        c10::cuda::CUDACachingAllocator::resetPeakStats(0);
        run::TrainObserver quiet;
        run::CancelToken cancel;
        const auto r = train::trainRun(s, 0, seed, quiet, cancel);
        ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
        const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(0);
        peaks.push_back(stats.reserved_bytes[0].peak);
        std::printf("graph run %llu: peak reserved %.1f MiB\n",
                    static_cast<unsigned long long>(seed),
                    static_cast<double>(peaks.back()) / (1 << 20));
    }
    EXPECT_LE(std::abs(static_cast<double>(peaks.back() - peaks.front())),
              0.05 * static_cast<double>(peaks.front()));
#endif
}

// Graph runs packed on one GPU capture and replay on streams of their own, at once;
// in deterministic mode each run's losses are those of the same run trained alone.
TEST(Cuda, GraphRunsSideBySideMatchTheSameRunsOneAtATime) {
    REQUIRE_CUDA();
    if (!train::StepGraph::available()) {
        GTEST_SKIP() << "CUDA graphs need LibTorch 2.x with CUDA";
    }
    const auto dir = std::filesystem::temp_directory_path() / "ampbench-cuda-side-by-side";
    run::removeTree(dir.string());
    std::filesystem::create_directories(dir);
    auto spec = cudaCnnSpec(60, config::Precision::AmpFp16);
    spec.arms[0].cuda_graph = true;
    spec.deterministic = true;
    spec.seeds = {1, 2, 3};
    std::vector<std::vector<double>> losses[2];
    for (int packed = 0; packed < 2; ++packed) {
        spec.runs_per_gpu = packed ? 3 : 1;
        auto db = store::Database::open((dir / ("p" + std::to_string(packed) + ".db")).string());
        run::CancelToken cancel;
        const auto result = train::runExperiment(*db, spec, cancel);
        ASSERT_FALSE(result.any_failed);
        for (const auto& row : db->runs()) {
            ASSERT_EQ(row.status, run::RunStatus::Finished) << row.error;
            std::vector<double> l;
            for (const auto& st : db->steps(row.id))
                l.push_back(st.loss);
            losses[packed].push_back(l);
        }
    }
    ASSERT_EQ(losses[0].size(), 3u);
    ASSERT_EQ(losses[1].size(), 3u);
    double worst = 0;
    for (size_t r = 0; r < 3; ++r) {
        ASSERT_EQ(losses[0][r].size(), losses[1][r].size());
        for (size_t i = 0; i < losses[0][r].size(); ++i) {
            worst = std::max(worst, std::abs(losses[0][r][i] - losses[1][r][i]) /
                                        std::max(1e-12, std::abs(losses[0][r][i])));
        }
    }
    std::printf("largest relative loss difference, packed vs alone: %.3g\n", worst);
    EXPECT_LE(worst, 1e-6);
    run::removeTree(dir.string());  // (LibTorch 2.x exports a std::filesystem::remove_all of its
                                    // own that crashes here)
}

// A graph arm follows the LR schedule: its captured optimizer step reads the rate
// from the device, filled before each replay; with accumulation K the micro-step and
// the optimizer step are two graphs. In deterministic mode, over 200 optimizer steps
// of OneCycle, every loss equals the eager arm's (measured bit for bit on the H200:
// the fused kernels compute the update in float32 whether the rate comes as a double
// or as a float32 tensor). A rate frozen at capture would part from step 5 on.
TEST(Cuda, AGraphArmFollowsTheLrScheduleAsTheEagerArmDoes) {
    REQUIRE_CUDA();
    if (!train::StepGraph::available()) {
        GTEST_SKIP() << "CUDA graphs need LibTorch 2.x with CUDA";
    }
    for (const int k : {1, 4}) {
        auto s = cudaCnnSpec(200 * k, config::Precision::AmpFp16);
        s.arms[0].accumulation = k;
        s.arms[0].lr_rule = config::LrRule::None;
        s.optimizer.schedule = config::LrSchedule::OneCycle;
        s.deterministic = true;
        struct Losses : run::TrainObserver {
            std::vector<double> loss, lr;
            void onStep(const run::StepRecord& r) override {
                loss.push_back(r.loss);
                lr.push_back(r.lr);
            }
        };
        auto run = [&](bool graph) {
            s.arms[0].cuda_graph = graph;
            Losses l;
            run::CancelToken cancel;
            const auto r = train::trainRun(s, 0, 1, l, cancel);
            EXPECT_EQ(r.status, run::RunStatus::Finished) << r.error;
            return l;
        };
        const Losses eager = run(false), graph = run(true);
        ASSERT_EQ(eager.loss.size(), 200u);
        ASSERT_EQ(graph.loss.size(), 200u);
        double worst = 0, worst_late = 0;
        for (size_t i = 0; i < 200; ++i) {
            EXPECT_DOUBLE_EQ(eager.lr[i], graph.lr[i]) << "step " << i + 1;
            const double d = std::abs(eager.loss[i] - graph.loss[i]) / std::abs(eager.loss[i]);
            worst = std::max(worst, d);
            if (i >= 150)
                worst_late = std::max(worst_late, d);
        }
        std::printf(
            "graph vs eager under OneCycle, accumulation %d: largest relative loss "
            "difference %.3g (last 50 steps %.3g)\n",
            k, worst, worst_late);
        EXPECT_LE(worst, 1e-6) << "accumulation " << k;
    }
}

// Data from a file comes through the loader: a captured graph takes each batch from
// the loader's pinned memory straight into its input buffers (an fp32 input; a
// channels_last one, rearranged on the device), or converts it on the device first
// (pure fp16). Deterministic, every loss equals the eager arm's, which feeds the model
// the batch it moved to the device itself.
TEST(Cuda, AGraphArmFedFromTheLoaderTrainsOnTheSameBatchesAsTheEagerArm) {
    REQUIRE_CUDA();
    if (!train::StepGraph::available()) {
        GTEST_SKIP() << "CUDA graphs need LibTorch 2.x with CUDA";
    }
    data::test_files::TempDir dir;
    const std::string file = dir.file("images.npz");
    at::manual_seed(7);
    const at::Tensor x = at::rand({640, 1, 28, 28});
    const at::Tensor y = at::randint(10, {640}, at::kLong);
    data::test_files::writeNpz(
        file, {{"x", data::test_files::npy(x)}, {"y", data::test_files::npy(y)}}, false);
    struct Case {
        config::Precision precision;
        bool channels_last;
        int k;
    };
    for (const Case c :
         {Case{config::Precision::Fp32, false, 1}, Case{config::Precision::Fp32, true, 1},
          Case{config::Precision::PureFp16, false, 1},
          Case{config::Precision::AmpFp16, false, 2}}) {
        auto s = cudaCnnSpec(60 * c.k, c.precision);
        s.data = data::test_files::spec("arrays", file, 0.1);
        s.deterministic = true;
        s.arms[0].channels_last = c.channels_last;
        s.arms[0].accumulation = c.k;
        const std::string what = config::toString(c.precision) +
                                 (c.channels_last ? ", channels_last" : "") + ", accumulation " +
                                 std::to_string(c.k);
        struct Losses : run::TrainObserver {
            std::vector<double> loss;
            void onStep(const run::StepRecord& r) override { loss.push_back(r.loss); }
        };
        auto run = [&](bool graph) {
            s.arms[0].cuda_graph = graph;
            Losses l;
            run::CancelToken cancel;
            const auto r = train::trainRun(s, 0, 1, l, cancel);
            EXPECT_EQ(r.status, run::RunStatus::Finished) << what << ": " << r.error;
            return l.loss;
        };
        const std::vector<double> eager = run(false), graph = run(true);
        ASSERT_EQ(eager.size(), 60u) << what;
        ASSERT_EQ(graph.size(), 60u) << what;
        double worst = 0;
        for (size_t i = 0; i < eager.size(); ++i) {
            worst = std::max(worst, std::abs(eager[i] - graph[i]) / std::abs(eager[i]));
        }
        std::printf(
            "graph vs eager fed by the loader (%s): largest relative loss difference %.3g\n",
            what.c_str(), worst);
        EXPECT_LE(worst, 1e-6) << what;
    }
}
