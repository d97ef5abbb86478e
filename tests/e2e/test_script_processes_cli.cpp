// End to end: what a training script leaves when its run ends, through `run --script`.
// Rows a script flushed before a pause (an evaluation, a checkpoint) are in the
// database during the pause, so a kill -9 of the CLI then keeps them; the processes a
// script starts, in its process group, in a session of their own or as a daemon, end
// with the run whether it ends normally, by Ctrl-C or by kill -9 of the CLI.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "Processes.h"
#include "Shell.h"
#include "StoredSteps.h"
#include "core/store/Database.h"

namespace fs = std::filesystem;
using ampbench::run::RunStatus;
using ampbench::store::Database;
namespace test = ampbench::test;

namespace {

const std::string kCli = AMPBENCH_CLI_PATH;
const std::string kScripts = AMPBENCH_TEST_SCRIPTS;

/// Debian's python3 when it is there (the one the package is installed for).
const std::string& python() {
    static const std::string found =
        test::shell("/usr/bin/python3 -c pass").code == 0 ? "/usr/bin/python3" : "python3";
    return found;
}

class ScriptProcesses : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ampbench-script-processes-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "runs.db").string();
    }
    void TearDown() override {
        for (const char* name : {"group", "session", "daemon"}) {
            test::killIfRunning(test::processIdIn(path(std::string(name) + ".pid")));
        }
        fs::remove_all(dir_);
    }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    /// `run --script` of a script in tests/python/scripts with its arguments, one run.
    std::string command(const std::string& script_and_args) const {
        return kCli + " --db " + db_ + " run --script " + kScripts + "/" + script_and_args +
               " --python " + python() + " --arm fp32=fp32 --seeds 1 --micro-steps 8";
    }
    /// The three processes spawns_children.py started, once it has named them all.
    std::vector<test::ProcessId> children() const {
        std::vector<test::ProcessId> out;
        EXPECT_TRUE(test::eventually([&] {
            out.clear();
            for (const char* name : {"group", "session", "daemon"}) {
                out.push_back(test::processIdIn(path(std::string(name) + ".pid")));
            }
            return std::all_of(out.begin(), out.end(),
                               [](const test::ProcessId& p) { return p.pid > 0; });
        }));
        return out;
    }
    fs::path dir_;
    std::string db_;
};

// A script that flushed 20 steps and then pauses has all 20 in the database during the
// pause (they were held in memory until the next row came: 1 of 20 was there after
// 40 s), so a kill -9 of the CLI in the pause loses none of them.
TEST_F(ScriptProcesses, RowsFlushedBeforeAPauseAreStoredDuringItAndSurviveKillNine) {
    const std::string marker = path("flushed");
    test::Background cli(command("records_then_pauses.py --script-arg " + marker), dir_.string());
    ASSERT_TRUE(test::eventually([&] { return fs::exists(marker); })) << cli.output();
    const auto flushed = std::chrono::steady_clock::now();
    const bool stored =
        test::eventually([&] { return test::firstRunSteps(db_) == 20; }, std::chrono::seconds(20));
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - flushed);
    EXPECT_TRUE(stored) << test::firstRunSteps(db_) << " of 20 steps stored " << waited.count()
                        << " ms into the pause";
    ASSERT_EQ(::kill(cli.pid(), SIGKILL), 0);
    cli.wait();
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    const auto run = db->runs().at(0);
    EXPECT_EQ(run.status, RunStatus::Interrupted);
    EXPECT_EQ(db->steps(run.id).size(), 20u) << "every step the script flushed is kept";
    const test::ProcessId script = test::processIdIn(marker);
    EXPECT_TRUE(test::eventually([&] { return !test::stillRuns(script); }))
        << "the script ends with the CLI";
    test::killIfRunning(script);
}

// A normal end: every process the script started is gone by the time the CLI returns,
// the one in a session of its own and the daemon too (they outlived it before).
TEST_F(ScriptProcesses, AScriptsProcessesEndWithItsRunWhereverTheyWent) {
    const auto r = test::shell(
        command("spawns_children.py --script-arg " + dir_.string() + " --script-arg exit"));
    ASSERT_EQ(r.code, 0) << r.out;
    const auto left = children();
    for (size_t i = 0; i < left.size(); ++i) {
        EXPECT_FALSE(test::stillRuns(left[i]))
            << "child " << i << " (pid " << left[i].pid << ") outlived the run";
    }
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    EXPECT_EQ(db->runs().at(0).status, RunStatus::Finished);
}

// Ctrl-C: the run ends cancelled and its processes with it.
TEST_F(ScriptProcesses, CtrlCEndsEveryProcessOfTheRun) {
    test::Background cli(
        command("spawns_children.py --script-arg " + dir_.string() + " --script-arg wait"),
        dir_.string());
    const auto left = children();
    ASSERT_TRUE(test::eventually([&] { return test::firstRunSteps(db_) >= 3; })) << cli.output();
    ASSERT_EQ(::kill(cli.pid(), SIGINT), 0);
    EXPECT_EQ(cli.wait(), 130) << cli.output();
    for (size_t i = 0; i < left.size(); ++i) {
        EXPECT_FALSE(test::stillRuns(left[i]))
            << "child " << i << " (pid " << left[i].pid << ") outlived the cancelled run";
    }
}

// kill -9 of the CLI: nothing in it can act, yet every process of the run ends.
TEST_F(ScriptProcesses, KillNineOfTheCliEndsEveryProcessOfTheRun) {
    test::Background cli(
        command("spawns_children.py --script-arg " + dir_.string() + " --script-arg wait"),
        dir_.string());
    const auto left = children();
    ASSERT_TRUE(test::eventually([&] { return test::firstRunSteps(db_) >= 3; })) << cli.output();
    ASSERT_EQ(::kill(cli.pid(), SIGKILL), 0);
    cli.wait();
    for (size_t i = 0; i < left.size(); ++i) {
        EXPECT_TRUE(test::eventually([&] { return !test::stillRuns(left[i]); }))
            << "child " << i << " (pid " << left[i].pid << ") outlived the killed CLI";
    }
}

}  // namespace
