// Data-parallel arms on the CPU over Gloo, ranks as threads of this process: the
// equivalence with one rank of the global batch, found-inf agreement, bucketing,
// and a rank that stops ending the run on the others with its reason, no hang.
// The scheduler that spreads an experiment's runs over GPUs.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/amp/LossScaler.h"
#include "core/data/FashionMnist.h"
#include "core/parallel/Communicator.h"
#include "core/parallel/GradientSync.h"
#include "core/parallel/RankSummary.h"
#include "core/run/RemoveTree.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/GpuScheduler.h"
#include "core/train/Trainer.h"
#include "core/train/private/OptimizerStep.h"
#include "core/train/private/ParameterUpdater.h"
#include "core/train/private/SpreadRuns.h"

using namespace ampbench;

namespace {

bool haveData() {
    return std::filesystem::exists(data::defaultFashionMnistDir() + "/train-images-idx3-ubyte.gz");
}

/// Removes the folders the tests made when the test program ends.
class TempFolders : public ::testing::Environment {
  public:
    static std::vector<std::string>& all() {
        static std::vector<std::string> folders;
        return folders;
    }
    void TearDown() override {
        for (const auto& f : all()) {
            ampbench::run::removeTree(f);
        }
    }
};
const auto* const kTempFolders = ::testing::AddGlobalTestEnvironment(new TempFolders);

/// A fresh rendezvous file per test, in a folder of its own.
std::string freshStore() {
    char dir[] = "/tmp/ampbench-dp-XXXXXX";
    if (!::mkdtemp(dir)) {
        throw std::runtime_error("mkdtemp failed");
    }
    TempFolders::all().push_back(dir);
    return std::string(dir) + "/store";
}

parallel::RankSetup setupOf(int rank, int world, const std::string& store, double timeout_s = 30) {
    parallel::RankSetup s;
    s.rank = rank;
    s.world = world;
    s.store_path = store;
    s.timeout_s = timeout_s;
    return s;
}

/// Runs `body(rank)` on `world` threads and waits for all of them.
void onRanks(int world, const std::function<void(int)>& body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r) {
        threads.emplace_back([&body, r] { body(r); });
    }
    for (auto& t : threads) {
        t.join();
    }
}

struct Collect : run::TrainObserver {
    std::vector<run::StepRecord> steps;
    std::vector<run::EventRecord> events;
    run::RunInfo info;
    void onStart(const run::RunInfo& i) override { info = i; }
    void onStep(const run::StepRecord& s) override { steps.push_back(s); }
    void onEvent(const run::EventRecord& e) override { events.push_back(e); }
};

config::ExperimentSpec mlpSpec(int micro_batch, int ranks, int k, int64_t micro_steps) {
    config::ExperimentSpec s;
    s.name = "dp";
    s.model.name = "mlp";
    s.model.width = 32;
    s.model.depth = 1;
    s.optimizer.lr = 0.05;
    s.optimizer.momentum = 0.9;
    s.eval_interval = 0;
    s.eval_batches = 1;
    s.warmup_steps = 0;
    s.cpu_threads = 1;
    s.data.prefetch = 2;
    s.micro_batch = micro_batch;
    s.micro_steps = micro_steps;
    config::ArmSpec arm;
    arm.name = "fp32";
    arm.ranks = ranks;
    arm.accumulation = k;
    arm.lr_rule = config::LrRule::None;  // same lr for both: the comparison is of the batches
    s.arms = {arm};
    return s;
}

bool skipWithoutGloo() {
    return !parallel::glooAvailable();
}

}  // namespace

// 2 ranks × micro-batch b (K = 2) see exactly the samples of 1 rank × 2b (K = 2):
// the losses rank 0 records and the final parameters agree to float tolerance.
TEST(DataParallel, TwoRanksEqualOneRankOfTheGlobalBatch) {
    if (skipWithoutGloo()) {
        GTEST_SKIP() << "this build has no Gloo";
    }
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    const int b = 16, k = 2;
    const int64_t micro_steps = 24;
    run::CancelToken cancel;
    Collect one;
    std::vector<double> p_one;
    train::TrainOptions o1;
    o1.parameters_out = &p_one;
    const auto r1 = train::trainRun(mlpSpec(2 * b, 1, k, micro_steps), 0, 7, one, cancel, o1);
    ASSERT_EQ(r1.status, run::RunStatus::Finished) << r1.error;

    const auto spec2 = mlpSpec(b, 2, k, micro_steps);
    const std::string store = freshStore();
    Collect rank0, rank1;
    std::vector<double> p0, p1;
    run::RunOutcome out[2];
    onRanks(2, [&](int r) {
        train::TrainOptions o;
        o.ranks = setupOf(r, 2, store);
        o.parameters_out = r == 0 ? &p0 : &p1;
        out[r] = train::trainRun(spec2, 0, 7, r == 0 ? rank0 : rank1, cancel, o);
    });
    ASSERT_EQ(out[0].status, run::RunStatus::Finished) << out[0].error << " / " << out[1].error;
    ASSERT_EQ(out[1].status, run::RunStatus::Finished) << out[1].error;
    ASSERT_EQ(one.steps.size(), static_cast<size_t>(micro_steps / k));
    ASSERT_EQ(rank0.steps.size(), one.steps.size());
    for (size_t i = 0; i < one.steps.size(); ++i) {
        EXPECT_EQ(rank0.steps[i].samples, one.steps[i].samples) << "step " << i + 1;
        EXPECT_NEAR(rank0.steps[i].loss, one.steps[i].loss, 1e-5) << "step " << i + 1;
    }
    ASSERT_EQ(p0.size(), p_one.size());
    double max_diff = 0, rank_diff = 0;
    for (size_t i = 0; i < p_one.size(); ++i) {
        max_diff = std::max(max_diff, std::abs(p0[i] - p_one[i]));
        rank_diff = std::max(rank_diff, std::abs(p0[i] - p1[i]));
    }
    EXPECT_LT(max_diff, 1e-5);
    EXPECT_EQ(rank_diff, 0.0);  // every rank applies the same averaged gradients
    // Rank 0 records every rank's summary; the environment names the world and backend.
    int summaries = 0;
    for (const auto& e : rank0.events) {
        summaries +=
            e.message.rfind("rank ", 0) == 0 && e.message.find("median step") != std::string::npos;
    }
    EXPECT_EQ(summaries, 2);
    EXPECT_NE(rank0.info.env_json.find("\"world_size\":2"), std::string::npos)
        << rank0.info.env_json;
    EXPECT_NE(rank0.info.env_json.find("\"dist_backend\":\"gloo\""), std::string::npos);
}

// The optimizer step's exchange: one all-reduce per bucket after the K-th backward
// and one for found-inf; an inf on one rank only makes both skip and back off alike.
TEST(DataParallel, AnInfOnOneRankMakesEveryRankSkip) {
    if (skipWithoutGloo()) {
        GTEST_SKIP() << "this build has no Gloo";
    }
    const std::string store = freshStore();
    struct Result {
        bool skipped[2] = {false, false};
        double scale[2] = {0, 0};
        std::vector<float> params[2];
        int64_t collectives = 0;
    } res[2];
    onRanks(2, [&](int r) {
        parallel::Communicator comm(setupOf(r, 2, store), /*cuda=*/false);
        parallel::GradientSync sync(comm,
                                    /*bucket_bytes=*/16);  // 4 floats: two buckets of one tensor
        std::vector<at::Tensor> params = {at::ones({4}).requires_grad_(),
                                          at::ones({2}).requires_grad_()};
        config::OptimizerSpec opt;
        opt.momentum = 0;
        auto updater = train::makeUpdater(params, opt, 0.5, c10::Device(c10::kCPU));
        amp::LossScaler scaler({}, c10::Device(c10::kCPU), /*force_portable=*/true);
        for (int step = 0; step < 2; ++step) {
            const double scale = scaler.scaleValue();
            // Gradients as the scaled backward left them: rank r's are (r + 1) × scale.
            params[0].mutable_grad() = at::full({4}, (r + 1) * scale);
            params[1].mutable_grad() = at::full({2}, (r + 1) * scale);
            if (step == 0 && r == 1) {
                params[1].mutable_grad()[0] = INFINITY;  // the first step overflows on rank 1 only
            }
            auto result =
                train::finishOptimizerStep(params, *updater, &scaler, 0, false, false, &sync);
            res[r].skipped[step] = result.skipped;
            res[r].scale[step] = scaler.scaleValue();
        }
        for (const auto& p : params) {
            auto c = p.detach().contiguous();
            res[r].params[0].insert(res[r].params[0].end(), c.data_ptr<float>(),
                                    c.data_ptr<float>() + c.numel());
        }
        res[r].collectives = sync.collectives();
    });
    for (int r = 0; r < 2; ++r) {
        EXPECT_TRUE(res[r].skipped[0]) << "rank " << r;
        EXPECT_DOUBLE_EQ(res[r].scale[0], 32768.0) << "rank " << r;
        EXPECT_FALSE(res[r].skipped[1]) << "rank " << r;
        // The clean step: mean gradient (1 + 2) / 2 = 1.5 after unscaling, lr 0.5.
        for (float v : res[r].params[0]) {
            EXPECT_NEAR(v, 1.0f - 0.5f * 1.5f, 1e-6) << "rank " << r;
        }
        // Per step: two gradient buckets, one found-inf agreement.
        EXPECT_EQ(res[r].collectives, 2 * 3);
    }
}

TEST(DataParallel, FoundInfIsAgreedAcrossRanks) {
    if (skipWithoutGloo()) {
        GTEST_SKIP() << "this build has no Gloo";
    }
    const std::string store = freshStore();
    float agreed[3] = {-1, -1, -1};
    onRanks(3, [&](int r) {
        parallel::Communicator comm(setupOf(r, 3, store), false);
        parallel::GradientSync sync(comm);
        at::Tensor found_inf = at::full({1}, r == 2 ? 1.0f : 0.0f);
        sync.agreeFoundInf(found_inf);
        agreed[r] = found_inf.item<float>();
    });
    for (int r = 0; r < 3; ++r) {
        EXPECT_EQ(agreed[r], 1.0f) << "rank " << r;
    }
}

// The rendezvous over TCP (rank 0 serves c10d's TCPStore) works as the file does.
TEST(DataParallel, RanksMeetOverTcpToo) {
    if (skipWithoutGloo()) {
        GTEST_SKIP() << "this build has no Gloo";
    }
    // A port nobody listens on: bound once by the kernel's choice, then let go.
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::getsockname(probe, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    const int port = ntohs(addr.sin_port);
    ::close(probe);
    float agreed[2] = {-1, -1};
    onRanks(2, [&](int r) {
        parallel::RankSetup setup = setupOf(r, 2, "");
        setup.tcp_host = "127.0.0.1";
        setup.tcp_port = port;
        parallel::Communicator comm(setup, false);
        parallel::GradientSync sync(comm);
        at::Tensor found_inf = at::full({1}, r == 0 ? 1.0f : 0.0f);
        sync.agreeFoundInf(found_inf);
        agreed[r] = found_inf.item<float>();
    });
    EXPECT_EQ(agreed[0], 1.0f);
    EXPECT_EQ(agreed[1], 1.0f);
}

// Rank 1 fails at its fifth micro-batch: rank 0's run ends failed at once, naming
// rank 1 and its reason, with the steps before it recorded.
TEST(DataParallel, ARankThatFailsEndsTheRunOnEveryRank) {
    if (skipWithoutGloo()) {
        GTEST_SKIP() << "this build has no Gloo";
    }
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    const auto spec = mlpSpec(16, 2, 1, 40);
    const std::string store = freshStore();
    run::CancelToken cancel;
    Collect rank0, rank1;
    run::RunOutcome out[2];
    const auto t0 = std::chrono::steady_clock::now();
    onRanks(2, [&](int r) {
        train::TrainOptions o;
        o.ranks = setupOf(r, 2, store, /*timeout_s=*/300);
        if (r == 1) {
            o.before_micro_batch = [](int64_t n) {
                if (n == 5) {
                    throw std::runtime_error("simulated loss of the device");
                }
            };
        }
        out[r] = train::trainRun(spec, 0, 3, r == 0 ? rank0 : rank1, cancel, o);
    });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // The loss of a rank is noticed, not waited out: far under the 300 s timeout.
    EXPECT_LT(seconds, 120.0);
    EXPECT_EQ(out[1].status, run::RunStatus::Failed);
    ASSERT_EQ(out[0].status, run::RunStatus::Failed);
    // Rank 1 said why before it left; rank 0's run carries that reason.
    EXPECT_NE(out[0].error.find("rank 1 failed: simulated loss of the device"), std::string::npos)
        << out[0].error;
    EXPECT_EQ(out[0].steps_done, static_cast<int64_t>(rank0.steps.size()));
    EXPECT_LE(out[0].steps_done, 5);
}

// Gradients are averaged; a parameter without a gradient on one rank counts as zeros
// there, one that no rank has stays without; a frozen parameter gets none.
TEST(DataParallel, GradientsAreAveragedAndFrozenParametersLeftAlone) {
    if (skipWithoutGloo()) {
        GTEST_SKIP() << "this build has no Gloo";
    }
    const std::string store = freshStore();
    float averaged[2][2] = {};
    bool frozen_grad[2] = {true, true};
    bool unused_grad[2] = {true, true};
    onRanks(2, [&](int r) {
        parallel::Communicator comm(setupOf(r, 2, store), false);
        parallel::GradientSync sync(comm);
        std::vector<at::Tensor> params = {at::ones({1}).requires_grad_(),
                                          at::ones({1}).requires_grad_(), at::ones({1}),
                                          at::ones({1}).requires_grad_()};  // unused everywhere
        params[0].mutable_grad() = at::full({1}, 1.0f + r);                 // 1 and 2: mean 1.5
        if (r == 1) {
            params[1].mutable_grad() = at::full({1}, 4.0f);  // rank 0 has none: mean 2
        }
        at::Tensor loss = at::full({}, 2.0f * (r + 1));  // 2 and 4: mean 3
        sync.averageGradients(params, &loss);
        averaged[r][0] = params[0].grad().item<float>();
        averaged[r][1] = params[1].grad().item<float>();
        frozen_grad[r] = params[2].grad().defined();
        unused_grad[r] = params[3].grad().defined();
        EXPECT_FLOAT_EQ(loss.item<float>(), 3.0f);
        EXPECT_EQ(loss.dim(), 0);
    });
    for (int r = 0; r < 2; ++r) {
        EXPECT_FLOAT_EQ(averaged[r][0], 1.5f);
        EXPECT_FLOAT_EQ(averaged[r][1], 2.0f);
        EXPECT_FALSE(frozen_grad[r]);
        EXPECT_FALSE(unused_grad[r]);  // no rank had one: it stays unset, as on one rank
    }
}

// The summary a rank sends to rank 0 survives its JSON.
TEST(DataParallel, RankSummaryRoundTrip) {
    parallel::RankSummaryObserver obs(1);
    for (int i = 1; i <= 5; ++i) {
        run::StepRecord s;
        s.step = i;
        s.step_ms = i;
        s.mem_peak = 1000 * i;
        s.timed = i > 1;
        obs.onStep(s);
    }
    const auto back = parallel::rankSummaryFromJson(parallel::toJson(obs.summary()));
    EXPECT_EQ(back.rank, 1);
    EXPECT_EQ(back.steps, 5);
    EXPECT_DOUBLE_EQ(back.median_step_ms, 3.5);
    EXPECT_DOUBLE_EQ(back.max_step_ms, 5);
    EXPECT_EQ(back.peak_bytes, 5000);
    EXPECT_NE(parallel::describe(back).find("rank 1: median step 3.50 ms"), std::string::npos)
        << parallel::describe(back);
}

// Runs spread over GPUs: one run per GPU at a time by default, a 2-rank run waits
// for two free GPUs side by side, several per GPU only when allowed (and flagged).
TEST(GpuScheduler, OneRunPerGpuAtATime) {
    train::GpuScheduler s(2, 1);
    EXPECT_EQ(s.place(1, 1), 0);
    EXPECT_EQ(s.place(2, 1), 1);
    EXPECT_EQ(s.place(3, 1), std::nullopt);  // both GPUs busy
    s.finish(1);
    EXPECT_EQ(s.place(3, 1), 0);
    EXPECT_FALSE(s.shared(1));
    EXPECT_FALSE(s.shared(3));
}

TEST(GpuScheduler, ARankedRunTakesConsecutiveFreeGpus) {
    train::GpuScheduler s(4, 1);
    EXPECT_EQ(s.place(1, 1), 0);
    EXPECT_EQ(s.place(2, 2), 1);             // GPUs 1 and 2
    EXPECT_EQ(s.place(3, 2), std::nullopt);  // only GPU 3 is free
    EXPECT_EQ(s.place(4, 1), 3);
    s.finish(1);
    s.finish(2);
    EXPECT_EQ(s.place(5, 2), 0);
    EXPECT_EQ(s.place(6, 5), std::nullopt);  // more ranks than GPUs never fits
}

TEST(GpuScheduler, SeveralRunsPerGpuAreFlaggedAsShared) {
    train::GpuScheduler s(2, 2);
    EXPECT_EQ(s.place(1, 1), 0);
    EXPECT_EQ(s.place(2, 1), 1);  // the emptiest GPU first
    EXPECT_FALSE(s.shared(1));
    EXPECT_EQ(s.place(3, 1), 0);  // now GPU 0 holds two runs
    EXPECT_TRUE(s.shared(1));
    EXPECT_TRUE(s.shared(3));
    EXPECT_FALSE(s.shared(2));
    s.finish(1);
    EXPECT_TRUE(s.shared(1));  // it stays flagged after it ended
    EXPECT_EQ(s.load(0), 1);
}

TEST(GpuScheduler, OneGpuOrTheCpuTrainsOneRunAtATime) {
    train::GpuScheduler s(1, 1);
    EXPECT_EQ(s.place(1, 1), 0);
    EXPECT_EQ(s.place(2, 1), std::nullopt);
    s.finish(1);
    EXPECT_EQ(s.place(2, 1), 0);
    EXPECT_TRUE(s.idle() == false);
    config::ExperimentSpec cpu;
    cpu.device = config::DeviceKind::Cpu;
    cpu.runs_per_gpu = 4;
    EXPECT_EQ(train::spreadGpus(cpu, train::chooseDevice(cpu.device)), 0);  // never on the CPU
    // Arms that differ in TF32, a process-wide switch, never train side by side.
    cpu.arms = {config::ArmSpec{"fp32"}, config::ArmSpec{"tf32"}};
    EXPECT_TRUE(train::canTrainSideBySide(cpu));
    cpu.arms[1].tf32 = true;
    EXPECT_FALSE(train::canTrainSideBySide(cpu));
    cpu.arms[1].tf32 = false;
    cpu.arms[1].cuda_graph = true;  // each run captures on a stream of its own
    EXPECT_TRUE(train::canTrainSideBySide(cpu));
}

// The side-by-side path itself, on CPU threads standing in for GPUs: every run of
// the plan trains on a thread with its own connection and ends recorded; runs that
// shared a "GPU" say so, runs that had one to themselves do not.
TEST(GpuScheduler, SpreadRunsTrainSideBySideAndFlagSharing) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    const std::string dir = std::filesystem::path(freshStore()).parent_path().string();
    auto spec = mlpSpec(16, 1, 1, 12);
    spec.seeds = {1, 2};
    spec.device = config::DeviceKind::Cpu;
    for (const auto& [gpus, per_gpu] : {std::pair{2, 1}, std::pair{1, 2}}) {
        auto db = store::Database::open(dir + "/r" + std::to_string(gpus) + ".db");
        spec.runs_per_gpu = per_gpu;
        train::ExperimentResult result;
        result.plan = train::planExperiment(*db, spec);
        run::CancelToken cancel;
        int finished_hooks = 0;
        Collect progress;  // one front-end observer for every run, as the CLI's
        train::ExperimentHooks hooks;
        hooks.starting = [&](const train::PlannedRun&) { return &progress; };
        hooks.finished = [&](const train::PlannedRun&, const run::RunOutcome&) {
            ++finished_hooks;
        };
        train::trainSpread(*db, spec, cancel, hooks, {}, gpus, result);
        EXPECT_FALSE(result.any_failed);
        EXPECT_EQ(finished_hooks, 2);
        EXPECT_EQ(progress.steps.size(), 24u);  // both runs' steps, one call at a time
        for (const auto& row : db->runs()) {
            EXPECT_EQ(row.status, run::RunStatus::Finished) << row.error;
            EXPECT_EQ(db->steps(row.id).size(), 12u);
            bool flagged = false;
            for (const auto& e : db->events(row.id)) {
                flagged = flagged || e.message.find("shared its GPU") != std::string::npos;
            }
            // Two runs on two GPUs never share; two on one GPU (2 per GPU) both do: the
            // second is placed as soon as the first has started.
            EXPECT_EQ(flagged, per_gpu > 1) << "run " << row.id;
        }
    }
}
