// Remote runs end to end without a network: `launch`, `status`, `cancel` and
// `tail | ingest` through a stand-in for ssh (fake-ssh.sh runs the remote command
// here), with the transport killed mid-run and resumed with --since.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "Hold.h"
#include "Shell.h"
#include "StoredSteps.h"
#include "core/store/Database.h"
#include "core/stream/Ingestor.h"
#include "core/stream/RecordStream.h"

namespace fs = std::filesystem;
using ampbench::run::RunStatus;
using ampbench::store::Database;
using nlohmann::json;
namespace test = ampbench::test;
namespace stream = ampbench::stream;

namespace {

const std::string kCli = AMPBENCH_CLI_PATH;
const std::string kSsh = AMPBENCH_FAKE_SSH;
// A small experiment that trains for some seconds on a CPU: three arms, one seed.
const std::string kSpec =
    "--dataset synthetic-images --model mlp --width 32 --micro-batch 32 --seeds 1 "
    "--eval-interval 100 --eval-batches 2";

class RemoteCliTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ampbench-remote-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        server_ = (dir_ / "server.db").string();
        local_ = (dir_ / "local.db").string();
    }
    void TearDown() override {
        // A job still training (a failed assertion) must not outlive the test.
        for (int64_t id : launched_) {
            test::shell(kCli + " --db " + server_ + " cancel --experiment " + std::to_string(id));
        }
        fs::remove_all(dir_);
    }
    /// `ampbench-cli --db server.db ARGS` on the "server", through the transport.
    test::ShellResult remote(const std::string& args, const std::string& prefix = "") {
        return test::shell(prefix + kSsh + " -o BatchMode=yes -p 2222 me@gpu '" + kCli + " --db " +
                           server_ + " " + args + "'");
    }
    int64_t launch(const std::string& flags) {
        auto r = remote("launch " + flags);
        EXPECT_EQ(r.code, 0) << r.out;
        const auto line = r.out.substr(r.out.rfind('{'));
        const json j = json::parse(line);
        EXPECT_GT(j.value("pid", 0), 0);
        EXPECT_TRUE(fs::exists(j.value("log", std::string()))) << line;
        launched_.push_back(j.at("experiment_id").get<int64_t>());
        pids_[launched_.back()] = j.value("pid", 0);
        return launched_.back();
    }
    /// tail | ingest, as the desktop runs it; `since`: RUN:SEQ words.
    test::ShellResult follow(int64_t id, const std::string& since, const std::string& prefix = "") {
        return test::shell(prefix + kSsh + " me@gpu '" + kCli + " --db " + server_ +
                           " tail --experiment " + std::to_string(id) +
                           (since.empty() ? "" : " --since " + since) + " --follow --stream' | " +
                           kCli + " --db " + local_ + " ingest - --origin gpu");
    }
    /// The steps the server's first run of experiment `id` has stored (0 while none).
    int64_t firstRunSteps(int64_t id) const { return test::firstRunSteps(server_, id); }
    json status(int64_t id) {
        auto r = test::shell(kCli + " --db " + server_ + " status --json --experiment " +
                             std::to_string(id));
        EXPECT_EQ(r.code, 0) << r.out;
        return json::parse(r.out).at("jobs").at(0);
    }
    /// What the desktop's copy holds of experiment `id`: the rows (summed over its
    /// runs) and the RUN:SEQ words that resume after them. Nothing while it cannot
    /// be read yet (ingest has not created it).
    std::pair<int64_t, std::string> held(int64_t id) const {
        int64_t rows = 0;
        std::string since;
        try {
            if (!fs::exists(local_)) {
                return {0, ""};
            }
            auto local = Database::open(local_, Database::Mode::ReadOnly);
            auto server = Database::open(server_, Database::Mode::ReadOnly);
            for (const auto& r : server->runs(id)) {
                if (auto seq = stream::lastSeqFromOrigin(*local, "gpu", r.id); seq && *seq > 0) {
                    since += (since.empty() ? "" : " ") + std::to_string(r.id) + ":" +
                             std::to_string(*seq);
                    rows += *seq;
                }
            }
        } catch (const std::exception&) {
            return {0, ""};
        }
        return {rows, since};
    }
    fs::path dir_;
    std::string server_, local_;
    std::vector<int64_t> launched_;
    std::map<int64_t, pid_t> pids_;  ///< the job of each launched experiment, as launch said
};

/// A run's rows as the stream writes them (run id left out), in seq order.
std::vector<std::string> rowsOf(const Database& db, int64_t run) {
    std::vector<std::string> rows;
    for (auto& r : db.recordsSince(run, 0)) {
        rows.push_back(stream::encode(stream::Record{stream::RowRecord{0, r}}));
    }
    return rows;
}

}  // namespace

TEST_F(RemoteCliTest, DroppedTransportResumesAndEndsRowForRowEqual) {
    const int64_t id = launch(kSpec + " --micro-steps 300");
    // The job is held still from its first stored steps until the link has dropped, so
    // the drop comes mid-run however short the run and however fast the machine.
    const pid_t job = pids_[id];
    ASSERT_GT(job, 0);
    ASSERT_TRUE(test::readyOrEnded(job, [&] { return firstRunSteps(id) > 0; }));
    test::Hold hold(job);
    ASSERT_TRUE(hold.holds()) << "the job ended before the link could drop";
    // The link drops once rows have arrived, mid-run: the transport (ssh and all it
    // runs, a session of its own) is killed, ingest sees the end.
    const std::string pidFile = (dir_ / "transport.pid").string();
    std::atomic<bool> over{false};
    std::thread link([&] {
        follow(id, "", "setsid sh -c 'echo $$ > " + pidFile + "; exec \"$@\"' sh ");
        over = true;
    });
    const bool arrived = test::eventually([&] { return over || held(id).first > 0; });
    pid_t transport = 0;
    std::ifstream(pidFile) >> transport;
    if (transport > 0) {
        ::kill(-transport, SIGKILL);
    }
    link.join();
    ASSERT_TRUE(arrived) << "no row arrived within " << test::kPatience.count() << " s";
    const auto [rows, since] = held(id);
    ASSERT_GT(rows, 0) << "nothing arrived before the drop";
    EXPECT_EQ(status(id)["state"], "running") << "the drop came after the end";
    hold.release();
    // Reconnect after the last row held here, and follow to the end.
    auto r = follow(id, since);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(status(id)["state"], "finished");

    auto local = Database::open(local_, Database::Mode::ReadOnly);
    auto server = Database::open(server_, Database::Mode::ReadOnly);
    const auto serverRuns = server->runs(id);
    ASSERT_EQ(serverRuns.size(), 3u);
    for (const auto& s : serverRuns) {
        auto mine = local->runFromOrigin("gpu", s.id);
        ASSERT_TRUE(mine) << "run " << s.id << " did not arrive";
        const auto l = local->run(*mine);
        EXPECT_EQ(l->status, RunStatus::Finished);
        EXPECT_EQ(l->last_step, s.last_step);
        EXPECT_EQ(l->origin, "gpu");
        const auto want = rowsOf(*server, s.id);
        const auto got = rowsOf(*local, *mine);
        ASSERT_EQ(got.size(), want.size()) << "run " << s.id;
        EXPECT_EQ(got, want) << "run " << s.id;
        // No gaps, no duplicates: seq 1 … N.
        const auto seqs = local->recordsSince(*mine, 0);
        for (size_t i = 0; i < seqs.size(); ++i) {
            ASSERT_EQ(seqs[i].seq, static_cast<int64_t>(i + 1));
        }
        EXPECT_EQ(local->stepCount(*mine), server->stepCount(s.id));
    }
}

TEST_F(RemoteCliTest, CancelThroughTheTransportEndsRunsCancelledWithRowsKept) {
    const int64_t id = launch(kSpec + " --micro-steps 100000");
    EXPECT_EQ(status(id)["state"], "running");
    // Wait until the first run has recorded steps.
    // Watched in the database, not through `status` (a CLI started every 100 ms).
    ASSERT_TRUE(test::eventually([&] { return firstRunSteps(id) > 20; }, test::kPatience,
                                 std::chrono::milliseconds(100)))
        << status(id).dump();
    EXPECT_GT(status(id)["runs"][0].value("step", 0), 20);
    auto c = remote("cancel --experiment " + std::to_string(id));
    ASSERT_EQ(c.code, 0) << c.out;
    EXPECT_NE(c.out.find("cancelled"), std::string::npos) << c.out;
    const json s = status(id);
    EXPECT_EQ(s["state"], "cancelled");
    EXPECT_EQ(s["exit_code"], 130);
    for (const auto& run : s["runs"]) {
        EXPECT_EQ(run["status"], "cancelled") << run.dump();
    }
    auto server = Database::open(server_, Database::Mode::ReadOnly);
    const auto first = server->runs(id).front();
    EXPECT_GT(server->stepCount(first.id), 20);
    EXPECT_EQ(server->stepCount(first.id), first.last_step);
    // The desktop's copy ends the same.
    ASSERT_EQ(follow(id, "").code, 0);
    auto local = Database::open(local_, Database::Mode::ReadOnly);
    const auto mine = local->run(*local->runFromOrigin("gpu", first.id));
    EXPECT_EQ(mine->status, RunStatus::Cancelled);
    EXPECT_EQ(local->stepCount(mine->id), server->stepCount(first.id));

    auto again = remote("cancel --experiment " + std::to_string(id));
    EXPECT_EQ(again.code, 0);
    EXPECT_NE(again.out.find("already ended: cancelled"), std::string::npos) << again.out;
    auto none = remote("cancel --experiment 99");
    EXPECT_EQ(none.code, 5);
    EXPECT_NE(none.out.find("no launched job for experiment 99"), std::string::npos) << none.out;
}

TEST_F(RemoteCliTest, KilledJobShowsInterrupted) {
    const int64_t id = launch(kSpec + " --micro-steps 100000");
    const json s = status(id);
    ASSERT_EQ(s["state"], "running");
    ASSERT_EQ(::kill(s["pid"].get<int>(), SIGKILL), 0);
    test::eventually([&] { return status(id)["state"] != "running"; }, test::kPatience,
                     std::chrono::milliseconds(100));
    EXPECT_EQ(status(id)["state"], "interrupted");
    auto text = test::shell(kCli + " --db " + server_ + " status");
    EXPECT_NE(text.out.find("interrupted"), std::string::npos) << text.out;
    auto c = remote("cancel --experiment " + std::to_string(id));
    EXPECT_NE(c.out.find("already ended: interrupted"), std::string::npos) << c.out;
    launched_.clear();
}

TEST_F(RemoteCliTest, LaunchThatCannotTrainSaysWhyAndFails) {
    auto r = remote("launch --data " + (dir_ / "absent").string());
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_NE(r.out.find("does not exist"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("experiment_id"), std::string::npos) << r.out;
    auto bad = remote("launch --micro-batch 0");
    EXPECT_EQ(bad.code, 2) << bad.out;
}

TEST_F(RemoteCliTest, LaunchReadsTheSpecFromStdinAndLivesOnAfterTheSession) {
    // The spec as the GUI sends it: JSON on stdin through the transport.
    auto dry = test::shell(kCli + " run --dry-run " + kSpec + " --micro-steps 300 --name piped");
    ASSERT_EQ(dry.code, 0) << dry.out;
    const std::string spec = dir_ / "spec.json";
    { std::ofstream(spec) << dry.out.substr(dry.out.find('{')); }
    auto r = test::shell(kSsh + " me@gpu '" + kCli + " --db " + server_ +
                         " launch --config-stdin' < " + spec);
    ASSERT_EQ(r.code, 0) << r.out;
    const json j = json::parse(r.out.substr(r.out.rfind('{')));
    const int64_t id = j["experiment_id"];
    launched_.push_back(id);
    // The transport exited; the job trains on in a session of its own, not leading it
    // (so it never gets a terminal back).
    const int pid = j["pid"];
    EXPECT_NE(::getsid(pid), ::getsid(0));
    EXPECT_NE(::getsid(pid), pid);
    auto server = Database::open(server_, Database::Mode::ReadOnly);
    EXPECT_EQ(server->experiment(id)->name, "piped");
    // It trains to its end, whenever that is: nothing went with the transport. (Its
    // process is watched, not `status`: a CLI started every 50 ms would take a core.)
    ASSERT_TRUE(test::readyOrEnded(pid, [] { return false; }));
    EXPECT_EQ(status(id)["state"], "finished");
}
