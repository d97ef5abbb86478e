// `launch --slurm` against a real one-node Slurm (tests/e2e/slurm-fixture.sh: Debian's
// munged, slurmctld and slurmd as this test's own processes): the array submitted,
// its tasks' record streams ingested into the database row for row, a cancelled
// array, a task killed mid-run, a task over its time limit, a requeued task, and
// sbatch refusing in its own words. A daemon that cannot start fails the test with
// the fixture's reason; nothing is skipped.
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
#include <set>
#include <thread>

#include "ArrayJobTest.h"
#include "Shell.h"
#include "core/launch/Program.h"
#include "core/launch/Slurm.h"
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
const std::string kFixture = AMPBENCH_SLURM_FIXTURE;
// One arm of a tiny MLP on synthetic data: a task trains it in seconds on a CPU.
const std::string kSpecAnySeeds =
    "--dataset synthetic-images --model mlp --width 32 --micro-batch 32 --eval-interval 50 "
    "--eval-batches 2 --threads 1 --arm fp32=fp32";
const std::string kSpec = kSpecAnySeeds + " --seeds 1";

using ampbench::test::readText;

class SlurmCli : public ::testing::Test {
  protected:
    void SetUp() override {
        static int made = 0;
        dir_ = fs::temp_directory_path() /
               ("ampbench-slurm-" + std::to_string(::getpid()) + "-" + std::to_string(++made));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "bench.db").string();
        const auto started = test::shell(kFixture + " start " + (dir_ / "slurm").string());
        ASSERT_EQ(started.code, 0) << "the one-node Slurm of this test did not start:\n"
                                   << started.out;
        conf_ = (dir_ / "slurm" / "slurm.conf").string();
        ::setenv("SLURM_CONF", conf_.c_str(), 1);
        up_ = true;
    }
    void TearDown() override {
        // A collector this test launched that is still waiting (a failed test) would
        // outlive the controller: it is stopped first.
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(db_ + ".jobs", ec)) {
            if (e.path().extension() != ".json") {
                continue;
            }
            const json j = json::parse(readText(e.path()), nullptr, false);
            if (!j.is_discarded() && !j.contains("exit_code") && j.value("pid", 0) > 0) {
                ::kill(j.value("pid", 0), SIGKILL);
            }
        }
        if (up_) {
            test::shell(kFixture + " stop " + (dir_ / "slurm").string());
        }
        ::unsetenv("SLURM_CONF");
        if (!HasFailure()) {
            fs::remove_all(dir_);
        }
    }

    test::ShellResult cli(const std::string& args) const {
        return test::shell(kCli + " --db " + db_ + " " + args + " </dev/null");
    }
    /// launch --slurm; the JSON line it printed.
    json launch(const std::string& args) {
        const auto r = test::shell(kCli + " --db " + db_ + " launch --slurm " + args + " 2>" +
                                   (dir_ / "launch.err").string() + " </dev/null");
        EXPECT_EQ(r.code, 0) << r.out << readText(dir_ / "launch.err");
        const json j = json::parse(r.out, nullptr, false);
        EXPECT_FALSE(j.is_discarded()) << r.out;
        return j.is_discarded() ? json::object() : j;
    }
    fs::path slurmDir(int64_t id) const {
        return fs::path(db_ + ".jobs") / (std::to_string(id) + ".slurm");
    }
    /// Waits until the collector wrote its exit code into the job file.
    json waitEnded(int64_t id, int seconds) {
        return test::waitCollectorEnded(db_, id, seconds, "squeue -t all -r");
    }
    /// Waits until run `run_id` has at least `steps` steps in the database.
    void waitSteps(int64_t run_id, int64_t steps, int seconds) {
        test::waitRunSteps(db_, run_id, steps, seconds, "squeue -t all -r");
    }
    static std::vector<std::string> streamRows(const fs::path& file) {
        return test::streamRows(file);
    }
    std::vector<std::string> databaseRows(int64_t run_id) const {
        return test::databaseRows(db_, run_id);
    }

    fs::path dir_;
    std::string db_;
    std::string conf_;
    bool up_ = false;
};

TEST_F(SlurmCli, TheSmokeComparisonAsAJobArrayIsIngestedRowForRow) {
    const json launched =
        launch("--preset smoke --steps 60 --seeds 1 --eval-interval 30 --threads 1");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    EXPECT_EQ(launched.value("scheduler", ""), "slurm");
    EXPECT_FALSE(launched.value("slurm_job_id", "").empty());
    // Planned here before any task started: the printed experiment holds the runs.
    {
        auto db = Database::open(db_, Database::Mode::ReadOnly);
        ASSERT_EQ(db->runs(id).size(), 3u);
    }
    // The desktop follows the runs as it does a local job: tail --follow on the database.
    test::ShellResult followed;
    std::thread follower(
        [&] { followed = cli("tail --experiment " + std::to_string(id) + " --follow --stream"); });
    const json job = waitEnded(id, 240);
    follower.join();
    EXPECT_EQ(job.value("exit_code", -1), 0)
        << readText(db_ + ".jobs/" + std::to_string(id) + ".log");
    EXPECT_EQ(followed.code, 0) << followed.out;
    size_t finished = 0;
    for (size_t at = 0;
         (at = followed.out.find("\"status\":\"finished\"", at)) != std::string::npos; ++at) {
        ++finished;
    }
    EXPECT_GE(finished, 3u) << followed.out;
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    const auto runs = db->runs(id);
    ASSERT_EQ(runs.size(), 3u);
    for (size_t i = 0; i < runs.size(); ++i) {
        EXPECT_EQ(runs[i].status, RunStatus::Finished) << runs[i].error;
        EXPECT_EQ(runs[i].last_step, runs[i].planned_steps);
        const auto streamed =
            streamRows(slurmDir(id) / ("task-" + std::to_string(i) + ".attempt-0.jsonl"));
        ASSERT_FALSE(streamed.empty());
        EXPECT_EQ(databaseRows(runs[i].id), streamed) << "run " << runs[i].id;
    }
    // status reads the scheduler: every task completed.
    const json status = json::parse(
        cli("status --experiment " + std::to_string(id) + " --json").out, nullptr, false);
    ASSERT_FALSE(status.is_discarded());
    const json& entry = status["jobs"][0];
    EXPECT_EQ(entry["state"], "finished");
    EXPECT_EQ(entry["scheduler"], "slurm");
    for (const auto& r : entry["runs"]) {
        EXPECT_EQ(r["slurm"]["state"], "COMPLETED") << r.dump();
    }
}

/// Every row a task's stream holds for the run of arm `arm` and seed `seed` (a packed
/// task streams several runs), encoded as a stream line under run 0.
std::vector<std::string> streamRowsOf(const fs::path& file, int arm, uint64_t seed) {
    std::vector<std::string> rows;
    std::set<int64_t> ids;  // the task's own ids of that run (one per attempt)
    std::ifstream in(file);
    std::string line;
    int64_t n = 0;
    while (std::getline(in, line)) {
        auto record = stream::decode(line, ++n);
        if (auto* run = std::get_if<ampbench::store::RunRow>(&record)) {
            if (run->arm_index == arm && run->seed == seed) {
                ids.insert(run->id);
            }
        } else if (auto* row = std::get_if<stream::RowRecord>(&record)) {
            if (ids.count(row->run) != 0) {
                row->run = 0;
                rows.push_back(stream::encode(*row));
            }
        }
    }
    return rows;
}

/// A spec file that packs `runs_per_gpu` runs per GPU; the flags give the rest.
std::string packedSpec(const fs::path& dir, int runs_per_gpu) {
    const fs::path file = dir / "packed.json";
    std::ofstream(file) << json{{"runs_per_gpu", runs_per_gpu}}.dump();
    return "--config " + file.string() + " ";
}

TEST_F(SlurmCli, PackedRunsBecomeATaskPerGroupAndEachRunIsIngestedRowForRow) {
    const json launched =
        launch(packedSpec(dir_, 2) + kSpecAnySeeds + " --micro-steps 60 --seeds 1 2 3 4");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    EXPECT_EQ(launched.value("runs", 0), 4);
    // Two tasks of two runs each, in plan order.
    const auto list = ampbench::launch::readTaskList((slurmDir(id) / "tasks.json").string());
    ASSERT_EQ(list.tasks.size(), 2u);
    EXPECT_EQ(list.tasks[0].size(), 2u);
    EXPECT_EQ(list.tasks[1].size(), 2u);
    const json job = waitEnded(id, 120);
    EXPECT_EQ(job.value("exit_code", -1), 0)
        << readText(db_ + ".jobs/" + std::to_string(id) + ".log");
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    const auto runs = db->runs(id);
    ASSERT_EQ(runs.size(), 4u);  // packing adds no run and loses none
    for (size_t i = 0; i < runs.size(); ++i) {
        EXPECT_EQ(runs[i].status, RunStatus::Finished) << runs[i].error;
        EXPECT_EQ(runs[i].last_step, runs[i].planned_steps);
        EXPECT_EQ(list.tasks[i / 2][i % 2].run_id, runs[i].id);
        const auto streamed =
            streamRowsOf(slurmDir(id) / ("task-" + std::to_string(i / 2) + ".attempt-0.jsonl"),
                         runs[i].arm_index, runs[i].seed);
        ASSERT_FALSE(streamed.empty()) << "run " << runs[i].id;
        EXPECT_EQ(databaseRows(runs[i].id), streamed) << "run " << runs[i].id;
    }
    EXPECT_FALSE(fs::exists(slurmDir(id) / "task-2.attempt-0.jsonl"));
    // status names each run's task as Slurm saw it: one array of two tasks.
    const json status = json::parse(
        cli("status --experiment " + std::to_string(id) + " --json").out, nullptr, false);
    ASSERT_FALSE(status.is_discarded());
    const json& entry = status["jobs"][0];
    EXPECT_EQ(entry["state"], "finished");
    EXPECT_EQ(entry["slurm"]["tasks"].size(), 2u) << entry.dump();
    for (size_t i = 0; i < entry["runs"].size(); ++i) {
        const json& r = entry["runs"][i];
        EXPECT_EQ(r["slurm"]["task"], static_cast<int>(i / 2)) << r.dump();
        EXPECT_EQ(r["slurm"]["state"], "COMPLETED") << r.dump();
    }
}

TEST_F(SlurmCli, CancellingAPackedTaskEndsEachOfItsRunsCancelledWithItsRowsKept) {
    const json launched =
        launch(packedSpec(dir_, 2) + kSpecAnySeeds + " --micro-steps 1000000 --seeds 1 2");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    auto runs = Database::open(db_, Database::Mode::ReadOnly)->runs(id);
    ASSERT_EQ(runs.size(), 2u);
    waitSteps(runs[0].id, 20, 60);
    const auto cancelled = cli("cancel --experiment " + std::to_string(id) + " --timeout 60");
    EXPECT_EQ(cancelled.code, 0) << cancelled.out;
    EXPECT_EQ(waitEnded(id, 60).value("exit_code", -1), 130);
    runs = Database::open(db_, Database::Mode::ReadOnly)->runs(id);
    // The CPU trains the task's runs one at a time: the first was training, the
    // second had not started.
    EXPECT_EQ(runs[0].status, RunStatus::Cancelled) << runs[0].error;
    EXPECT_GE(Database::open(db_, Database::Mode::ReadOnly)->stepCount(runs[0].id), 20);
    EXPECT_EQ(databaseRows(runs[0].id), streamRowsOf(slurmDir(id) / "task-0.attempt-0.jsonl",
                                                     runs[0].arm_index, runs[0].seed));
    EXPECT_EQ(runs[1].status, RunStatus::Cancelled) << runs[1].error;
    EXPECT_EQ(runs[1].error, "cancelled before it started");
    EXPECT_EQ(runs[1].last_step, 0);
}

TEST_F(SlurmCli, ACancelledArrayLeavesItsRunsCancelledWithTheirRowsKept) {
    const json launched = launch(kSpecAnySeeds + " --micro-steps 1000000 --seeds 1 2");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    auto runs = Database::open(db_, Database::Mode::ReadOnly)->runs(id);
    ASSERT_EQ(runs.size(), 2u);
    waitSteps(runs[0].id, 20, 120);
    const auto cancelled = cli("cancel --experiment " + std::to_string(id) + " --timeout 120");
    EXPECT_EQ(cancelled.code, 0) << cancelled.out;
    const json job = waitEnded(id, 60);
    EXPECT_EQ(job.value("exit_code", -1), 130);
    runs = Database::open(db_, Database::Mode::ReadOnly)->runs(id);
    for (size_t i = 0; i < runs.size(); ++i) {
        EXPECT_EQ(runs[i].status, RunStatus::Cancelled) << runs[i].error;
        const fs::path file = slurmDir(id) / ("task-" + std::to_string(i) + ".attempt-0.jsonl");
        if (fs::exists(file)) {
            EXPECT_EQ(databaseRows(runs[i].id), streamRows(file)) << "run " << runs[i].id;
        }
    }
    EXPECT_GE(Database::open(db_, Database::Mode::ReadOnly)->stepCount(runs[0].id), 20);
}

TEST_F(SlurmCli, ATaskKilledMidRunLeavesItsRunInterruptedWithEveryStreamedRow) {
    const json launched = launch(kSpec + " --micro-steps 1000000");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    const int64_t run = Database::open(db_, Database::Mode::ReadOnly)->runs(id).at(0).id;
    waitSteps(run, 20, 120);
    const std::string said = readText(slurmDir(id) / "task-0.out");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(said, m, std::regex("\\(pid ([0-9]+)\\)"))) << said;
    ASSERT_EQ(::kill(std::stoi(m[1]), SIGKILL), 0);
    waitEnded(id, 90);
    const auto row = Database::open(db_, Database::Mode::ReadOnly)->run(run);
    ASSERT_TRUE(row);
    EXPECT_EQ(row->status, RunStatus::Interrupted) << row->error;
    EXPECT_NE(row->error.find("before its run ended"), std::string::npos) << row->error;
    const auto streamed = streamRows(slurmDir(id) / "task-0.attempt-0.jsonl");
    EXPECT_GE(streamed.size(), 20u);
    EXPECT_EQ(databaseRows(run), streamed);
}

TEST_F(SlurmCli, ATaskOverItsTimeLimitSaysSo) {
    // Slurm counts time limits in minutes and checks them every half minute or so.
    const json launched = launch(kSpec + " --micro-steps 100000000 --time-limit 1");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    waitEnded(id, 200);
    const auto row = Database::open(db_, Database::Mode::ReadOnly)->runs(id).at(0);
    EXPECT_EQ(row.status, RunStatus::Interrupted) << row.error;
    EXPECT_NE(row.error.find("ran past its time limit (1:00)"), std::string::npos) << row.error;
    EXPECT_GT(row.last_step, 0);
    EXPECT_EQ(databaseRows(row.id), streamRows(slurmDir(id) / "task-0.attempt-0.jsonl"));
    const json status = json::parse(
        cli("status --experiment " + std::to_string(id) + " --json").out, nullptr, false);
    ASSERT_FALSE(status.is_discarded());
    EXPECT_EQ(status["jobs"][0]["runs"][0]["slurm"]["state"], "TIMEOUT");
}

TEST_F(SlurmCli, ARequeuedTaskTrainsAgainInANewRunAndRepeatsNoRow) {
    const json launched = launch(kSpec + " --micro-steps 1200");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    const int64_t first = Database::open(db_, Database::Mode::ReadOnly)->runs(id).at(0).id;
    waitSteps(first, 20, 120);
    const auto requeued =
        test::shell("scontrol requeue " + launched.value("slurm_job_id", "") + "_0");
    ASSERT_EQ(requeued.code, 0) << requeued.out;
    const json job = waitEnded(id, 180);
    EXPECT_EQ(job.value("exit_code", -1), 0);
    const auto runs = Database::open(db_, Database::Mode::ReadOnly)->runs(id);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].status, RunStatus::Interrupted);
    EXPECT_NE(runs[0].error.find("requeued"), std::string::npos) << runs[0].error;
    EXPECT_EQ(runs[1].status, RunStatus::Finished) << runs[1].error;
    EXPECT_EQ(runs[1].arm, runs[0].arm);
    EXPECT_EQ(runs[1].seed, runs[0].seed);
    EXPECT_EQ(databaseRows(runs[0].id), streamRows(slurmDir(id) / "task-0.attempt-0.jsonl"));
    EXPECT_EQ(databaseRows(runs[1].id), streamRows(slurmDir(id) / "task-0.attempt-1.jsonl"));
    const json status = json::parse(
        cli("status --experiment " + std::to_string(id) + " --json").out, nullptr, false);
    ASSERT_FALSE(status.is_discarded());
    EXPECT_EQ(status["jobs"][0]["state"], "finished");
    EXPECT_EQ(status["jobs"][0]["runs"][0]["superseded_by"], runs[1].id);
}

TEST_F(SlurmCli, AKilledCollectorStartedAgainRecordsEveryRowAndTheRunsEndFinished) {
    const json launched = launch(kSpecAnySeeds + " --micro-steps 1500 --seeds 1 2");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    const pid_t collector = launched.value("pid", 0);
    ASSERT_GT(collector, 0);
    auto runs = Database::open(db_, Database::Mode::ReadOnly)->runs(id);
    ASSERT_EQ(runs.size(), 2u);
    waitSteps(runs[0].id, 20, 120);
    ASSERT_EQ(::kill(collector, SIGKILL), 0);
    for (int i = 0; i < 100 && ::kill(collector, 0) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_NE(::kill(collector, 0), 0) << "the collector outlived SIGKILL";
    // The tasks train on while nobody collects (the first task's stream grows past
    // what the database holds); a writer opening the database then records the dead
    // collector's runs interrupted.
    const size_t collected = databaseRows(runs[0].id).size();
    ASSERT_TRUE(test::eventually(
        [&] {
            try {  // its last line may be half written
                return streamRows(slurmDir(id) / "task-0.attempt-0.jsonl").size() > collected;
            } catch (const std::exception&) {
                return false;
            }
        },
        test::kPatience, std::chrono::milliseconds(100)))
        << "the first task did not train on";
    const int64_t steps_then = Database::open(db_, Database::Mode::ReadOnly)->stepCount(runs[0].id);
    {
        auto db = Database::open(db_);
        for (const auto& r : db->runs(id)) {
            EXPECT_EQ(r.status, RunStatus::Interrupted) << "run " << r.id;
        }
    }
    const std::string idText = std::to_string(id);
    const auto resumed = test::shell(kCli + " --db " + db_ + " launch --resume --experiment " +
                                     idText + " </dev/null 2>&1");
    ASSERT_EQ(resumed.code, 0) << resumed.out;
    const json again = json::parse(resumed.out, nullptr, false);
    ASSERT_FALSE(again.is_discarded()) << resumed.out;
    EXPECT_EQ(again.value("resumed", false), true);
    EXPECT_EQ(again.value("slurm_job_id", ""), launched.value("slurm_job_id", ""));
    const int pid = again.value("pid", 0);
    ASSERT_GT(pid, 0);
    EXPECT_NE(pid, collector);
    // The runs its death left interrupted read as training (or queued) again.
    for (const auto& r : Database::open(db_, Database::Mode::ReadOnly)->runs(id)) {
        EXPECT_NE(r.status, RunStatus::Interrupted) << "run " << r.id << ": " << r.error;
    }
    // A second collector beside the living one is refused, naming it.
    const auto second = cli("launch --resume --experiment " + idText + " 2>&1");
    EXPECT_EQ(second.code, 2) << second.out;
    EXPECT_NE(second.out.find("pid " + std::to_string(pid)), std::string::npos) << second.out;
    const json job = waitEnded(id, 120);
    EXPECT_EQ(job.value("exit_code", -1), 0)
        << readText(db_ + ".jobs/" + std::to_string(id) + ".log");
    EXPECT_EQ(job.value("pid", 0), pid);
    runs = Database::open(db_, Database::Mode::ReadOnly)->runs(id);
    ASSERT_EQ(runs.size(), 2u);  // a resumed collector adds no run
    for (size_t i = 0; i < runs.size(); ++i) {
        EXPECT_EQ(runs[i].status, RunStatus::Finished) << runs[i].error;
        EXPECT_EQ(runs[i].last_step, runs[i].planned_steps);
        EXPECT_FALSE(runs[i].started_at.empty());
        const auto streamed =
            streamRows(slurmDir(id) / ("task-" + std::to_string(i) + ".attempt-0.jsonl"));
        ASSERT_FALSE(streamed.empty());
        EXPECT_EQ(databaseRows(runs[i].id), streamed) << "run " << runs[i].id;
    }
    EXPECT_GT(static_cast<int64_t>(databaseRows(runs[0].id).size()), steps_then);
    // Started again once it has ended, it reads the streams again and adds nothing.
    const auto after = test::shell(kCli + " --db " + db_ + " launch --resume --experiment " +
                                   idText + " </dev/null 2>&1");
    ASSERT_EQ(after.code, 0) << after.out;
    EXPECT_EQ(waitEnded(id, 60).value("exit_code", -1), 0);
    for (const auto& r : Database::open(db_, Database::Mode::ReadOnly)->runs(id)) {
        EXPECT_EQ(r.status, RunStatus::Finished) << r.error;
        EXPECT_EQ(databaseRows(r.id),
                  streamRows(slurmDir(id) / ("task-" + std::to_string(r.id == runs[0].id ? 0 : 1) +
                                             ".attempt-0.jsonl")));
    }
}

TEST_F(SlurmCli, ACollectorKilledAfterARequeueIsStartedAgainWithoutAThirdRun) {
    const json launched = launch(kSpec + " --micro-steps 1500");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    const int64_t first = Database::open(db_, Database::Mode::ReadOnly)->runs(id).at(0).id;
    waitSteps(first, 20, 120);
    const auto requeued =
        test::shell("scontrol requeue " + launched.value("slurm_job_id", "") + "_0");
    ASSERT_EQ(requeued.code, 0) << requeued.out;
    // Killed once it has seen the requeue and added the new attempt's run.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (Database::open(db_, Database::Mode::ReadOnly)->runs(id).size() < 2 &&
           std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(::kill(launched.value("pid", 0), SIGKILL), 0);
    const auto resumed = cli("launch --resume --experiment " + std::to_string(id) + " 2>&1");
    ASSERT_EQ(resumed.code, 0) << resumed.out;
    EXPECT_EQ(waitEnded(id, 120).value("exit_code", -1), 0)
        << readText(db_ + ".jobs/" + std::to_string(id) + ".log");
    const auto runs = Database::open(db_, Database::Mode::ReadOnly)->runs(id);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].status, RunStatus::Interrupted);
    EXPECT_NE(runs[0].error.find("requeued"), std::string::npos) << runs[0].error;
    EXPECT_EQ(runs[1].status, RunStatus::Finished) << runs[1].error;
    EXPECT_EQ(databaseRows(runs[0].id), streamRows(slurmDir(id) / "task-0.attempt-0.jsonl"));
    EXPECT_EQ(databaseRows(runs[1].id), streamRows(slurmDir(id) / "task-0.attempt-1.jsonl"));
}

TEST(SlurmResume, ResumingALocalJobOrAnUnknownExperimentIsRefusedInWords) {
    const fs::path dir =
        fs::temp_directory_path() / ("ampbench-slurm-resume-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string cli = kCli + " --db " + (dir / "bench.db").string() + " ";
    const auto none = test::shell(cli + "launch --resume --experiment 7 </dev/null 2>&1");
    EXPECT_EQ(none.code, 5) << none.out;
    EXPECT_NE(none.out.find("no launched job for experiment 7"), std::string::npos) << none.out;
    const auto mixed =
        test::shell(cli + "launch --resume --experiment 7 --seeds 2 </dev/null 2>&1");
    EXPECT_EQ(mixed.code, 2) << mixed.out;
    // A job of this machine trains inside itself: there is no stream to collect.
    const auto local = test::shell(cli + "launch " + kSpec + " --micro-steps 20 </dev/null");
    ASSERT_EQ(local.code, 0) << local.out;
    const json j = json::parse(local.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << local.out;
    const auto resumed =
        test::shell(cli + "launch --resume --experiment " +
                    std::to_string(j.value("experiment_id", 0)) + " </dev/null 2>&1");
    EXPECT_EQ(resumed.code, 2) << resumed.out;
    EXPECT_NE(resumed.out.find("launched on this machine, not with --slurm"), std::string::npos)
        << resumed.out;
    test::shell(cli + "cancel --experiment " + std::to_string(j.value("experiment_id", 0)) +
                " </dev/null >/dev/null 2>&1");
    if (!::testing::Test::HasFailure()) {
        fs::remove_all(dir);
    }
}

TEST_F(SlurmCli, APendingArraySaysWhyAndACancelBeforeItStartsLeavesItsRunsCancelled) {
    // Held at submission (an sbatch option passed as it is): pending, reason JobHeldUser.
    const json launched = launch(kSpec + " --micro-steps 100 --sbatch-option=--hold");
    const int64_t id = launched.value("experiment_id", 0);
    ASSERT_GT(id, 0);
    json entry;
    const auto until = std::chrono::steady_clock::now() + test::kPatience;
    while (std::chrono::steady_clock::now() < until) {
        const json status = json::parse(
            cli("status --experiment " + std::to_string(id) + " --json").out, nullptr, false);
        ASSERT_FALSE(status.is_discarded());
        entry = status["jobs"][0];
        if (entry.value("state", "") == "pending") {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    EXPECT_EQ(entry.value("state", ""), "pending") << entry.dump();
    EXPECT_EQ(entry.value("reason", ""), "JobHeldUser") << entry.dump();
    EXPECT_EQ(entry["runs"][0]["status"], "queued");
    EXPECT_EQ(entry["runs"][0]["slurm"]["state"], "PENDING");
    const auto text = cli("status --experiment " + std::to_string(id));
    EXPECT_NE(text.out.find("[Slurm task 0: PENDING, JobHeldUser]"), std::string::npos) << text.out;
    const auto cancelled = cli("cancel --experiment " + std::to_string(id) + " --timeout 60");
    EXPECT_EQ(cancelled.code, 0) << cancelled.out;
    waitEnded(id, 60);
    const auto row = Database::open(db_, Database::Mode::ReadOnly)->runs(id).at(0);
    EXPECT_EQ(row.status, RunStatus::Cancelled);
    EXPECT_EQ(row.error, "cancelled (scancel) before its task started");
}

TEST_F(SlurmCli, SbatchRefusingTheArrayIsShownInSlurmsWordsAndNothingStaysQueued) {
    const auto r =
        cli("launch --slurm " + kSpec + " --micro-steps 100 --partition no-such-partition");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("sbatch refused the job array"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("invalid partition"), std::string::npos) << r.out;  // Slurm's own words
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    const auto experiments = db->experiments();
    ASSERT_EQ(experiments.size(), 1u);
    for (const auto& run : db->runs(experiments[0].id)) {
        EXPECT_EQ(run.status, RunStatus::Failed);
        EXPECT_NE(run.error.find("invalid partition"), std::string::npos) << run.error;
    }
}

namespace slurm = ampbench::launch::slurm;
using ampbench::launch::shellQuote;

TEST(SlurmOutput, SqueueAndSacctLinesReadAsTheTasksTheyName) {
    const auto q = slurm::parseSqueue(
        "12_0|0|RUNNING|None|node7|1:00:00|0:42\n12_[1-3]|1-3|PENDING|Resources||1:00:00|0:00\n"
        "13_0|0|RUNNING|None|node8|1:00:00|0:01\n",
        "12");
    ASSERT_EQ(q.size(), 4u);  // job 13 is another job
    EXPECT_EQ(q.at(0).state, "RUNNING");
    EXPECT_EQ(q.at(0).node, "node7");
    EXPECT_EQ(q.at(3).state, "PENDING");
    EXPECT_EQ(q.at(3).reason, "Resources");
    const auto a = slurm::parseSacct(
        "12_0|CANCELLED by 0|None|node7|01:00:00|00:00:09|0:15\n12_[4-5%2]|PENDING|Priority|None "
        "assigned|01:00:00|00:00:00|0:0\n",
        "12");
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a.at(0).state, "CANCELLED");
    EXPECT_EQ(a.at(0).exit_code, "0:15");
    EXPECT_EQ(a.at(5).reason, "Priority");
    EXPECT_TRUE(slurm::terminalState("TIMEOUT"));
    EXPECT_FALSE(slurm::terminalState("COMPLETING"));
    EXPECT_FALSE(slurm::terminalState("REQUEUED"));
}

TEST(SlurmOutput, PathsInTheBatchScriptStayOneShellWord) {
    EXPECT_EQ(shellQuote("/data/it's here/$(rm -rf ~)"), "'/data/it'\\''s here/$(rm -rf ~)'");
    // The shell reads the quoted word back as it was, nothing run, nothing split.
    const fs::path script =
        fs::temp_directory_path() / ("ampbench-quote-" + std::to_string(::getpid()) + ".sh");
    std::ofstream(script) << "printf '%s' " << shellQuote("a b'c;$(echo x) \"$HOME\"") << "\n";
    const auto r = test::shell("sh " + script.string());
    fs::remove(script);
    EXPECT_EQ(r.out, "a b'c;$(echo x) \"$HOME\"");
    EXPECT_EQ(slurm::parsableJobId("4242\n"), "4242");
    EXPECT_EQ(slurm::parsableJobId("4242;cluster\n"), "4242");
    EXPECT_EQ(slurm::parsableJobId("sbatch: error: nope\n"), "");
}

TEST(SlurmCliWithoutSlurm, AHostWithoutSlurmsToolsIsNamedAsSuch) {
    const fs::path dir =
        fs::temp_directory_path() / ("ampbench-noslurm-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto r = test::shell("env PATH=" + dir.string() + " " + kCli + " --db " +
                               (dir / "bench.db").string() + " launch --slurm " + kSpec +
                               " --micro-steps 10 </dev/null");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("this host has no Slurm client tools: `sbatch` is not on PATH"),
              std::string::npos)
        << r.out;
    const auto flags = test::shell(kCli + " --db " + (dir / "bench.db").string() + " launch " +
                                   kSpec + " --partition gpu </dev/null");
    EXPECT_EQ(flags.code, 2) << flags.out;
    EXPECT_NE(flags.out.find("add --slurm"), std::string::npos) << flags.out;
    fs::remove_all(dir);
}

}  // namespace
