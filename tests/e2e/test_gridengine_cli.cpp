// `launch --gridengine` against a real one-host Grid Engine (tests/e2e/gridengine-fixture.sh:
// Debian's sge_qmaster and sge_execd as this test's own processes, with a cell, spool
// and ports of their own, started once by ctest for every test here, or by the binary
// itself when run by hand): arms x seeds as one task array ingested row for row; in
// one array a task requeued (qmod -rj), one killed and the rest cancelled, every row
// kept; a held array and a task over its h_rt; a collector killed and started again;
// and qsub refusing in its own words. A daemon that cannot start fails the tests with the
// fixture's reason; nothing is skipped.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "ArrayJobTest.h"
#include "Shell.h"
#include "core/launch/TaskList.h"
#include "core/store/Database.h"
#include "core/stream/RecordStream.h"

namespace fs = std::filesystem;
using ampbench::run::RunStatus;
using ampbench::store::Database;
using nlohmann::json;
namespace test = ampbench::test;
namespace stream = ampbench::stream;

namespace {

const std::string kCli = AMPBENCH_CLI_PATH;
const std::string kFixture = AMPBENCH_GRIDENGINE_FIXTURE;
// One arm of a tiny MLP on synthetic data: a task trains it in seconds on a CPU.
const std::string kSpecAnySeeds =
    "--dataset synthetic-images --model mlp --width 32 --micro-batch 32 --eval-interval 50 "
    "--eval-batches 2 --threads 1 --arm fp32=fp32";
const std::string kSpec = kSpecAnySeeds + " --seeds 1";

using ampbench::test::readText;

/// The cluster every test here submits to: the ctest fixture's (AMPBENCH_GRIDENGINE
/// names its folder), else one of the binary's own. Its DIR/env gives the clients
/// their SGE_ROOT, SGE_CELL and ports.
class Cluster : public ::testing::Environment {
  public:
    static std::string problem;

    void SetUp() override {
        const char* given = std::getenv("AMPBENCH_GRIDENGINE");
        if (given != nullptr && *given != '\0') {
            dir_ = given;
        } else {
            dir_ =
                fs::temp_directory_path() / ("ampbench-gridengine-" + std::to_string(::getpid()));
            own_ = true;
            const auto started = test::shell(kFixture + " start " + dir_.string());
            if (started.code != 0) {
                problem = "the one-host Grid Engine of this test did not start:\n" + started.out;
                return;
            }
        }
        std::ifstream env(dir_ / "env");
        if (!env) {
            problem = "no Grid Engine at " + dir_.string() +
                      " (its fixture, GridEngineFixture.Start, did not start it: see its output)";
            return;
        }
        for (std::string line; std::getline(env, line);) {
            const auto eq = line.find('=');
            if (eq != std::string::npos) {
                ::setenv(line.substr(0, eq).c_str(), line.substr(eq + 1).c_str(), 1);
            }
        }
    }
    void TearDown() override {
        if (own_) {
            test::shell(kFixture + " stop " + dir_.string());
            fs::remove_all(dir_);
        }
    }

  private:
    fs::path dir_;
    bool own_ = false;
};
std::string Cluster::problem;
[[maybe_unused]] const auto* const kCluster = ::testing::AddGlobalTestEnvironment(new Cluster);

class GridEngineCli : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(Cluster::problem.empty()) << Cluster::problem;
        static int made = 0;
        dir_ = fs::temp_directory_path() /
               ("ampbench-ge-" + std::to_string(::getpid()) + "-" + std::to_string(++made));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "bench.db").string();
    }
    void TearDown() override {
        // A collector this test launched that is still waiting (a failed test) is
        // stopped, and its array deleted, so neither outlives the test.
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(db_ + ".jobs", ec)) {
            if (e.path().extension() != ".json") {
                continue;
            }
            const json j = json::parse(readText(e.path()), nullptr, false);
            if (!j.is_discarded() && !j.contains("exit_code") && j.value("pid", 0) > 0) {
                ::kill(j.value("pid", 0), SIGKILL);
                test::shell("qdel -f " + j.value("scheduler_job", std::string("0")));
            }
        }
        if (!HasFailure()) {
            fs::remove_all(dir_);
        }
    }

    test::ShellResult cli(const std::string& args) const {
        return test::shell(kCli + " --db " + db_ + " " + args + " </dev/null");
    }
    /// launch --gridengine; the JSON line it printed.
    json launch(const std::string& args) {
        const auto r = test::shell(kCli + " --db " + db_ + " launch --gridengine " + args + " 2>" +
                                   (dir_ / "launch.err").string() + " </dev/null");
        EXPECT_EQ(r.code, 0) << r.out << readText(dir_ / "launch.err");
        const json j = json::parse(r.out, nullptr, false);
        EXPECT_FALSE(j.is_discarded()) << r.out;
        return j.is_discarded() ? json::object() : j;
    }
    fs::path arrayDir(int64_t id) const {
        return fs::path(db_ + ".jobs") / (std::to_string(id) + ".gridengine");
    }
    json status(int64_t id) const {
        const json s = json::parse(cli("status --experiment " + std::to_string(id) + " --json").out,
                                   nullptr, false);
        EXPECT_FALSE(s.is_discarded());
        return s.is_discarded() ? json::object() : s["jobs"][0];
    }
    /// Waits until the collector wrote its exit code into the job file.
    json waitEnded(int64_t id, int seconds) {
        return test::waitCollectorEnded(db_, id, seconds, "qstat -g d");
    }
    /// Waits until run `run_id` has at least `steps` steps in the database.
    void waitSteps(int64_t run_id, int64_t steps, int seconds) {
        test::waitRunSteps(db_, run_id, steps, seconds, "qstat -g d");
    }
    static std::vector<std::string> streamRows(const fs::path& file) {
        return test::streamRows(file);
    }
    std::vector<std::string> databaseRows(int64_t run_id) const {
        return test::databaseRows(db_, run_id);
    }
    std::vector<ampbench::store::RunRow> runs(int64_t id) const {
        return Database::open(db_, Database::Mode::ReadOnly)->runs(id);
    }

    fs::path dir_;
    std::string db_;
};

TEST_F(GridEngineCli, ArmsTimesSeedsAsOneTaskArrayAreIngestedRowForRow) {
    const json launched = launch(kSpecAnySeeds +
                                 " --arm bf16=amp-bf16 --seeds 1 2 --micro-steps 60 --queue test "
                                 "--time-limit 600");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    EXPECT_EQ(launched.value("scheduler", ""), "gridengine");
    EXPECT_FALSE(launched.value("gridengine_job_id", "").empty());
    EXPECT_EQ(runs(id).size(), 4u);  // planned here before any task started
    // The job file keeps the scheduler and the options it was launched with.
    const json file =
        json::parse(readText(fs::path(db_ + ".jobs") / (std::to_string(id) + ".json")));
    EXPECT_EQ(file["scheduler"], "gridengine");
    EXPECT_EQ(file["scheduler_options"], (json{{"queue", "test"}, {"time_limit", "600"}}));
    EXPECT_EQ(ampbench::launch::readTaskList((arrayDir(id) / "tasks.json").string()).tasks.size(),
              4u);
    const json job = waitEnded(id, 180);
    EXPECT_EQ(job.value("exit_code", -1), 0)
        << readText(db_ + ".jobs/" + std::to_string(id) + ".log");
    const auto all = runs(id);
    ASSERT_EQ(all.size(), 4u);  // arms x seeds, no run added, none lost
    for (size_t i = 0; i < all.size(); ++i) {
        EXPECT_EQ(all[i].status, RunStatus::Finished) << all[i].error;
        EXPECT_EQ(all[i].last_step, all[i].planned_steps);
        const auto streamed =
            streamRows(arrayDir(id) / ("task-" + std::to_string(i) + ".attempt-0.jsonl"));
        ASSERT_FALSE(streamed.empty());
        EXPECT_EQ(databaseRows(all[i].id), streamed) << "run " << all[i].id;
    }
    // status reads Grid Engine's accounting: every task completed.
    const json entry = status(id);
    EXPECT_EQ(entry["state"], "finished");
    EXPECT_EQ(entry["scheduler"], "gridengine");
    EXPECT_EQ(entry["gridengine"]["tasks"].size(), 4u) << entry.dump();
    for (const auto& r : entry["runs"]) {
        EXPECT_EQ(r["gridengine"]["state"], "COMPLETED") << r.dump();
    }
}

TEST_F(GridEngineCli, ARequeuedAndAKilledTaskLoseNoRowAndACancelEndsTheRestWithTheirRows) {
    // One array of two tasks: the first requeued (qmod -rj) trains again as a new run,
    // the second killed mid-run, then the array cancelled; each run keeps every row it
    // streamed, none twice.
    const json launched = launch(kSpecAnySeeds + " --micro-steps 1000000 --seeds 1 2");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    auto all = runs(id);
    ASSERT_EQ(all.size(), 2u);
    waitSteps(all[0].id, 20, 120);
    waitSteps(all[1].id, 20, 120);
    const std::string job = launched.value("gridengine_job_id", "");
    const auto requeued = test::shell("qmod -rj " + job + ".1");
    ASSERT_EQ(requeued.code, 0) << requeued.out;
    ASSERT_TRUE(test::eventually([&] { return runs(id).size() == 3; }))
        << readText(db_ + ".jobs/" + std::to_string(id) + ".log");
    waitSteps(runs(id).at(2).id, 20, 120);
    const std::string said = readText(arrayDir(id) / "task-1.out");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(said, m, std::regex("\\(pid ([0-9]+)\\)"))) << said;
    ASSERT_EQ(::kill(std::stoi(m[1]), SIGKILL), 0);
    // The collector hears of the kill from qacct; the run's end is recorded with the
    // array's, once every stream is read to its end.
    const fs::path log = fs::path(db_ + ".jobs") / (std::to_string(id) + ".log");
    ASSERT_TRUE(test::eventually([&] {
        return readText(log).find("Grid Engine task " + job + ".2: FAILED") != std::string::npos;
    })) << readText(log);
    const auto cancelled = cli("cancel --experiment " + std::to_string(id) + " --timeout 120");
    EXPECT_EQ(cancelled.code, 0) << cancelled.out;
    EXPECT_NE(cancelled.out.find("cancelled (Grid Engine job " + job + ")"), std::string::npos)
        << cancelled.out;
    EXPECT_EQ(waitEnded(id, 60).value("exit_code", -1), 130);
    all = runs(id);
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].status, RunStatus::Interrupted);
    EXPECT_NE(all[0].error.find("requeued by Grid Engine"), std::string::npos) << all[0].error;
    EXPECT_EQ(databaseRows(all[0].id), streamRows(arrayDir(id) / "task-0.attempt-0.jsonl"));
    EXPECT_EQ(all[1].status, RunStatus::Interrupted) << all[1].error;
    EXPECT_NE(all[1].error.find("before its run ended"), std::string::npos) << all[1].error;
    EXPECT_EQ(databaseRows(all[1].id), streamRows(arrayDir(id) / "task-1.attempt-0.jsonl"));
    EXPECT_EQ(all[2].status, RunStatus::Cancelled) << all[2].error;
    EXPECT_EQ(all[2].arm, all[0].arm);
    EXPECT_EQ(all[2].seed, all[0].seed);
    EXPECT_GE(all[2].last_step, 20);
    EXPECT_EQ(databaseRows(all[2].id), streamRows(arrayDir(id) / "task-0.attempt-1.jsonl"));
    const json entry = status(id);
    EXPECT_EQ(entry["state"], "interrupted");  // the killed task's run never ended
    EXPECT_EQ(entry["runs"][0]["superseded_by"], all[2].id);
}

TEST_F(GridEngineCli, AHeldArrayAndATaskPastItsTimeLimitAreToldInGridEnginesWords) {
    // Two arrays at once (the second runs out its h_rt while the first is looked at):
    // one past its time limit, where the qmaster warns the task (SIGUSR2, -notify) and
    // kills it after the queue's notify time, the task recording its end as it stops;
    // one held at submission (a qsub argument passed as it is): pending, and why, then
    // cancelled before it started.
    const json over = launch(kSpec + " --micro-steps 100000000 --time-limit 4");
    const int64_t late = over.value("experiment_id", 0);
    ASSERT_GT(late, 0);
    const json held = launch(kSpec + " --micro-steps 100 --qsub-option=-h");
    const int64_t id = held.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    json entry;
    ASSERT_TRUE(test::eventually([&] {
        entry = status(id);
        return entry.value("state", "") == "pending";
    })) << entry.dump();
    EXPECT_NE(entry.value("reason", "").find("held"), std::string::npos) << entry.dump();
    EXPECT_EQ(entry["runs"][0]["status"], "queued");
    EXPECT_EQ(entry["runs"][0]["gridengine"]["state"], "HELD");
    const auto text = cli("status --experiment " + std::to_string(id));
    EXPECT_NE(text.out.find("[Grid Engine task 0: HELD, hqw: held"), std::string::npos) << text.out;
    const auto cancelled = cli("cancel --experiment " + std::to_string(id) + " --timeout 60");
    EXPECT_EQ(cancelled.code, 0) << cancelled.out;
    waitEnded(id, 60);
    const auto row = runs(id).at(0);
    EXPECT_EQ(row.status, RunStatus::Cancelled);
    EXPECT_EQ(row.error, "cancelled (qdel) before its task started");
    EXPECT_EQ(status(id)["runs"][0]["gridengine"]["state"], "CANCELLED");

    waitEnded(late, 120);
    const auto timed = runs(late).at(0);
    EXPECT_EQ(timed.status, RunStatus::Interrupted) << timed.error;
    EXPECT_NE(timed.error.find("ran past its time limit (4) and Grid Engine stopped it"),
              std::string::npos)
        << timed.error;
    EXPECT_GT(timed.last_step, 0);
    EXPECT_EQ(databaseRows(timed.id), streamRows(arrayDir(late) / "task-0.attempt-0.jsonl"));
    EXPECT_EQ(status(late)["runs"][0]["gridengine"]["state"], "TIMEOUT");
}

TEST_F(GridEngineCli, AKilledCollectorStartedAgainRecordsEveryRowAndTheRunsEndFinished) {
    const json launched = launch(kSpec + " --micro-steps 600");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    const pid_t collector = launched.value("pid", 0);
    ASSERT_GT(collector, 0);
    auto all = runs(id);
    ASSERT_EQ(all.size(), 1u);
    waitSteps(all[0].id, 20, 120);
    ASSERT_EQ(::kill(collector, SIGKILL), 0);
    ASSERT_TRUE(test::eventually([&] { return ::kill(collector, 0) != 0; }))
        << "the collector outlived SIGKILL";
    const auto resumed = cli("launch --resume --experiment " + std::to_string(id) + " 2>&1");
    ASSERT_EQ(resumed.code, 0) << resumed.out;
    const json again = json::parse(resumed.out, nullptr, false);
    ASSERT_FALSE(again.is_discarded()) << resumed.out;
    EXPECT_EQ(again.value("resumed", false), true);
    EXPECT_EQ(again.value("gridengine_job_id", ""), launched.value("gridengine_job_id", ""));
    const json job = waitEnded(id, 180);
    EXPECT_EQ(job.value("exit_code", -1), 0)
        << readText(db_ + ".jobs/" + std::to_string(id) + ".log");
    all = runs(id);
    ASSERT_EQ(all.size(), 1u);  // a resumed collector adds no run
    for (size_t i = 0; i < all.size(); ++i) {
        EXPECT_EQ(all[i].status, RunStatus::Finished) << all[i].error;
        EXPECT_EQ(all[i].last_step, all[i].planned_steps);
        EXPECT_EQ(databaseRows(all[i].id),
                  streamRows(arrayDir(id) / ("task-" + std::to_string(i) + ".attempt-0.jsonl")))
            << "run " << all[i].id;
    }
}

TEST_F(GridEngineCli, QsubRefusingTheArrayIsShownInItsWordsAndNothingStaysQueued) {
    const auto r = cli("launch --gridengine " + kSpec + " --micro-steps 100 --queue no-such-queue");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("qsub refused the job array"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("unknown queue"), std::string::npos) << r.out;  // Grid Engine's words
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    const auto experiments = db->experiments();
    ASSERT_EQ(experiments.size(), 1u);
    for (const auto& run : db->runs(experiments[0].id)) {
        EXPECT_EQ(run.status, RunStatus::Failed);
        EXPECT_NE(run.error.find("unknown queue"), std::string::npos) << run.error;
    }
}

TEST(GridEngineCliWithoutGridEngine, MissingToolsAndMisplacedOptionsAreNamed) {
    const fs::path dir =
        fs::temp_directory_path() / ("ampbench-noge-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string cli = kCli + " --db " + (dir / "bench.db").string() + " ";
    const auto r = test::shell("env PATH=" + dir.string() + " " + cli + "launch --gridengine " +
                               kSpec + " --micro-steps 10 </dev/null");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("this host has no Grid Engine client tools: `qsub` is not on PATH"),
              std::string::npos)
        << r.out;
    const auto flags = test::shell(cli + "launch " + kSpec + " --queue gpu.q </dev/null");
    EXPECT_EQ(flags.code, 2) << flags.out;
    EXPECT_NE(flags.out.find("are Grid Engine's: add --gridengine"), std::string::npos)
        << flags.out;
    const auto shared = test::shell(cli + "launch " + kSpec + " --time-limit 10 </dev/null");
    EXPECT_EQ(shared.code, 2) << shared.out;
    EXPECT_NE(shared.out.find("add --slurm or --gridengine"), std::string::npos) << shared.out;
    const auto bad =
        test::shell(cli + "launch --gridengine " + kSpec + " --time-limit 'two hours' </dev/null");
    EXPECT_EQ(bad.code, 2) << bad.out;
    EXPECT_NE(bad.out.find("--time-limit \"two hours\": as qsub -l h_rt takes it"),
              std::string::npos)
        << bad.out;
    EXPECT_FALSE(fs::exists(dir / "bench.db")) << "nothing was planned";
    fs::remove_all(dir);
}

}  // namespace
