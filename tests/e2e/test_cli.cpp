// End to end: ampbench-cli on real Fashion-MNIST, then the database read back.
#include <gtest/gtest.h>

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "Shell.h"
#include "core/config/DataPaths.h"
#include "core/store/Database.h"

namespace fs = std::filesystem;
using ampbench::run::RunStatus;
using ampbench::store::Database;
namespace test = ampbench::test;

namespace {

test::ShellResult cli(const std::string& args) {
    return test::shell(std::string(AMPBENCH_CLI_PATH) + " " + args);
}

bool haveData() {
    return ampbench::config::haveFashionMnist();
}

class CliTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ampbench-e2e-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "runs.db").string();
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
    std::string db_;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

TEST_F(CliTest, DefaultComparisonShortRunFinishesThreeArms) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    // One thread: two LibTorch threads on two shared cores wait on each other whenever
    // another process takes one (7 s alone, 95 s beside another test run; one thread: 12 s).
    auto r = cli("--db " + db_ +
                 " run --steps 96 --eval-interval 48 --eval-batches 8 --warmup 2 --threads 1");
    ASSERT_EQ(r.code, 0) << r.out;
    for (const char* arm : {"fp32", "amp", "amp-accum4", "speed-up", "total time"}) {
        EXPECT_NE(r.out.find(arm), std::string::npos) << arm << " missing in:\n" << r.out;
    }
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    auto exps = db->experiments();
    ASSERT_EQ(exps.size(), 1u);
    auto runs = db->runs(exps[0].id);
    ASSERT_EQ(runs.size(), 3u);
    for (const auto& run : runs) {
        EXPECT_EQ(run.status, RunStatus::Finished) << run.arm << ": " << run.error;
        int64_t expected_steps = run.arm == "amp-accum4" ? 24 : 96;
        EXPECT_EQ(db->stepCount(run.id), expected_steps) << run.arm;
        auto evals = db->evals(run.id);
        EXPECT_EQ(evals.size(), 2u) << run.arm;
        EXPECT_FALSE(run.env_json.empty());
        if (run.arm == "fp32") {
            ASSERT_FALSE(evals.empty());
            EXPECT_GT(evals.back().val_accuracy, 0.45) << "chance is 0.10";
        }
        auto steps = db->steps(run.id);
        EXPECT_EQ(steps.back().samples, 96 * 64) << "every arm sees the same samples";
    }

    // Read back through the CLI too.
    auto list = cli("--db " + db_ + " list");
    EXPECT_EQ(list.code, 0) << list.out;
    EXPECT_NE(list.out.find("finished"), std::string::npos);
    auto show = cli("--db " + db_ + " show " + std::to_string(runs[0].id));
    EXPECT_EQ(show.code, 0) << show.out;
    EXPECT_NE(show.out.find("median"), std::string::npos);
    auto csv = (dir_ / "runs.csv").string();
    auto json = (dir_ / "runs.json").string();
    auto ex = cli("--db " + db_ + " export -e " + std::to_string(exps[0].id) + " --csv " + csv +
                  " --json " + json);
    EXPECT_EQ(ex.code, 0) << ex.out;
    auto text = slurp(csv);
    EXPECT_GT(std::count(text.begin(), text.end(), '\n'), 96 * 11);
    EXPECT_NE(slurp(json).find("\"runs\""), std::string::npos);

    // The verdict, headless: after the run, in `show -e`, and as JSON.
    EXPECT_NE(r.out.find("verdicts against fp32:"), std::string::npos) << r.out;
    const std::string id = std::to_string(exps[0].id);
    auto shown = cli("--db " + db_ + " show -e " + id);
    EXPECT_EQ(shown.code, 0) << shown.out;
    EXPECT_NE(shown.out.find("verdicts against fp32:"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("  amp: "), std::string::npos) << shown.out;
    auto analysis = cli("--db " + db_ + " show -e " + id + " --json");
    EXPECT_EQ(analysis.code, 0) << analysis.out;
    for (const char* key : {"\"verdicts\"", "\"code\"", "\"time_to_target\"", "\"validation\"",
                            "\"spec\"", "\"environment\""}) {
        EXPECT_NE(analysis.out.find(key), std::string::npos) << key;
    }
    EXPECT_EQ(cli("--db " + db_ + " show " + std::to_string(runs[0].id) + " --json").code, 2)
        << "--json is for an experiment";
}

// An A/A arm (the baseline again on other seeds) is named as the noise it measures.
TEST_F(CliTest, AaCheckPresetNamesTheAaArm) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto r = cli("--db " + db_ +
                 " run --preset aa-check --steps 16 --micro-batch 8 --eval-batches 1 --seeds 1 2 "
                 "--arm fp32=fp32 --arm fp32-again=fp32,seed_offset=100");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("A/A check: this arm is fp32 again on other seeds"), std::string::npos)
        << r.out;
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    std::vector<uint64_t> seeds;
    for (const auto& run : db->runs(db->experiments().at(0).id)) {
        if (run.arm == "fp32-again") {
            seeds.push_back(run.seed);
        }
    }
    EXPECT_EQ(seeds, (std::vector<uint64_t>{101, 102}));
}

TEST_F(CliTest, UnknownPresetAndFlagExitTwo) {
    auto r = cli("--db " + db_ + " run --preset nope");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("nope"), std::string::npos) << r.out;
    auto f = cli("--db " + db_ + " run --frobnicate");
    EXPECT_EQ(f.code, 2) << f.out;
    EXPECT_NE(f.out.find("frobnicate"), std::string::npos) << f.out;
    EXPECT_FALSE(fs::exists(db_)) << "nothing is written for a bad command line";
}

TEST_F(CliTest, InvalidValueNamesTheFieldAndRunsNothing) {
    auto r = cli("--db " + db_ + " run --micro-batch 0");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("micro_batch = 0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("between 1 and"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(db_));
    auto a = cli("--db " + db_ + " run --arm x=fp64");
    EXPECT_EQ(a.code, 2) << a.out;
    EXPECT_NE(a.out.find("fp64"), std::string::npos) << a.out;
}

// The flags that set one spec field each come from one table: each sets its field,
// a value of the wrong type is refused naming the flag, and a number too large for
// its field is refused, never wrapped into range.
TEST_F(CliTest, EachSpecFlagSetsItsFieldAndABadValueNamesTheFlag) {
    auto r = cli("--db " + db_ +
                 " run --preset smoke --micro-steps 48 --epochs 0 --micro-batch 16 --lr 0.25 "
                 "--optimizer adamw --weight-decay 0.01 --task classification --width 24 "
                 "--depth 3 --device cpu --tolerance-margin 0.004 --deterministic "
                 "--fast-verdict --threads 1 --warmup 2 --eval-interval 12 --eval-batches 3 "
                 "--no-fuse-seeds --dry-run");
    ASSERT_EQ(r.code, 0) << r.out;
    const auto spec = nlohmann::json::parse(r.out.substr(r.out.find('{')));
    EXPECT_EQ(spec.at("micro_steps"), 48);
    EXPECT_EQ(spec.at("micro_batch"), 16);
    EXPECT_EQ(spec.at("optimizer").at("lr"), 0.25);
    EXPECT_EQ(spec.at("optimizer").at("kind"), "adamw");
    EXPECT_EQ(spec.at("optimizer").at("weight_decay"), 0.01);
    EXPECT_EQ(spec.at("model").at("task"), "classification");
    EXPECT_EQ(spec.at("model").at("width"), 24);
    EXPECT_EQ(spec.at("model").at("depth"), 3);
    EXPECT_EQ(spec.at("device"), "cpu");
    EXPECT_EQ(spec.at("tolerance_margin"), 0.004);
    EXPECT_EQ(spec.at("deterministic"), true);
    EXPECT_EQ(spec.at("fast_verdict"), true);
    EXPECT_EQ(spec.at("fuse_seeds"), false);
    EXPECT_EQ(spec.at("cpu_threads"), 1);
    EXPECT_EQ(spec.at("warmup_steps"), 2);
    EXPECT_EQ(spec.at("eval_interval"), 12);
    EXPECT_EQ(spec.at("eval_batches"), 3);

    for (const char* bad : {"--micro-steps 1.5", "--lr fast", "--device gpu", "--width ten"}) {
        auto b = cli("--db " + db_ + " run --preset smoke " + bad);
        EXPECT_EQ(b.code, 2) << bad << ": " << b.out;
        const std::string flag = std::string(bad).substr(0, std::string(bad).find(' '));
        EXPECT_NE(b.out.find(flag), std::string::npos) << b.out;
    }
    auto huge = cli("--db " + db_ + " run --preset smoke --micro-batch 4294967360");
    EXPECT_EQ(huge.code, 2) << huge.out;
    EXPECT_NE(huge.out.find("micro_batch = 2147483647"), std::string::npos) << huge.out;
    EXPECT_FALSE(fs::exists(db_));
}

TEST_F(CliTest, MissingDatasetSaysHowToInstallIt) {
    auto r = cli("--db " + db_ + " run --preset smoke --data " + (dir_ / "none").string());
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_NE(r.out.find("dataset-fashion-mnist"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--data"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(db_));
}

TEST_F(CliTest, ForeignDatabaseIsRefusedAndUntouched) {
    {
        std::ofstream out(db_);
        out << "these are my thesis notes, not a database\n";
    }
    auto before = slurp(db_);
    auto r = cli("--db " + db_ + " run --preset smoke");
    EXPECT_EQ(r.code, 4) << r.out;
    EXPECT_NE(r.out.find("not an SQLite database"), std::string::npos) << r.out;
    EXPECT_EQ(slurp(db_), before);
    auto l = cli("--db " + db_ + " list");
    EXPECT_EQ(l.code, 4) << l.out;
    EXPECT_EQ(slurp(db_), before);
}

TEST_F(CliTest, UnknownRunIsNotFound) {
    ASSERT_EQ(cli("--db " + db_ + " run --preset smoke --dry-run").code, 0);
    auto r = cli("--db " + db_ + " show 12345");
    EXPECT_NE(r.code, 0) << r.out;
}

// A killed process leaves a consistent database; the next open marks its run
// interrupted and keeps every committed row. Ctrl-C ends with `cancelled`.
TEST_F(CliTest, KilledRunIsInterruptedAndInterruptedRunIsCancelled) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    for (int sig : {SIGKILL, SIGINT}) {
        db_ = (dir_ / ("signal-" + std::to_string(sig) + ".db")).string();
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            freopen("/dev/null", "w", stderr);
            freopen("/dev/null", "w", stdout);
            execl(AMPBENCH_CLI_PATH, AMPBENCH_CLI_PATH, "--db", db_.c_str(), "run", "--preset",
                  "smoke", "--steps", "100000", "--arm", "fp32=fp32", "--seeds", "1",
                  static_cast<char*>(nullptr));
            _exit(127);
        }
        // Wait until rows are committed (the recorder commits at least every 250 ms).
        int64_t rows = 0;
        for (int i = 0; i < 600 && rows < 20; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            if (!fs::exists(db_)) {
                continue;
            }
            try {
                auto db = Database::open(db_, Database::Mode::ReadOnly);
                auto runs = db->runs();
                rows = runs.empty() ? 0 : db->stepCount(runs.back().id);
            } catch (const std::exception&) {
            }
        }
        ASSERT_GE(rows, 20);
        kill(pid, sig);
        int status = 0;
        waitpid(pid, &status, 0);
        if (sig == SIGINT) {
            ASSERT_TRUE(WIFEXITED(status));
            EXPECT_EQ(WEXITSTATUS(status), 130);
        }
        auto db = Database::open(db_);
        auto run = db->runs().back();
        if (sig == SIGKILL) {
            EXPECT_EQ(db->recoveredRuns(), 1);
            EXPECT_EQ(run.status, RunStatus::Interrupted);
        } else {
            EXPECT_EQ(run.status, RunStatus::Cancelled);
        }
        EXPECT_GE(db->stepCount(run.id), rows) << "committed rows survive";
        EXPECT_EQ(db->stepCount(run.id), run.last_step);
    }
}

namespace {

/// A small tabular classification set the user brings: 4 features, 3 classes.
void writeCsv(const fs::path& path, int rows) {
    std::ofstream out(path);
    out << "a,b,c,d,label\n";
    unsigned state = 12345;
    auto noise = [&] {
        state = state * 1103515245u + 12345u;
        return static_cast<double>((state >> 16) % 1000) / 500.0 - 1.0;
    };
    for (int i = 0; i < rows; ++i) {
        const int y = i % 3;
        for (int f = 0; f < 4; ++f) {
            out << y + noise() << ',';
        }
        out << y << '\n';
    }
}

}  // namespace

TEST_F(CliTest, RerunRepeatsADeterministicRunBitForBitAndLinksIt) {
    const fs::path csv = dir_ / "table.csv";
    writeCsv(csv, 300);
    auto r = cli("--db " + db_ + " run --preset smoke --model mlp --data " + csv.string() +
                 " --deterministic --seeds 1 2 --no-fuse-seeds -q");
    ASSERT_EQ(r.code, 0) << r.out;
    r = cli("--db " + db_ + " rerun 2");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("Run 7 (rerun of run 2, amp, seed 1) is identical to its original"),
              std::string::npos)
        << r.out;
    {
        auto db = Database::open(db_, Database::Mode::ReadOnly);
        const auto rerun = db->run(7);
        ASSERT_TRUE(rerun);
        EXPECT_EQ(rerun->rerun_of, 2);
        EXPECT_EQ(rerun->arm, "amp");
        EXPECT_EQ(rerun->seed, 1u);
        EXPECT_EQ(rerun->status, RunStatus::Finished);
        EXPECT_EQ(db->stepCount(7), db->stepCount(2));
        EXPECT_NE(rerun->inputs_json.find("data.path"), std::string::npos);
        // Its own experiment, so the original's seed band is not changed by it.
        EXPECT_EQ(db->runs(1).size(), 6u);
        const auto exp = db->experiment(rerun->experiment_id);
        ASSERT_TRUE(exp);
        EXPECT_NE(exp->name.find("(rerun of run 2)"), std::string::npos) << exp->name;
        ASSERT_EQ(db->rerunsOf(1).size(), 1u);
    }
    // A rerun of the rerun is compared with the first original.
    r = cli("--db " + db_ + " rerun 7 -q");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("Run 8 (rerun of run 2"), std::string::npos) << r.out;
    // The experiment's analysis carries the comparisons and the commands.
    r = cli("--db " + db_ + " show -e 1 --json");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("\"agreement\": \"identical\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("rerun 3\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"crc32\""), std::string::npos) << r.out;
    r = cli("--db " + db_ + " show 7");
    EXPECT_NE(r.out.find("rerun of    run 2"), std::string::npos) << r.out;
}

TEST_F(CliTest, RerunRefusesChangedDataOrEnvironmentUnlessForced) {
    const fs::path csv = dir_ / "table.csv";
    writeCsv(csv, 300);
    auto r = cli("--db " + db_ + " run --preset smoke --model mlp --data " + csv.string() +
                 " --arm fp32=fp32 --seeds 1 -q");
    ASSERT_EQ(r.code, 0) << r.out;
    writeCsv(csv, 301);  // one more row
    r = cli("--db " + db_ + " rerun 1");
    EXPECT_EQ(r.code, 7) << r.out;
    EXPECT_NE(r.out.find("data.path " + csv.string() + " changed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--force"), std::string::npos) << r.out;
    {
        auto db = Database::open(db_, Database::Mode::ReadOnly);
        EXPECT_EQ(db->runs().size(), 1u) << "a refused rerun must write nothing";
    }
    r = cli("--db " + db_ + " rerun 1 --force -q");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("rerunning anyway"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Run 2 (rerun of run 1"), std::string::npos) << r.out;

    // The same files, but the run was recorded under another LibTorch.
    writeCsv(csv, 300);
    {
        auto db = Database::open(db_);
        char* err = nullptr;
        ASSERT_EQ(sqlite3_exec(db->handle(),
                               "UPDATE runs SET env_json = json_set(env_json, "
                               "'$.libtorch_version', '0.9.9') WHERE id = 1",
                               nullptr, nullptr, &err),
                  SQLITE_OK)
            << (err ? err : "");
    }
    r = cli("--db " + db_ + " rerun 1");
    EXPECT_EQ(r.code, 7) << r.out;
    EXPECT_NE(r.out.find("LibTorch: 0.9.9 then"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("data.path"), std::string::npos) << r.out;
}

TEST_F(CliTest, RerunOfAnUnknownRunIsNotFound) {
    Database::open(db_);  // an empty workbench database
    auto r = cli("--db " + db_ + " rerun 42");
    EXPECT_EQ(r.code, 5) << r.out;
    EXPECT_NE(r.out.find("no run 42"), std::string::npos) << r.out;
}
