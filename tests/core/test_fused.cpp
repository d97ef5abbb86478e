// Fused seeds: the runs of one arm trained as one fused model are recorded as the
// separate runs would be, step for step: the same losses (fp32, within rounding), the
// same evaluations, each run's own rows and events; what cannot fuse trains alone and
// the plan says why; a cancel keeps what was recorded.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/data/FashionMnist.h"
#include "core/models/Fused.h"
#include "core/models/Registry.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/private/FusedRuns.h"
#include "tests/core/CudaSpecs.h"
#include "tests/core/ScratchDir.h"

using namespace ampbench;

namespace {

bool haveData() {
    return std::filesystem::exists(data::defaultFashionMnistDir() + "/train-images-idx3-ubyte.gz");
}

/// A small CNN with dropout on Fashion-MNIST, three seeds, one fp32 arm.
config::ExperimentSpec cnnSpec() {
    config::ExperimentSpec s;
    s.name = "fused";
    s.model.name = "cnn";
    s.model.width = 8;
    s.model.depth = 2;
    s.model.dropout = 0.25;
    s.data.name = "fashion-mnist";
    s.micro_batch = 32;
    s.micro_steps = 50;
    s.eval_interval = 25;
    s.eval_batches = 2;
    s.warmup_steps = 2;
    s.cpu_threads = 1;
    s.device = config::DeviceKind::Cpu;
    s.seeds = {1, 2, 3};
    s.arms = {{"fp32", config::Precision::Fp32}};
    return s;
}

/// cnnSpec on the GPU without dropout, 80 micro-steps.
config::ExperimentSpec cudaCnnSpec() {
    auto s = cnnSpec();
    s.device = config::DeviceKind::Cuda;
    s.model.dropout = 0;
    s.micro_steps = 80;
    return s;
}

/// What one experiment recorded, run by run, keyed by (arm, seed).
struct Recorded {
    struct Run {
        run::RunStatus status;
        std::vector<run::StepRecord> steps;
        std::vector<run::EvalRecord> evals;
        std::vector<run::EventRecord> events;
    };
    std::map<std::pair<std::string, uint64_t>, Run> runs;
    std::vector<std::string> notes;

    bool said(const std::pair<std::string, uint64_t>& key, const std::string& part) const {
        for (const auto& e : runs.at(key).events) {
            if (e.message.find(part) != std::string::npos) {
                return true;
            }
        }
        return false;
    }
};

class FusedSeeds : public test::ScratchDirTest {
  protected:
    Recorded train(config::ExperimentSpec spec, config::Switch fuse, const std::string& name,
                   const train::ExperimentHooks& given = {}) {
        spec.fuse_seeds = fuse;
        auto db = store::Database::open(file(name));
        Recorded out;
        train::ExperimentHooks hooks = given;
        hooks.note = [&out](const std::string& line) { out.notes.push_back(line); };
        run::CancelToken cancel;
        const auto result = train::runExperiment(*db, spec, cancel, hooks);
        for (const auto& r : result.plan.runs) {
            auto& run = out.runs[{r.arm, r.seed}];
            run.status = db->run(r.run_id)->status;
            run.steps = db->steps(r.run_id);
            run.evals = db->evals(r.run_id);
            run.events = db->events(r.run_id);
        }
        return out;
    }
};

double relative(double a, double b) {
    return std::abs(a - b) / std::max(std::abs(b), 1e-12);
}

/// Every step's loss and every evaluation of each run alike within `tol` (relative).
void expectAlike(const Recorded& fused, const Recorded& alone, double tol) {
    ASSERT_EQ(fused.runs.size(), alone.runs.size());
    for (const auto& [key, run] : alone.runs) {
        SCOPED_TRACE(key.first + " seed " + std::to_string(key.second));
        const auto& f = fused.runs.at(key);
        EXPECT_EQ(f.status, run::RunStatus::Finished);
        ASSERT_EQ(f.steps.size(), run.steps.size());
        for (size_t i = 0; i < run.steps.size(); ++i) {
            EXPECT_EQ(f.steps[i].step, run.steps[i].step);
            EXPECT_EQ(f.steps[i].samples, run.steps[i].samples);
            EXPECT_LE(relative(f.steps[i].loss, run.steps[i].loss), tol)
                << "step " << run.steps[i].step << ": " << f.steps[i].loss << " fused, "
                << run.steps[i].loss << " alone";
        }
        ASSERT_EQ(f.evals.size(), run.evals.size());
        for (size_t i = 0; i < run.evals.size(); ++i) {
            EXPECT_LE(relative(f.evals[i].val_loss, run.evals[i].val_loss), tol);
            EXPECT_DOUBLE_EQ(f.evals[i].val_accuracy, run.evals[i].val_accuracy);
        }
    }
}

}  // namespace

/// The largest relative difference of the step losses of two recordings, over every run
/// and step.
double largestDifference(const Recorded& a, const Recorded& b) {
    double worst = 0;
    for (const auto& [key, run] : b.runs) {
        const auto& other = a.runs.at(key).steps;
        for (size_t i = 0; i < run.steps.size() && i < other.size(); ++i) {
            worst = std::max(worst, relative(other[i].loss, run.steps[i].loss));
        }
    }
    return worst;
}

// The CNN with dropout. Its own run is chaotic at rounding level: trained on two CPU
// threads instead of one, its losses drift apart by about 1e-2 within 50 steps (the
// convolutions add their terms in another order). So each fused member's first steps
// are its own run's within 1e-5, and over 50 steps it strays from its own run no
// further than the run strays from itself on another thread count.
TEST_F(FusedSeeds, ACnnMemberTrainsAsItsOwnRunWithinItsOwnRoundingNoise) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto spec = cnnSpec();
    const Recorded alone = train(spec, config::Switch::Off, "alone.db");
    const Recorded fused = train(spec, config::Switch::On, "fused.db");
    spec.cpu_threads = 2;
    const Recorded threads = train(spec, config::Switch::Off, "threads.db");
    for (const auto& [key, run] : alone.runs) {
        const auto& f = fused.runs.at(key);
        EXPECT_EQ(f.status, run::RunStatus::Finished);
        ASSERT_EQ(f.steps.size(), run.steps.size());
        ASSERT_EQ(f.evals.size(), run.evals.size());
        for (size_t i = 0; i < run.steps.size(); ++i) {
            EXPECT_EQ(f.steps[i].samples, run.steps[i].samples);
            if (i < 5) {
                EXPECT_LE(relative(f.steps[i].loss, run.steps[i].loss), 1e-5)
                    << "seed " << key.second << " step " << i + 1;
            }
        }
    }
    const double noise = largestDifference(threads, alone);
    const double strayed = largestDifference(fused, alone);
    std::printf(
        "fused cnn: largest relative loss difference %.2e against its own runs; the runs "
        "on two threads against one: %.2e\n",
        strayed, noise);
    EXPECT_LE(strayed, 3 * std::max(noise, 1e-5));
    EXPECT_TRUE(fused.said({"fp32", 2},
                           "fused seeds: trained as one model with the runs of "
                           "seeds 1, 2, 3"));
    EXPECT_FALSE(alone.said({"fp32", 2}, "fused seeds"));
    // The seeds really differ: fusing did not give every member one curve.
    EXPECT_NE(fused.runs.at({"fp32", 1}).steps.back().loss,
              fused.runs.at({"fp32", 2}).steps.back().loss);
}

// The MLP with dropout, accumulation over two micro-batches and gradient clipping
// (per member: each clips by its own norm), under a OneCycle schedule.
TEST_F(FusedSeeds, AnMlpMemberClipsAndAccumulatesAsItsOwnRun) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto spec = cnnSpec();
    spec.model.name = "mlp";
    spec.model.width = 32;
    spec.model.dropout = 0.3;
    spec.optimizer.schedule = config::LrSchedule::OneCycle;
    spec.optimizer.warmup_fraction = 0.3;
    spec.micro_steps = 60;
    spec.seeds = {4, 5};
    config::ArmSpec arm{"clipped", config::Precision::Fp32};
    arm.accumulation = 2;
    arm.grad_clip = 0.5;
    spec.arms = {arm};
    const Recorded alone = train(spec, config::Switch::Off, "alone.db");
    const Recorded fused = train(spec, config::Switch::On, "fused.db");
    expectAlike(fused, alone, 1e-5);
    for (const auto& [key, run] : fused.runs) {
        ASSERT_FALSE(run.steps.empty());
        EXPECT_TRUE(std::isfinite(run.steps.front().grad_norm)) << "its own norm, recorded";
    }
}

// An arm that cannot fuse trains its runs alone beside one that does, and the plan
// says which and why; auto fuses only under the fast verdict.
TEST_F(FusedSeeds, WhatCannotFuseTrainsAloneAndThePlanSaysWhy) {
    auto spec = cnnSpec();
    spec.data.name = "synthetic-images";
    spec.data.channels = 1;
    spec.data.height = spec.data.width = 8;
    spec.micro_steps = 8;
    spec.eval_interval = 0;
    spec.seeds = {1, 2};
    config::ArmSpec islands{"islands", config::Precision::AmpBf16};
    islands.fp32_modules = "head";
    spec.arms = {{"fp32", config::Precision::Fp32}, islands};
    const Recorded r = train(spec, config::Switch::On, "mixed.db");
    ASSERT_FALSE(r.notes.empty());
    bool named = false;
    for (const auto& n : r.notes) {
        named = named ||
                (n.find("'fp32' train each arm's seeds as one fused model") != std::string::npos &&
                 n.find("'islands' (it has FP32 islands)") != std::string::npos);
    }
    EXPECT_TRUE(named) << r.notes.front();
    EXPECT_TRUE(r.said({"fp32", 1}, "fused seeds"));
    EXPECT_FALSE(r.said({"islands", 1}, "fused seeds"));
    for (const auto& [key, run] : r.runs) {
        EXPECT_EQ(run.status, run::RunStatus::Finished) << key.first;
        EXPECT_EQ(run.steps.size(), 8u) << key.first;
    }
    spec.fuse_seeds = config::Switch::Auto;
    EXPECT_FALSE(config::fuseSeeds(spec));
    spec.fast_verdict = true;
    EXPECT_TRUE(config::fuseSeeds(spec));
    spec.fuse_seeds = config::Switch::Off;
    EXPECT_FALSE(config::fuseSeeds(spec));
}

// A member cancelled alone ends with the steps it made; the others train to the end.
TEST_F(FusedSeeds, AMemberCancelledAloneKeepsItsStepsAndTheOthersGoOn) {
    auto spec = cnnSpec();
    spec.data.name = "synthetic-images";
    spec.data.channels = 1;
    spec.data.height = spec.data.width = 8;
    spec.micro_steps = 1500;
    spec.eval_interval = 0;
    std::map<int64_t, std::unique_ptr<run::CancelToken>> tokens;
    struct CancelAt : run::TrainObserver {
        run::CancelToken* token = nullptr;
        void onStep(const run::StepRecord& s) override {
            if (s.step >= 10 && token) {
                token->cancel();
            }
        }
    };
    std::vector<std::unique_ptr<CancelAt>> watchers;
    train::ExperimentHooks hooks;
    hooks.run_cancel = [&](const train::PlannedRun& run) {
        auto& t = tokens[run.run_id];
        t = std::make_unique<run::CancelToken>();
        return t.get();
    };
    hooks.starting = [&](const train::PlannedRun& run) -> run::TrainObserver* {
        watchers.push_back(std::make_unique<CancelAt>());
        if (run.seed == 2) {
            watchers.back()->token = tokens[run.run_id].get();
        }
        return watchers.back().get();
    };
    const Recorded r = train(spec, config::Switch::On, "cancel.db", hooks);
    const auto& cancelled = r.runs.at({"fp32", 2});
    EXPECT_EQ(cancelled.status, run::RunStatus::Cancelled);
    EXPECT_GE(cancelled.steps.size(), 10u);
    EXPECT_LT(cancelled.steps.size(), 1500u);
    for (uint64_t seed : {1, 3}) {
        EXPECT_EQ(r.runs.at({"fp32", seed}).status, run::RunStatus::Finished);
        EXPECT_EQ(r.runs.at({"fp32", seed}).steps.size(), 1500u);
    }
}

// What can and cannot fuse, named.
TEST(FusionProblem, NamesWhatCannotFuse) {
    auto spec = cnnSpec();
    EXPECT_EQ(train::fusionProblem(spec, 0, false), "");
    spec.seeds = {1};
    EXPECT_EQ(train::fusionProblem(spec, 0, false), "it has one seed");
    spec.seeds = {1, 2};
    spec.model.name = "transformer";
    EXPECT_NE(train::fusionProblem(spec, 0, false).find("not the built-in cnn or mlp"),
              std::string::npos);
    spec.model.name = "mlp";
    spec.arms[0].precision = config::Precision::PureFp16;
    EXPECT_NE(train::fusionProblem(spec, 0, false).find("trains only alone"), std::string::npos);
    data::InputShape shape;
    shape.channels = 3;
    shape.height = shape.width = 8;
    shape.sample = {3, 8, 8};
    config::ModelSpec m;
    m.name = "resnet";
    m.width = 4;
    m.blocks = {1};
    EXPECT_EQ(models::fusionProblem(*models::makeModel(m, shape)),
              "only the built-in cnn and mlp train fused");
    m.name = "cnn";
    EXPECT_EQ(models::fusionProblem(*models::makeModel(m, shape)), "");
}

// GPU: fp16 members scaled from 2^30 overflow their first steps; each member backs off
// its own scale exactly as its own run does, and the curves end alike.
TEST_F(FusedSeeds, Fp16MembersKeepTheirOwnLossScaleOnTheGpu) {
    REQUIRE_CUDA();
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto spec = cudaCnnSpec();
    config::ArmSpec arm{"fp16", config::Precision::AmpFp16};
    arm.scaler.init_scale = std::ldexp(1.0, 30);
    spec.arms = {arm};
    const Recorded alone = train(spec, config::Switch::Off, "alone.db");
    const Recorded fused = train(spec, config::Switch::On, "fused.db");
    for (const auto& [key, run] : alone.runs) {
        SCOPED_TRACE("seed " + std::to_string(key.second));
        const auto& f = fused.runs.at(key);
        ASSERT_EQ(f.steps.size(), run.steps.size());
        int skipped = 0;
        for (size_t i = 0; i < run.steps.size(); ++i) {
            EXPECT_EQ(f.steps[i].loss_scale, run.steps[i].loss_scale) << "step " << i + 1;
            EXPECT_EQ(f.steps[i].skipped, run.steps[i].skipped) << "step " << i + 1;
            skipped += f.steps[i].skipped ? 1 : 0;
        }
        EXPECT_GT(skipped, 0) << "2^30 overflows fp16 at first";
        EXPECT_LE(relative(f.steps.back().loss, run.steps.back().loss), 0.05);
    }
}

// One forward and backward: each member's output and gradients are its own model's,
// to fp32 rounding.
TEST(FusedNetwork, EachMembersOutputAndGradientsAreItsOwnModels) {
    for (const std::string name : {"cnn", "mlp"}) {
        SCOPED_TRACE(name);
        config::ModelSpec spec;
        spec.name = name;
        spec.width = 8;
        spec.depth = 2;
        const data::InputShape shape;  // 1×28×28, ten classes
        std::vector<std::shared_ptr<models::Network>> members, alone;
        std::vector<at::Generator> gens;
        std::vector<at::Tensor> inputs;
        for (int g = 0; g < 3; ++g) {
            torch::manual_seed(10 + g);
            members.push_back(models::makeModel(spec, shape));
            torch::manual_seed(10 + g);
            alone.push_back(models::makeModel(spec, shape));
            gens.push_back(at::detail::createCPUGenerator(g));
            inputs.push_back(at::randn({16, 1, 28, 28}));
        }
        models::FusedNetwork fused(members, gens);
        const auto outputs = fused.forward(inputs);
        at::Tensor total;
        for (int g = 0; g < 3; ++g) {
            const auto l = outputs[static_cast<size_t>(g)].logsumexp(1).mean();
            total = total.defined() ? total + l : l;
        }
        total.backward();
        for (int g = 0; g < 3; ++g) {
            const auto out = alone[static_cast<size_t>(g)]->forward(inputs[static_cast<size_t>(g)]);
            EXPECT_LE((out - outputs[static_cast<size_t>(g)]).abs().max().item<double>(), 1e-5);
            out.logsumexp(1).mean().backward();
            const auto a = alone[static_cast<size_t>(g)]->parameters();
            const auto f = members[static_cast<size_t>(g)]->parameters();
            ASSERT_EQ(a.size(), f.size());
            for (size_t i = 0; i < a.size(); ++i) {
                ASSERT_TRUE(f[i].grad().defined()) << i;
                const double scale = a[i].grad().abs().max().item<double>();
                EXPECT_LE((a[i].grad() - f[i].grad()).abs().max().item<double>(), 2e-5 * scale)
                    << "parameter " << i << " of member " << g;
            }
        }
    }
}

// GPU: the fused step captured as CUDA graphs (one graph; with accumulation, the
// micro-step and the optimizer steps) trains as the fused step does eagerly.
TEST_F(FusedSeeds, AFusedStepCapturedAsGraphsTrainsAsTheEagerOne) {
    REQUIRE_CUDA();
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto spec = cudaCnnSpec();
    spec.eval_interval = 40;
    config::ArmSpec accum{"fp16-accum2", config::Precision::AmpFp16};
    accum.accumulation = 2;
    spec.arms = {{"fp32", config::Precision::Fp32}, accum};
    const Recorded eager = train(spec, config::Switch::On, "eager.db");
    for (auto& arm : spec.arms) {
        arm.cuda_graph = true;
    }
    const Recorded graphs = train(spec, config::Switch::On, "graphs.db");
    EXPECT_TRUE(graphs.said({"fp32", 1}, "fused training step captured as a CUDA graph"));
    EXPECT_TRUE(graphs.said({"fp16-accum2", 3}, "fused micro-step and optimizer steps captured"));
    for (const auto& [key, run] : eager.runs) {
        SCOPED_TRACE(key.first + " seed " + std::to_string(key.second));
        const auto& g = graphs.runs.at(key);
        EXPECT_EQ(g.status, run::RunStatus::Finished);
        ASSERT_EQ(g.steps.size(), run.steps.size());
        for (size_t i = 0; i < run.steps.size() && i < 10; ++i) {
            EXPECT_LE(relative(g.steps[i].loss, run.steps[i].loss), 1e-3) << "step " << i + 1;
            EXPECT_EQ(g.steps[i].loss_scale, run.steps[i].loss_scale) << "step " << i + 1;
        }
        ASSERT_EQ(g.evals.size(), run.evals.size());
        std::printf("fused graph %s seed %d: final loss %.4f, eager %.4f\n", key.first.c_str(),
                    static_cast<int>(key.second), g.steps.back().loss, run.steps.back().loss);
    }
}
