// `ampbench-cli advise` end to end on the CPU: the built-in CNN on Fashion-MNIST, a model
// file on its own data and a training script, each advice read back from the database; a
// budget too small, a model that fits nothing, a script that does not take the
// candidates' batch, and Ctrl-C, each with its exit code and what it kept.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../core/FileDataFiles.h"
#include "../core/ScriptedModules.h"
#include "Hold.h"
#include "Shell.h"
#include "core/analysis/Advice.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/config/PlannedArm.h"
#include "core/config/SpecJson.h"
#include "core/config/Validation.h"
#include "core/store/BatchSearchStore.h"
#include "core/store/Database.h"

using namespace ampbench;
using data::test_files::npy;
using data::test_files::TempDir;
using data::test_files::writeNpz;

namespace {

const std::string kCli = AMPBENCH_CLI_PATH;
const std::string kScripts = AMPBENCH_TEST_SCRIPTS;
const std::string kPython = AMPBENCH_TEST_PYTHON;

/// A CNN small enough for a step of a few milliseconds on one thread, batches of 8.
const std::string kSmallCnn =
    " advise --model cnn --width 8 --depth 1 --micro-batch 8 --eval-batches 1 --warmup 2 "
    "--threads 1 --timed-steps 10 --check 1 -q";

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string readAll(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

/// The advice of the database's one experiment, as the report and the GUI read it.
analysis::Advice readBack(const store::Database& db) {
    const auto experiments = db.experiments();
    EXPECT_EQ(experiments.size(), 1u);
    const auto data = analysis::loadExperiment(db, experiments.at(0).id);
    EXPECT_TRUE(data && analysis::isAdvice(*data));
    return analysis::readAdvice(*data, analysis::analyzeExperiment(*data));
}

const analysis::AdviceRow* row(const analysis::Advice& a, const std::string& arm) {
    for (const auto& r : a.rows) {
        if (r.f.arm == arm) {
            return &r;
        }
    }
    return nullptr;
}

}  // namespace

TEST(AdviseCli, TheCnnGetsARankedAdviceItsPassesOrdinaryRunsOfOneExperiment) {
    TempDir dir;
    const std::string db = dir.file("a.db"), spec = dir.file("rec.json");
    const auto r =
        test::shell(kCli + " --db " + db + kSmallCnn + " --max-batch 16 --save-spec " + spec);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(mentions(r.out, "recommendation: ")) << r.out;
    auto store = store::Database::open(db, store::Database::Mode::ReadOnly);
    const analysis::Advice a = readBack(*store);
    EXPECT_EQ(a.baseline, "fp32");
    EXPECT_EQ(a.user_batch, 8);
    for (const char* measured : {"fp32", "fp32-b16", "amp-bf16", "amp-bf16-b16"}) {
        const auto* m = row(a, measured);
        ASSERT_NE(m, nullptr) << measured;
        EXPECT_TRUE(m->f.measured) << measured;
        EXPECT_GT(m->f.samples_per_s, 0) << measured;
        EXPECT_EQ(m->f.max_batch, 16) << measured;  // the search's upper bound fits
    }
    // The device's own words for what this LibTorch cannot train on a CPU.
    ASSERT_NE(row(a, "amp-fp16"), nullptr);
    EXPECT_EQ(row(a, "amp-fp16")->status, analysis::RowStatus::Unsupported);
    EXPECT_TRUE(mentions(row(a, "amp-fp16")->f.unsupported, "not supported on cpu"));
    EXPECT_TRUE(mentions(row(a, "fp8")->f.unsupported, "CUDA")) << row(a, "fp8")->f.unsupported;
    EXPECT_TRUE(a.quality_checked);
    ASSERT_NE(a.recommendation(), nullptr);
    // Every pass and check is an ordinary run with its steps; passes say what they are.
    int passes = 0, checks = 0;
    for (const auto& run : store->runs(store->experiments()[0].id)) {
        if (run.status != run::RunStatus::Finished) {
            continue;
        }
        EXPECT_GT(store->stepCount(run.id), 0) << run.arm;
        (config::plannedArmFromJson(run.spec_json).timing_pass ? passes : checks)++;
    }
    EXPECT_EQ(passes, 4);
    EXPECT_EQ(checks, 4);  // fp32 and one candidate, two seeds each
    // The recommended setting is a spec `run --config` takes.
    std::vector<config::FieldError> errors;
    const auto rec = config::specFromJsonText(readAll(spec), errors);
    EXPECT_TRUE(errors.empty());
    EXPECT_TRUE(config::validate(rec).empty());
    EXPECT_EQ(rec.arms.at(0).name, "fp32");
    // `show -e` prints the same advice again from the database.
    const auto shown =
        test::shell(kCli + " --db " + db + " show -e " + std::to_string(a.experiment_id));
    EXPECT_EQ(shown.code, 0) << shown.out;
    EXPECT_TRUE(mentions(shown.out, analysis::recommendationText(a))) << shown.out;
}

TEST(AdviseCli, AModelFileOnItsOwnDataIsAdvisedWithinItsBudget) {
    TempDir dir;
    const std::string model = dir.file("net.pt"), data = dir.file("train.npz");
    const std::string db = dir.file("a.db");
    test_modules::mlp(64, 16, 10).save(model);
    const int64_t n = 512;
    auto y = at::arange(n, at::kLong).remainder(10);
    auto x = (y.to(at::kFloat).view({n, 1, 1, 1}) * 25 + at::rand({n, 1, 8, 8}) * 20).to(at::kByte);
    writeNpz(data, {{"x", npy(x)}, {"y", npy(y)}}, /*compressed=*/true);
    const auto r =
        test::shell(kCli + " --db " + db + " advise --model " + model + " --data " + data +
                    " --micro-batch 8 --max-batch 32 --eval-batches 1 --warmup 2 "
                    "--threads 1 --timed-steps 10 --check 1 -q --budget 5m");
    ASSERT_EQ(r.code, 0) << r.out;
    auto store = store::Database::open(db, store::Database::Mode::ReadOnly);
    const analysis::Advice a = readBack(*store);
    ASSERT_NE(row(a, "amp-bf16"), nullptr);
    EXPECT_TRUE(row(a, "amp-bf16")->f.measured);
    // fp8 is not for a model file at all: named with the reason, never trained.
    ASSERT_EQ(a.not_for_model.size(), 1u);
    EXPECT_TRUE(mentions(a.not_for_model[0], "fp8")) << a.not_for_model[0];
    EXPECT_EQ(row(a, "fp8"), nullptr);
    EXPECT_TRUE(mentions(r.out, "not for this model, fp8")) << r.out;
}

TEST(AdviseCli, ABudgetTooSmallForOneCandidateSaysWhatItNeedsAndRecordsNothing) {
    TempDir dir;
    const std::string db = dir.file("a.db");
    const auto r = test::shell(kCli + " --db " + db + kSmallCnn + " --budget 0.001s");
    EXPECT_EQ(r.code, 12) << r.out;
    EXPECT_TRUE(mentions(r.out, "too small for even one candidate")) << r.out;
    auto store = store::Database::open(db, store::Database::Mode::ReadOnly);
    EXPECT_TRUE(store->experiments().empty());
    const auto bad = test::shell(kCli + " --db " + db + kSmallCnn + " --budget soon");
    EXPECT_EQ(bad.code, 2) << bad.out;
}

TEST(AdviseCli, AModelThatFitsNoBatchIsToldSoAndItsSearchesAreKept) {
    TempDir dir;
    const std::string db = dir.file("a.db");
    const auto r = test::shell(kCli + " --db " + db + kSmallCnn + " --memory 1K");
    EXPECT_EQ(r.code, 10) << r.out;
    EXPECT_TRUE(mentions(r.out, "nothing fits")) << r.out;
    auto store = store::Database::open(db, store::Database::Mode::ReadOnly);
    ASSERT_EQ(store->experiments().size(), 1u);
    EXPECT_FALSE(store::BatchSearchStore(*store).searches(store->experiments()[0].id).empty());
}

TEST(AdviseCli, CtrlCKeepsWhatWasMeasuredAndShowsIt) {
    TempDir dir;
    const std::string db = dir.file("a.db"), out = dir.file("out.txt");
    const pid_t pid = fork();
    if (pid == 0) {
        freopen(out.c_str(), "w", stdout);
        freopen(dir.file("err.txt").c_str(), "w", stderr);
        execl(kCli.c_str(), kCli.c_str(), "--db", db.c_str(), "advise", "--model", "cnn", "--width",
              "8", "--depth", "1", "--micro-batch", "8", "--max-batch", "64", "--eval-batches", "1",
              "--warmup", "2", "--threads", "1", "--timed-steps", "10", "--check", "1", "-q",
              static_cast<char*>(nullptr));
        _exit(127);
    }
    // The quality check has begun: every pass is measured, a check trains.
    const auto checking = [&] {
        try {
            auto s = store::Database::open(db, store::Database::Mode::ReadOnly);
            for (const auto& run : s->runs()) {
                if (run.status == run::RunStatus::Running &&
                    !config::plannedArmFromJson(run.spec_json).timing_pass) {
                    return true;
                }
            }
        } catch (const std::exception&) {
        }
        return false;
    };
    ASSERT_TRUE(test::readyOrEnded(pid, checking));
    {
        test::Hold hold(pid);  // the check cannot end between this and the signal
        ASSERT_TRUE(hold.holds()) << readAll(dir.file("err.txt"));
        kill(pid, SIGINT);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 130) << readAll(dir.file("err.txt"));
    const std::string printed = readAll(out);
    EXPECT_TRUE(mentions(printed, "recommendation: ")) << printed;
    auto store = store::Database::open(db, store::Database::Mode::ReadOnly);
    int passes = 0;
    for (const auto& run : store->runs()) {
        EXPECT_NE(run.status, run::RunStatus::Queued) << run.arm;
        EXPECT_NE(run.status, run::RunStatus::Running) << run.arm;
        if (config::plannedArmFromJson(run.spec_json).timing_pass &&
            run.status == run::RunStatus::Finished) {
            ++passes;
            EXPECT_GT(store->stepCount(run.id), 0);
        }
    }
    EXPECT_EQ(passes, 4);  // fp32, fp32-b64, amp-bf16, amp-bf16-b64: what was measured stays
    const analysis::Advice a = readBack(*store);
    EXPECT_EQ(row(a, "amp-bf16")->f.measured, true);
}

TEST(AdviseCli, AScriptTrainsEachCandidateWithItsSettings) {
    TempDir dir;
    const std::string db = dir.file("a.db");
    const std::string script = kCli + " --db " + db + " advise --script " + kScripts +
                               "/advice_steps.py --python " + kPython +
                               " --micro-batch 8 --timed-steps 10 --check 1 -q";
    const auto r = test::shell(script);
    ASSERT_EQ(r.code, 0) << r.out;
    auto store = store::Database::open(db, store::Database::Mode::ReadOnly);
    const analysis::Advice a = readBack(*store);
    for (const char* arm : {"fp32", "amp-fp16", "amp-bf16"}) {
        ASSERT_NE(row(a, arm), nullptr) << arm;
        EXPECT_TRUE(row(a, arm)->f.measured) << arm;
        EXPECT_EQ(row(a, arm)->f.max_batch, 0) << arm;  // a script's memory is its own
    }
    EXPECT_TRUE(mentions(r.out, "not for this model, fp8")) << r.out;
    EXPECT_TRUE(a.quality_checked);
    ASSERT_NE(a.recommendation(), nullptr);
}

TEST(AdviseCli, AScriptThatIgnoresTheCandidatesBatchIsToldSo) {
    TempDir dir;
    const std::string db = dir.file("a.db");
    const auto r = test::shell(kCli + " --db " + db + " advise --script " + kScripts +
                               "/advice_steps.py --script-arg=--batch --script-arg=4 --python " +
                               kPython + " --micro-batch 8 --timed-steps 10 -q");
    EXPECT_EQ(r.code, 13) << r.out;
    EXPECT_TRUE(mentions(r.out, "trained 4 samples an optimizer step, not the candidate's 8"))
        << r.out;
    EXPECT_TRUE(mentions(r.out, "AMPBENCH_MICRO_BATCH")) << r.out;
    auto store = store::Database::open(db, store::Database::Mode::ReadOnly);
    const analysis::Advice a = readBack(*store);  // the passes are kept, ruled out
    ASSERT_NE(row(a, "fp32"), nullptr);
    EXPECT_EQ(row(a, "fp32")->status, analysis::RowStatus::RuledOut);
}
