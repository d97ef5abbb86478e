// End to end: the user's training script detached (`launch --script`) and packed
// (`runs_per_gpu` scripts at once). A launched script experiment is followed by
// `status` to its end with its rows read back; `cancel` stops every script process
// of it, packed ones included, and keeps their rows; a killed script leaves its run
// interrupted with its rows; `launch --script --slurm` is refused naming what works.
// Packed runs overlap in time, each with its own rows in order and the shared-device
// warning, which runs trained one at a time never get. The scripts need no PyTorch.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "Shell.h"
#include "core/store/Database.h"

namespace fs = std::filesystem;
using ampbench::run::EventKind;
using ampbench::run::RunStatus;
using ampbench::store::Database;
using nlohmann::json;
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

class LaunchScript : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ampbench-launch-script-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "pids");
        db_ = (dir_ / "runs.db").string();
    }
    void TearDown() override {
        // A script a failed test left running is ended by its pid file, one by one.
        for (const auto& e : fs::directory_iterator(dir_ / "pids")) {
            const pid_t pid = pidIn(e.path());
            if (pid > 0) {
                ::kill(pid, SIGKILL);
            }
        }
        fs::remove_all(dir_);
    }
    test::ShellResult cli(const std::string& args) const {
        return test::shell(kCli + " --db " + db_ + " " + args);
    }
    std::string script(const std::string& name) const {
        return " --script " + kScripts + "/" + name + " --python " + python();
    }
    /// `launch` of a script; the experiment's id from its JSON line.
    int64_t launch(const std::string& args) const {
        const auto r = cli("launch" + args);
        EXPECT_EQ(r.code, 0) << r.out;
        std::istringstream lines(r.out);
        std::string line;
        while (std::getline(lines, line)) {
            const json j = json::parse(line, nullptr, false);
            if (!j.is_discarded() && j.contains("experiment_id")) {
                return j["experiment_id"].get<int64_t>();
            }
        }
        ADD_FAILURE() << "no experiment_id in: " << r.out;
        return 0;
    }
    /// `status --json` of experiment `id` once it is no longer running.
    json waitUntilEnded(int64_t id) const {
        json job;
        const bool ended = test::eventually(
            [&] {
                const auto r = cli("status --json --experiment " + std::to_string(id));
                job = json::parse(r.out, nullptr, false);
                return !job.is_discarded() && job["jobs"][0]["state"] != "running";
            },
            test::kPatience, std::chrono::milliseconds(100));
        if (ended) {
            return job["jobs"][0];
        }
        ADD_FAILURE() << "experiment " << id << " still running: " << job.dump();
        return job;
    }
    /// Waits until `count` runs each recorded at least `steps` steps.
    bool waitForSteps(size_t count, int64_t steps) const {
        return test::eventually(
            [&] {
                if (!fs::exists(db_)) {
                    return false;
                }
                auto db = open();
                size_t ready = 0;
                for (const auto& r : db->runs()) {
                    ready += static_cast<int64_t>(db->steps(r.id).size()) >= steps ? 1 : 0;
                }
                return ready >= count;
            },
            test::kPatience, std::chrono::milliseconds(100));
    }
    static pid_t pidIn(const fs::path& file) {
        std::ifstream in(file);
        long pid = 0;
        in >> pid;
        return static_cast<pid_t>(pid);
    }
    std::vector<pid_t> scriptPids() const {
        std::vector<pid_t> pids;
        for (const auto& e : fs::directory_iterator(dir_ / "pids")) {
            pids.push_back(pidIn(e.path()));
        }
        return pids;
    }
    /// Whether `pid` still runs (a zombie does not: it has ended).
    static bool alive(pid_t pid) {
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string text;
        std::getline(stat, text);
        const size_t close = text.rfind(')');
        return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
    }
    std::unique_ptr<Database> open() const { return Database::open(db_, Database::Mode::ReadOnly); }

    fs::path dir_;
    std::string db_;
};

/// The first event whose message is `message`, or null.
const ampbench::run::EventRecord* findEvent(const std::vector<ampbench::run::EventRecord>& events,
                                            const std::string& message) {
    for (const auto& e : events) {
        if (e.message == message) {
            return &e;
        }
    }
    return nullptr;
}

bool hasSharedWarning(const std::vector<ampbench::run::EventRecord>& events) {
    return std::any_of(events.begin(), events.end(), [](const auto& e) {
        return e.kind == EventKind::Warning && e.message.find("shared") != std::string::npos;
    });
}

TEST_F(LaunchScript, RunsDetachedAndStatusFollowsItToFinishedWithEveryRowRecorded) {
    const int64_t id =
        launch(script("timed_span.py") + " --arm fp32=fp32 --seeds 1 2 --device cpu");
    ASSERT_GT(id, 0);
    const json job = waitUntilEnded(id);
    EXPECT_EQ(job["state"], "finished") << job.dump();
    EXPECT_EQ(job.value("exit_code", -1), 0) << job.dump();
    ASSERT_EQ(job["runs"].size(), 2u) << job.dump();
    for (const auto& r : job["runs"]) {
        EXPECT_EQ(r["status"], "finished") << r.dump();
        EXPECT_EQ(r["step"], 12) << r.dump();
    }
    auto db = open();
    const auto stored = json::parse(db->experiment(id)->spec_json);
    EXPECT_EQ(stored["model"]["name"], "script") << "the job trained the script, not a model";
    for (const auto& run : db->runs(id)) {
        EXPECT_EQ(run.status, RunStatus::Finished) << run.error;
        const auto steps = db->steps(run.id);
        ASSERT_EQ(steps.size(), 12u);
        for (size_t i = 0; i < steps.size(); ++i) {
            EXPECT_EQ(steps[i].step, static_cast<int64_t>(i + 1));
            EXPECT_EQ(steps[i].loss, static_cast<double>(run.id));
        }
        EXPECT_NE(findEvent(db->events(run.id), "ended"), nullptr);
    }
}

TEST_F(LaunchScript, CancelStopsEveryPackedScriptAndKeepsTheirRowsCancelled) {
    // Two scripts at once on the CPU, a third queued behind them.
    const int64_t id =
        launch(script("records_until_stopped.py") + " --script-arg " + (dir_ / "pids").string() +
               " --arm fp32=fp32 --seeds 1 2 3 --runs-per-gpu 2 --device cpu");
    ASSERT_GT(id, 0);
    ASSERT_TRUE(waitForSteps(2, 3)) << "both packed scripts record";
    const auto pids = scriptPids();
    ASSERT_EQ(pids.size(), 2u) << "two scripts at once, not one and not three";
    const auto r = cli("cancel --experiment " + std::to_string(id) + " --timeout 20");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("cancelled"), std::string::npos) << r.out;
    for (const pid_t pid : pids) {
        EXPECT_FALSE(alive(pid)) << "script pid " << pid << " outlived the cancel";
    }
    const json job = waitUntilEnded(id);
    EXPECT_EQ(job["state"], "cancelled") << job.dump();
    EXPECT_EQ(job.value("exit_code", -1), 130) << job.dump();
    auto db = open();
    const auto runs = db->runs(id);
    ASSERT_EQ(runs.size(), 3u);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(runs[i].status, RunStatus::Cancelled) << runs[i].error;
        EXPECT_GE(db->steps(runs[i].id).size(), 3u) << "the cancelled run keeps its rows";
        EXPECT_EQ(runs[i].last_step, static_cast<int64_t>(db->steps(runs[i].id).size()));
    }
    EXPECT_EQ(runs[2].status, RunStatus::Cancelled) << "the queued run never started";
    EXPECT_TRUE(db->steps(runs[2].id).empty());
}

TEST_F(LaunchScript, AKilledScriptLeavesItsRunInterruptedWithItsRows) {
    const int64_t id = launch(script("records_then_killed.py") + " --arm fp32=fp32 --seeds 1");
    ASSERT_GT(id, 0);
    const json job = waitUntilEnded(id);
    ASSERT_EQ(job["runs"].size(), 1u) << job.dump();
    EXPECT_EQ(job["runs"][0]["status"], "interrupted") << job.dump();
    EXPECT_NE(job["runs"][0]["error"].get<std::string>().find("signal 9"), std::string::npos)
        << job.dump();
    EXPECT_EQ(job["state"], "interrupted") << job.dump();
    EXPECT_EQ(job.value("exit_code", -1), 1) << "the job says that a run did not finish";
    auto db = open();
    EXPECT_EQ(db->steps(db->runs(id).front().id).size(), 4u) << "its 4 steps are kept";
}

// A desktop launches on a remote host with the spec on stdin: its model is the script.
TEST_F(LaunchScript, ASpecOnStdinWhoseModelIsAScriptTrainsTheScriptDetached) {
    const auto dry = cli("run --arm fp32=fp32 --seeds 1 2 --device cpu --dry-run");
    ASSERT_EQ(dry.code, 0) << dry.out;
    json spec = json::parse(dry.out);
    spec["model"]["name"] = "script";
    spec["model"]["file"] = kScripts + "/timed_span.py";
    spec["model"]["python"] = python();
    spec["runs_per_gpu"] = 2;
    std::ofstream(dir_ / "spec.json") << spec.dump();
    const int64_t id = launch(" --config-stdin < " + (dir_ / "spec.json").string());
    ASSERT_GT(id, 0);
    const json job = waitUntilEnded(id);
    EXPECT_EQ(job["state"], "finished") << job.dump();
    auto db = open();
    for (const auto& run : db->runs(id)) {
        EXPECT_EQ(db->steps(run.id).size(), 12u) << "run " << run.id << ": " << run.error;
        EXPECT_TRUE(hasSharedWarning(db->events(run.id))) << "packed as the spec asks";
    }
}

TEST_F(LaunchScript, SlurmIsRefusedNamingWhatTrainsAScriptInstead) {
    const auto r = cli("launch" + script("timed_span.py") + " --arm fp32=fp32 --slurm");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("launch --script"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("run --script"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(db_)) << "nothing was planned";
}

TEST_F(LaunchScript, AMissingScriptIsNamedBeforeAnythingIsLaunched) {
    const auto r = cli("launch --script " + (dir_ / "nope.py").string() + " --arm fp32=fp32");
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_NE(r.out.find("nope.py: no such file"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(db_ + ".jobs")) << "no job was started";
}

/// Each run's span (began, ended) from its events.
std::pair<double, double> spanOf(const Database& db, int64_t run_id) {
    const auto events = db.events(run_id);
    const auto* began = findEvent(events, "began");
    const auto* ended = findEvent(events, "ended");
    EXPECT_TRUE(began && ended) << "run " << run_id;
    return {began ? began->value : 0.0, ended ? ended->value : 0.0};
}

TEST_F(LaunchScript, PackedScriptRunsOverlapInTimeEachWithItsOwnRowsInOrder) {
    // Each script ends only once both have begun (a file each in spans/): packed, they
    // overlap however the two cores are shared; one after the other, they could not.
    fs::create_directories(dir_ / "spans");
    const auto r =
        cli("run" + script("timed_span.py") + " --script-arg " + (dir_ / "spans").string() +
            " --script-arg 2 --arm fp32=fp32 --seeds 1 2 --runs-per-gpu 2 --device cpu -q");
    ASSERT_EQ(r.code, 0) << r.out;
    auto db = open();
    const auto runs = db->runs();
    ASSERT_EQ(runs.size(), 2u);
    const auto a = spanOf(*db, runs[0].id);
    const auto b = spanOf(*db, runs[1].id);
    EXPECT_LT(std::max(a.first, b.first), std::min(a.second, b.second))
        << "the two scripts trained at the same time";
    for (const auto& run : runs) {
        EXPECT_EQ(run.status, RunStatus::Finished) << run.error;
        const auto steps = db->steps(run.id);
        ASSERT_EQ(steps.size(), 12u) << "run " << run.id;
        for (size_t i = 0; i < steps.size(); ++i) {
            EXPECT_EQ(steps[i].step, static_cast<int64_t>(i + 1)) << "in order";
            EXPECT_EQ(steps[i].loss, static_cast<double>(run.id)) << "its own rows only";
        }
        EXPECT_TRUE(hasSharedWarning(db->events(run.id))) << "the shared CPU is said";
    }
}

TEST_F(LaunchScript, ScriptRunsOneAtATimeNeitherOverlapNorClaimToShare) {
    const auto r =
        cli("run" + script("timed_span.py") + " --arm fp32=fp32 --seeds 1 2 --device cpu -q");
    ASSERT_EQ(r.code, 0) << r.out;
    auto db = open();
    const auto runs = db->runs();
    ASSERT_EQ(runs.size(), 2u);
    const auto a = spanOf(*db, runs[0].id);
    const auto b = spanOf(*db, runs[1].id);
    EXPECT_LE(a.second, b.first) << "the second started after the first ended";
    for (const auto& run : runs) {
        EXPECT_FALSE(hasSharedWarning(db->events(run.id))) << "run " << run.id;
    }
}

}  // namespace
