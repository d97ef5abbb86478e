// Data-parallel arms through the real CLI on the CPU (Gloo): rank 0 is the CLI,
// the other ranks are processes it starts. Two ranks of micro-batch b record the
// losses one rank of 2b records; a rank killed with SIGKILL fails the run on rank 0
// with the reason, at once and with its steps kept; a cancel ends every rank at once;
// killing rank 0 ends the others.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "Shell.h"
#include "core/config/DataPaths.h"
#include "core/store/Database.h"

namespace fs = std::filesystem;
using ampbench::run::RunStatus;
using ampbench::store::Database;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kCli = AMPBENCH_CLI_PATH;

std::string specJson(int micro_batch, int ranks, int64_t micro_steps) {
    return R"({"name": "dp", "model": {"name": "mlp", "width": 32, "depth": 1},
 "micro_batch": )" +
           std::to_string(micro_batch) + R"(, "micro_steps": )" + std::to_string(micro_steps) +
           R"(, "eval_interval": 0, "eval_batches": 2, "warmup_steps": 1, "cpu_threads": 1,
 "seeds": [3], "device": "cpu",
 "arms": [{"name": "fp32", "precision": "fp32", "lr_rule": "none", "ranks": )" +
           std::to_string(ranks) + "}]}";
}

/// The pid of a child of `parent` whose command line holds `word`; nullopt if none.
std::optional<pid_t> childWith(pid_t parent, const std::string& word) {
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        std::getline(stat, line);
        const auto close = line.rfind(')');
        if (close == std::string::npos) {
            continue;
        }
        char state = 0;
        int ppid = 0;
        if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) != 2 || ppid != parent) {
            continue;
        }
        std::ifstream cmd(entry.path() / "cmdline");
        std::string args((std::istreambuf_iterator<char>(cmd)), {});
        if (args.find(word) != std::string::npos) {
            return static_cast<pid_t>(std::stoi(name));
        }
    }
    return std::nullopt;
}

/// Whether `pid` still runs (a zombie has ended).
bool running(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) {
        return false;
    }
    const auto close = line.rfind(')');
    return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

class DataParallelCli : public ::testing::Test {
  protected:
    void SetUp() override {
#ifndef AMPBENCH_TEST_WITH_GLOO
        GTEST_SKIP() << "this build has no Gloo: its ranks cannot train on the CPU";
#endif
        if (!ampbench::config::haveFashionMnist()) {
            GTEST_SKIP() << "dataset-fashion-mnist is not installed";
        }
        dir_ = fs::temp_directory_path() /
               ("ampbench-dp-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "r.db").string();
    }
    void TearDown() override {
        fs::remove_all(dir_);
    }

    std::string writeSpec(const std::string& name, const std::string& json) const {
        const std::string path = (dir_ / name).string();
        std::ofstream(path) << json;
        return path;
    }
    ampbench::test::ShellResult run(const std::string& spec) const {
        return ampbench::test::shell(kCli + " --db " + db_ + " run -q --config " + spec);
    }
    /// Starts the CLI on `spec` without waiting; its output goes to `log`.
    pid_t spawnRun(const std::string& spec, const std::string& log) const {
        const pid_t pid = fork();
        if (pid == 0) {
            freopen(log.c_str(), "w", stderr);
            freopen("/dev/null", "w", stdout);
            execl(kCli.c_str(), kCli.c_str(), "--db", db_.c_str(), "run", "-q", "--config",
                  spec.c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
        return pid;
    }
    /// The rank-worker the CLI started, once it has been training for a while.
    pid_t workerOnceTraining(pid_t cli) const {
        const auto until = Clock::now() + ampbench::test::kPatience;
        while (Clock::now() < until) {
            if (auto worker = childWith(cli, "rank-worker")) {
                auto db = Database::open(db_, Database::Mode::ReadOnly);
                const auto runs = db->runs();
                if (!runs.empty() && db->steps(runs.front().id).size() >= 20) {
                    return *worker;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return -1;
    }
    /// The exit status of `pid`, or -1 when it is still running after `seconds`.
    static int waitFor(pid_t pid, double seconds) {
        const auto until = Clock::now() + std::chrono::duration<double>(seconds);
        while (Clock::now() < until) {
            int status = 0;
            if (waitpid(pid, &status, WNOHANG) == pid) {
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return -1;
    }

    fs::path dir_;
    std::string db_;
};

TEST_F(DataParallelCli, TwoRankProcessesRecordTheLossesOfOneRankWithTheGlobalBatch) {
    auto one = run(writeSpec("one.json", specJson(32, 1, 30)));
    ASSERT_EQ(one.code, 0) << one.out;
    auto two = run(writeSpec("two.json", specJson(16, 2, 30)));
    ASSERT_EQ(two.code, 0) << two.out;
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    const auto runs = db->runs();
    ASSERT_EQ(runs.size(), 2u);
    const auto a = db->steps(runs[0].id);
    const auto b = db->steps(runs[1].id);
    ASSERT_EQ(a.size(), 30u);
    ASSERT_EQ(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(b[i].samples, a[i].samples) << "step " << i + 1;
        EXPECT_NEAR(b[i].loss, a[i].loss, 1e-5) << "step " << i + 1;
    }
    const auto& dp = runs[0].spec_json.find("world_size") != std::string::npos ? runs[0] : runs[1];
    EXPECT_NE(dp.spec_json.find("\"world_size\":2"), std::string::npos) << dp.spec_json;
    EXPECT_NE(dp.spec_json.find("\"backend\":\"gloo\""), std::string::npos);
    EXPECT_NE(dp.env_json.find("\"world_size\":2"), std::string::npos) << dp.env_json;
    int summaries = 0;
    for (const auto& e : db->events(dp.id)) {
        summaries += e.message.rfind("rank 1: median step", 0) == 0;
    }
    EXPECT_EQ(summaries, 1);
}

TEST_F(DataParallelCli, AKilledRankFailsTheRunWithItsReasonAndKeepsTheSteps) {
    const std::string log = (dir_ / "run.log").string();
    const pid_t cli = spawnRun(writeSpec("long.json", specJson(16, 2, 200000)), log);
    const pid_t worker = workerOnceTraining(cli);
    if (worker < 0) {
        kill(cli, SIGKILL);
        waitFor(cli, 10);
        FAIL() << "rank 1 never started or trained; log:\n"
               << ampbench::test::shell("cat " + log).out;
    }
    kill(worker, SIGKILL);
    const int code = waitFor(cli, 120);
    if (code < 0) {
        kill(cli, SIGKILL);
        waitFor(cli, 10);
        FAIL() << "rank 0 hung after rank 1 was killed";
    }
    EXPECT_EQ(code, 1);  // a run failed
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    const auto row = db->runs().front();
    EXPECT_EQ(row.status, RunStatus::Failed);
    EXPECT_NE(row.error.find("rank 1"), std::string::npos) << row.error;
    EXPECT_NE(row.error.find("killed by signal 9"), std::string::npos) << row.error;
    EXPECT_GE(db->steps(row.id).size(), 20u);  // every step before it is kept
}

// The other ranks' program ends before it joins, or cannot be run at all: the run
// fails at once saying so, not after the collective timeout.
TEST_F(DataParallelCli, RanksThatCannotStartFailTheRunAtOnce) {
    const std::string spec = writeSpec("short.json", specJson(16, 2, 40));
    for (const std::string& program : {std::string("/bin/false"), (dir_ / "missing").string()}) {
        const auto t0 = Clock::now();
        auto r = ampbench::test::shell("AMPBENCH_CLI=" + program + " " + kCli + " --db " + db_ +
                                       " run -q --config " + spec);
        const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        EXPECT_EQ(r.code, 1) << r.out;
        // The collective timeout is 300 s: far under it is at once, however busy.
        EXPECT_LT(seconds, 120.0) << program;
        auto db = Database::open(db_, Database::Mode::ReadOnly);
        const auto row = db->runs().back();
        EXPECT_EQ(row.status, RunStatus::Failed);
        const std::string why =
            program == "/bin/false" ? "exited with status 1" : "not an executable";
        EXPECT_NE(row.error.find(why), std::string::npos) << row.error;
    }
}

// Ctrl-C on rank 0 cancels the run at once: no wait for the other ranks' summaries,
// the run recorded as cancelled with its steps, the other ranks gone.
TEST_F(DataParallelCli, ACancelEndsEveryRankPromptly) {
    const std::string log = (dir_ / "run.log").string();
    const pid_t cli = spawnRun(writeSpec("long.json", specJson(16, 2, 200000)), log);
    const pid_t worker = workerOnceTraining(cli);
    ASSERT_GT(worker, 0) << "rank 1 never started";
    kill(cli, SIGINT);
    const auto t0 = Clock::now();
    const int code = waitFor(cli, 120);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (code < 0) {
        kill(cli, SIGKILL);
        waitFor(cli, 10);
        FAIL() << "rank 0 did not end after the cancel";
    }
    EXPECT_EQ(code, 130);
    // A cancel gives the other ranks 5 s to go, then signals them; waiting for their
    // summaries would give them 30 s. Under that is prompt however busy the machine.
    EXPECT_LT(seconds, 25.0);
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    const auto row = db->runs().front();
    EXPECT_EQ(row.status, RunStatus::Cancelled);
    EXPECT_GE(db->steps(row.id).size(), 20u);
    const auto until = Clock::now() + ampbench::test::kPatience;
    while (running(worker) && Clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_FALSE(running(worker)) << "rank 1 outlived the cancel";
}

TEST_F(DataParallelCli, KillingRankZeroEndsTheOtherRanks) {
    const std::string log = (dir_ / "run.log").string();
    const pid_t cli = spawnRun(writeSpec("long.json", specJson(16, 2, 200000)), log);
    const pid_t worker = workerOnceTraining(cli);
    kill(cli, SIGKILL);
    waitFor(cli, 10);
    ASSERT_GT(worker, 0) << "rank 1 never started";
    const auto until = Clock::now() + ampbench::test::kPatience;
    while (running(worker) && Clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_FALSE(running(worker)) << "rank 1 outlived rank 0";
    if (running(worker)) {
        kill(worker, SIGKILL);
    }
}

}  // namespace
