// Your own model: a TorchScript module from a file, its task head, and the check
// before training. Modules are built here with Module::define and saved, as
// torch.jit.script(model).save(...) would in Python.
#include <gtest/gtest.h>

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>

#include <fstream>

#include "FileDataFiles.h"
#include "ScriptedModules.h"
#include "core/autocast/AutocastGuard.h"
#include "core/models/ScriptedModel.h"
#include "core/store/Database.h"
#include "core/train/SetupCheck.h"
#include "core/train/Trainer.h"
#include "core/train/private/TaskHead.h"
#include "core/util/OutputFile.h"

using namespace ampbench;
using data::test_files::TempDir;
using test_modules::mlp;

namespace {

struct Collect : run::TrainObserver {
    std::vector<run::StepRecord> steps;
    std::vector<run::EvalRecord> evals;
    std::vector<run::EventRecord> events;
    run::RunOutcome outcome;
    void onStart(const run::RunInfo&) override {}
    void onStep(const run::StepRecord& s) override { steps.push_back(s); }
    void onEval(const run::EvalRecord& e) override { evals.push_back(e); }
    void onEvent(const run::EventRecord& e) override { events.push_back(e); }
    void onFinish(const run::RunOutcome& o) override { outcome = o; }
};

/// A model file trained on generated 1×8×8 images with 10 classes.
config::ExperimentSpec scriptedSpec(const std::string& file) {
    config::ExperimentSpec s;
    s.name = "scripted";
    s.model.name = "torchscript";
    s.model.file = file;
    s.data.name = "synthetic-images";
    s.data.channels = 1;
    s.data.height = s.data.width = 8;
    s.data.prefetch = 2;
    s.micro_batch = 32;
    s.micro_steps = 12;
    s.eval_interval = 6;
    s.eval_batches = 1;
    s.warmup_steps = 0;
    s.cpu_threads = 1;
    s.optimizer.lr = 0.05;
    s.arms = {{"fp32", config::Precision::Fp32}, {"bf16", config::Precision::AmpBf16}};
    return s;
}

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST(Scripted, TrainsEvaluatesAndStartsEveryRunFromTheFilesWeights) {
    TempDir dir;
    const std::string file = dir.file("net.pt");
    mlp(64, 32, 10).save(file);
    auto a = models::loadScripted(file, c10::Device(c10::kCPU));
    auto b = models::loadScripted(file, c10::Device(c10::kCPU));
    ASSERT_EQ(a->parameters().size(), 4u);
    for (size_t i = 0; i < a->parameters().size(); ++i) {
        EXPECT_TRUE(a->parameters()[i].equal(b->parameters()[i])) << "parameter " << i;
        EXPECT_NE(a->parameters()[i].data_ptr(), b->parameters()[i].data_ptr())
            << "each run trains its own copy";
    }
    const auto spec = scriptedSpec(file);
    for (int arm = 0; arm < 2; ++arm) {
        Collect c;
        run::CancelToken cancel;
        auto out = train::trainRun(spec, arm, 1, c, cancel);
        ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
        ASSERT_EQ(c.steps.size(), 12u);
        EXPECT_TRUE(std::isfinite(c.steps.back().loss));
        ASSERT_EQ(c.evals.size(), 2u);
        EXPECT_TRUE(std::isfinite(c.evals.back().val_accuracy));
        bool named = false;
        for (const auto& e : c.events) {
            named = named || mentions(e.message, "model file " + file);
        }
        EXPECT_TRUE(named) << "each run records which file (and which version) it trained";
    }
    // The file's module is untouched by training: a new copy has the first weights.
    auto again = models::loadScripted(file, c10::Device(c10::kCPU));
    EXPECT_TRUE(again->parameters()[0].equal(a->parameters()[0]));
}

TEST(Scripted, AutocastReachesTheModulesOpsAndGradientsStayFp32) {
    TempDir dir;
    const std::string file = dir.file("net.pt");
    mlp(64, 32, 10).save(file);
    auto net = models::loadScripted(file, c10::Device(c10::kCPU));
    at::Tensor out;
    {
        autocast::AutocastGuard guard(c10::DeviceType::CPU, at::kBFloat16, true);
        out = net->forward(torch::randn({4, 1, 8, 8}));
    }
    EXPECT_EQ(out.scalar_type(), at::kBFloat16) << "the matmuls ran under bf16 autocast";
    out.to(at::kFloat).sum().backward();
    for (const auto& p : net->parameters()) {
        ASSERT_TRUE(p.grad().defined());
        EXPECT_EQ(p.grad().scalar_type(), at::kFloat) << "master weights stay fp32";
    }
}

TEST(Scripted, EvaluationSwitchesTheModuleToEvalMode) {
    TempDir dir;
    const std::string file = dir.file("net.pt");
    mlp(64, 256, 10).save(file);
    auto net = models::loadScripted(file, c10::Device(c10::kCPU));
    auto x = torch::randn({8, 1, 8, 8});
    torch::NoGradGuard no_grad;
    net->eval();
    EXPECT_TRUE(net->forward(x).equal(net->forward(x))) << "no dropout in eval mode";
    net->train();
    EXPECT_FALSE(net->forward(x).equal(net->forward(x))) << "dropout in train mode";
}

TEST(Scripted, ATracedModuleWithFrozenDropoutIsNamed) {
    TempDir dir;
    const std::string traced = dir.file("traced.pt");
    const std::string scripted = dir.file("scripted.pt");
    mlp(64, 32, 10, /*traced=*/true).save(traced);
    mlp(64, 32, 10, /*traced=*/false).save(scripted);
    EXPECT_TRUE(models::inspectScripted(scripted).frozen.empty());
    const auto info = models::inspectScripted(traced);
    ASSERT_EQ(info.frozen.size(), 1u);
    EXPECT_EQ(info.frozen[0], "drop (Dropout)");
    const std::string advice = models::frozenAdvice(info);
    EXPECT_TRUE(mentions(advice, traced) && mentions(advice, "torch.jit.script")) << advice;
    const auto report = train::checkSetup(scriptedSpec(traced));
    EXPECT_TRUE(report.ok()) << report.problemText();
    ASSERT_EQ(report.warnings.size(), 1u);
    EXPECT_TRUE(mentions(report.warnings[0], "froze drop (Dropout)")) << report.warnings[0];
}

TEST(Scripted, AFileThatIsNoModuleIsNamedAndNothingTrains) {
    TempDir dir;
    const std::string bad = dir.file("garbage.pt");
    std::ofstream(bad) << "not a zip archive at all";
    const auto report = train::checkSetup(scriptedSpec(bad));
    ASSERT_FALSE(report.ok());
    EXPECT_TRUE(report.unreadable());
    EXPECT_EQ(report.problems[0].field, "model.file");
    EXPECT_TRUE(mentions(report.problems[0].message, bad)) << report.problems[0].message;
    const auto missing = train::checkSetup(scriptedSpec(dir.file("absent.pt")));
    ASSERT_FALSE(missing.ok());
    EXPECT_TRUE(mentions(missing.problems[0].message, "absent.pt: cannot open"))
        << missing.problems[0].message;
}

TEST(Scripted, TheCheckNamesShapesThatDoNotFit) {
    TempDir dir;
    struct Case {
        const char* name;
        torch::jit::Module module;
        config::Task task;
        const char* expect;
    };
    std::vector<Case> cases = {
        {"too_few_classes.pt", mlp(64, 16, 5), config::Task::Auto, "labels go up to 9"},
        {"wrong_input.pt", mlp(100, 16, 10), config::Task::Auto,
         "cannot take a batch of inputs [32, 1, 8, 8] float32: mat1 and mat2 shapes"},
        {"tuple.pt", mlp(64, 16, 10, false, ", x"), config::Task::Auto,
         "needs it to return one tensor"},
        {"regression.pt", mlp(64, 16, 10), config::Task::Regression,
         "regression expects outputs shaped like the targets [32]"},
        {"tokens.pt", mlp(64, 16, 10), config::Task::Tokens,
         "token prediction expects logits [N, T, V]"},
    };
    for (auto& c : cases) {
        const std::string file = dir.file(c.name);
        c.module.save(file);
        auto spec = scriptedSpec(file);
        spec.model.task = c.task;
        const auto report = train::checkSetup(spec);
        ASSERT_FALSE(report.ok()) << c.name;
        EXPECT_FALSE(report.unreadable()) << c.name;
        const auto& msg = report.problems[0].message;
        EXPECT_TRUE(mentions(msg, c.expect)) << c.name << ": " << msg;
        EXPECT_TRUE(mentions(msg, file)) << c.name << ": " << msg;
    }
}

TEST(Scripted, TheCheckReportsTheModelAndTheData) {
    TempDir dir;
    const std::string file = dir.file("net.pt");
    mlp(64, 32, 10).save(file);
    const auto report = train::checkSetup(scriptedSpec(file));
    ASSERT_TRUE(report.ok()) << report.problemText();
    EXPECT_EQ(report.parameters, 64 * 32 + 32 + 32 * 10 + 10);
    EXPECT_EQ(report.task, "classification");
    EXPECT_EQ(report.output, (std::vector<int64_t>{32, 10}));
    ASSERT_EQ(report.module_tree.size(), 2u);
    EXPECT_TRUE(mentions(report.module_tree[1], "drop  Dropout")) << report.module_tree[1];
    EXPECT_TRUE(mentions(report.summary(), "net.pt")) << report.summary();
}

TEST(Scripted, SavesTheTrainedModuleAtTheEnd) {
    TempDir dir;
    const std::string file = dir.file("net.pt");
    mlp(64, 32, 10).save(file);
    auto spec = scriptedSpec(file);
    train::TrainOptions options;
    options.save_model_to = dir.file("trained.pt");
    Collect c;
    run::CancelToken cancel;
    auto out = train::trainRun(spec, 0, 1, c, cancel, options);
    ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
    auto trained = torch::jit::load(options.save_model_to);  // wherever it trained: on the CPU
    auto initial = torch::jit::load(file);
    EXPECT_TRUE((*trained.parameters().begin()).device().is_cpu()) << "loads on any machine";
    const auto w_trained = *trained.named_parameters().begin();
    const auto w_initial = *initial.named_parameters().begin();
    EXPECT_EQ(w_trained.name, w_initial.name);
    EXPECT_FALSE(w_trained.value.equal(w_initial.value))
        << "the saved weights are the trained ones";
}

// The engine writes models through the same writer as every other output, so a
// model saved under the name of a database this process has open is refused and the
// database keeps every byte.
TEST(Scripted, ASavedModelNeverReplacesADatabaseThisProcessHasOpen) {
    TempDir dir;
    const std::string file = dir.file("net.pt");
    mlp(64, 32, 10).save(file);
    auto net = models::loadScripted(file, c10::Device(c10::kCPU));
    const std::string db = dir.file("runs.db");
    auto bytes = [&] {
        std::ifstream in(db, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    {
        auto open = store::Database::open(db);
        const std::string before = bytes();
        ASSERT_FALSE(before.empty());
        try {
            models::saveScripted(*net, db);
            FAIL() << "the open database was replaced by the model";
        } catch (const util::OutputError& e) {
            EXPECT_TRUE(mentions(e.what(), "the database " + db)) << e.what();
        }
        EXPECT_EQ(bytes(), before);
    }
    models::saveScripted(*net, db);  // closed, it is an ordinary file name again
    EXPECT_NO_THROW(torch::jit::load(db));
}

TEST(TaskHead, RegressionUsesMeanSquaredErrorAndHasNoAccuracy) {
    train::TaskHead head(config::Task::Regression);
    auto out = torch::tensor({{1.0f}, {3.0f}});
    auto y = torch::tensor({0.0f, 1.0f});
    EXPECT_NEAR(head.loss(out, y).item<double>(), (1.0 + 4.0) / 2.0, 1e-6);
    train::TaskHead::Sums sums;
    head.accumulate(out, y, sums);
    EXPECT_EQ(sums.count, 2);
    EXPECT_NEAR(sums.loss.item<double>(), 5.0, 1e-6);
    EXPECT_FALSE(sums.correct.defined());
    EXPECT_FALSE(head.hasAccuracy());
}

TEST(TaskHead, TokensCountEveryPosition) {
    train::TaskHead head(config::Task::Tokens);
    auto logits = torch::zeros({2, 3, 5});
    logits.index_put_({0, 0, 4}, 10.0);
    auto y = torch::full({2, 3}, 4, at::kLong);
    train::TaskHead::Sums sums;
    head.accumulate(logits, y, sums);
    EXPECT_EQ(sums.count, 6);
    EXPECT_EQ(sums.correct.item<int64_t>(), 1);
    data::InputShape shape;
    shape.classes = 8;
    EXPECT_TRUE(mentions(head.mismatch(logits, y, shape), "token ids go up to 7"));
}

TEST(TaskHead, LabelSmoothingRaisesTheLossOfConfidentLogits) {
    auto logits = torch::tensor({{8.0f, 0.0f, 0.0f}, {0.0f, 8.0f, 0.0f}});
    auto y = torch::tensor({0, 1}, at::kLong);
    const double plain =
        train::TaskHead(config::Task::Classification).loss(logits, y).item<double>();
    const double smoothed =
        train::TaskHead(config::Task::Classification, 0.2).loss(logits, y).item<double>();
    EXPECT_GT(smoothed, plain + 0.5);
}
