// Your own model end to end: a scripted module and data files made here, trained
// by the real CLI, the database read back; each bad input gets its named error
// and leaves no database behind.
#include <gtest/gtest.h>

#include <filesystem>

#include "../core/FileDataFiles.h"
#include "../core/ScriptedModules.h"
#include "Shell.h"
#include "core/store/Database.h"

using namespace ampbench;
using data::test_files::npy;
using data::test_files::TempDir;
using data::test_files::writeFile;
using data::test_files::writeNpz;

namespace {

const std::string kCli = AMPBENCH_CLI_PATH;

/// 256 grey 8×8 images whose class (0..9) is their brightness decile: learnable.
void writeImages(const std::string& path, int64_t n = 256) {
    auto y = at::arange(n, at::kLong).remainder(10);
    auto x = (y.to(at::kFloat).view({n, 1, 1, 1}) * 25 + at::rand({n, 1, 8, 8}) * 20).to(at::kByte);
    writeNpz(path, {{"x", npy(x)}, {"y", npy(y)}}, /*compressed=*/true);
}

std::string cliRun(const std::string& db, const std::string& args) {
    return kCli + " --db " + db +
           " run --micro-steps 24 --micro-batch 16 --seeds 1 "
           "--eval-interval 12 --eval-batches 1 --warmup 0 --threads 1 -q " +
           args;
}

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST(OwnModelCli, AModelFileOnAnNpzTrainsEveryArmAndIsRecorded) {
    TempDir dir;
    const std::string model = dir.file("net.pt"), data = dir.file("train.npz");
    const std::string db = dir.file("runs.db");
    const std::string out = std::filesystem::path(dir.file("weights/x")).parent_path().string();
    test_modules::mlp(64, 32, 10).save(model);
    writeImages(data);
    const auto r =
        test::shell(cliRun(db, "--model " + model + " --data " + data +
                                   " --arm fp32=fp32 --arm bf16=amp-bf16 --save-weights " + out));
    ASSERT_EQ(r.code, 0) << r.out;
    auto store = store::Database::open(db, store::Database::Mode::ReadOnly);
    const auto experiments = store->experiments();
    ASSERT_EQ(experiments.size(), 1u);
    const auto runs = store->runs(experiments[0].id);
    ASSERT_EQ(runs.size(), 2u);
    for (const auto& row : runs) {
        EXPECT_EQ(row.status, run::RunStatus::Finished) << row.error;
        EXPECT_EQ(store->steps(row.id).size(), 24u);
        const auto evals = store->evals(row.id);
        ASSERT_EQ(evals.size(), 2u);
        EXPECT_GT(evals.back().val_accuracy, 0.0);
        bool named = false, saved = false;
        for (const auto& e : store->events(row.id)) {
            named = named || mentions(e.message, "model file " + model);
            saved = saved || mentions(e.message, "trained model saved to " + out);
        }
        EXPECT_TRUE(named && saved) << "run " << row.id;
    }
    EXPECT_TRUE(mentions(experiments[0].spec_json, "\"torchscript\""));
    EXPECT_TRUE(mentions(experiments[0].spec_json, data));
    int files = 0;
    for (const auto& f : std::filesystem::directory_iterator(out)) {
        files += f.path().extension() == ".pt";
    }
    EXPECT_EQ(files, 2) << "one trained module per run";
}

// A saved model named like the database (the database given a model's name) used to
// replace it with a zip: the run must keep the database and say why nothing was saved.
TEST(OwnModelCli, ASavedModelNeverReplacesTheDatabase) {
    TempDir dir;
    const std::string model = dir.file("net.pt"), data = dir.file("train.npz");
    std::filesystem::create_directories(dir.file("out"));
    const std::string db = dir.file("out/w-run1-fp32-seed1.pt");
    test_modules::mlp(64, 32, 10).save(model);
    writeImages(data, 64);
    const auto r =
        test::shell(cliRun(db, "--model " + model + " --data " + data +
                                   " --name w --arm fp32=fp32 --save-weights " + dir.file("out")));
    ASSERT_EQ(r.code, 0) << r.out;
    auto store = store::Database::open(db, store::Database::Mode::ReadOnly);
    store->requireIntact();
    const auto runs = store->runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(store->steps(runs[0].id).size(), 24u);
    bool warned = false;
    for (const auto& e : store->events(runs[0].id)) {
        warned = warned ||
                 (mentions(e.message, "could not be saved") && mentions(e.message, "the database"));
    }
    EXPECT_TRUE(warned) << "no event says why the model was not saved";
}

TEST(OwnModelCli, ACsvTableTrainsABuiltInMlpForRegression) {
    TempDir dir;
    const std::string csv = dir.file("table.csv"), db = dir.file("runs.db");
    std::string text = "a,b,target\n";
    for (int i = 0; i < 120; ++i) {
        const double a = i % 7, b = i % 5;
        text +=
            std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(0.5 * a - b) + "\n";
    }
    writeFile(csv, text);
    const auto r = test::shell(cliRun(db, "--model mlp --data " + csv + " --arm fp32=fp32"));
    ASSERT_EQ(r.code, 0) << r.out;
    auto store = store::Database::open(db, store::Database::Mode::ReadOnly);
    const auto runs = store->runs(store->experiments()[0].id);
    ASSERT_EQ(runs.size(), 1u);
    const auto evals = store->evals(runs[0].id);
    ASSERT_FALSE(evals.empty());
    EXPECT_TRUE(std::isfinite(evals.back().val_loss));
    EXPECT_TRUE(std::isnan(evals.back().val_accuracy)) << "regression has no accuracy";
}

TEST(OwnModelCli, EachBadInputIsNamedAndNothingIsWritten) {
    TempDir dir;
    const std::string good_model = dir.file("net.pt"), good_data = dir.file("train.npz");
    test_modules::mlp(64, 32, 10).save(good_model);
    writeImages(good_data);
    const std::string narrow = dir.file("narrow.pt");
    test_modules::mlp(64, 32, 4).save(narrow);
    const std::string garbage = dir.file("garbage.pt");
    writeFile(garbage, "this is no TorchScript archive");
    const std::string truncated = dir.file("truncated.npz");
    writeFile(truncated, data::test_files::readFile(good_data).substr(0, 300));
    const std::string no_y = dir.file("no_y.npz");
    writeNpz(no_y, {{"x", npy(at::zeros({8, 1, 8, 8}, at::kByte))}}, false);
    const std::string empty = dir.file("empty_folder");
    std::filesystem::create_directories(empty);
    struct Case {
        std::string args;
        int code;
        std::vector<std::string> words;
    };
    const std::vector<Case> cases = {
        {"--model " + narrow + " --data " + good_data, 2, {narrow, "labels go up to 9"}},
        {"--model " + garbage + " --data " + good_data, 3, {garbage, "TorchScript"}},
        {"--model " + good_model + " --data " + truncated, 3, {truncated}},
        {"--model " + good_model + " --data " + no_y, 3, {no_y, "'y'"}},
        {"--model " + good_model + " --data " + empty, 3, {empty}},
        {"--model " + dir.file("absent.pt") + " --data " + good_data,
         3,
         {"absent.pt: cannot open"}},
        {"--model " + good_model + " --data " + good_data + " --task regression",
         2,
         {"regression expects outputs shaped like the targets"}},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        const std::string db = dir.file("bad" + std::to_string(i) + ".db");
        const auto r = test::shell(cliRun(db, cases[i].args + " --arm fp32=fp32"));
        EXPECT_EQ(r.code, cases[i].code) << cases[i].args << "\n" << r.out;
        for (const auto& w : cases[i].words) {
            EXPECT_TRUE(mentions(r.out, w)) << "'" << w << "' not in:\n" << r.out;
        }
        EXPECT_FALSE(std::filesystem::exists(db)) << cases[i].args << ": a database was created";
    }
}
