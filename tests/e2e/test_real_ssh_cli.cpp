// Remote runs through a real OpenSSH server (RealSsh.h: Debian's sshd on 127.0.0.1,
// its own keys and configs): launch, status, tail | ingest to the end row for row,
// a tail resumed after the connection serving it is killed, cancel, a refused key,
// a missing remote CLI and a remote database whose path holds spaces and quotes.
// When sshd cannot start, every test fails with its log.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "Hold.h"
#include "RealSsh.h"
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
const std::string kSpec =
    "--dataset synthetic-images --model mlp --width 32 --micro-batch 32 --seeds 1 "
    "--eval-interval 100 --eval-batches 2";

/// One server for the suite: started before the first test, stopped after the last,
/// and checked to be gone.
class SshdEnvironment : public ::testing::Environment {
  public:
    static test::RealSshd* server;
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("ampbench-sshd-" + std::to_string(getpid()));
        fs::remove_all(dir_);
        server_ = std::make_unique<test::RealSshd>(dir_);
        server = server_.get();
    }
    void TearDown() override {
        const pid_t pid = server_->pid();
        EXPECT_TRUE(server_->stop()) << "sshd (pid " << pid << ") did not end";
        if (pid > 0) {
            EXPECT_NE(::kill(pid, 0), 0) << "sshd (pid " << pid << ") still runs";
            EXPECT_EQ(server_->running(), "") << "an sshd of the tests is left running";
        }
        server = nullptr;
        server_.reset();
        fs::remove_all(dir_);
    }

  private:
    fs::path dir_;
    std::unique_ptr<test::RealSshd> server_;
};
test::RealSshd* SshdEnvironment::server = nullptr;
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new SshdEnvironment);

/// A run's rows as the stream writes them (run id left out), in seq order.
std::vector<std::string> rowsOf(const Database& db, int64_t run) {
    std::vector<std::string> rows;
    for (auto& r : db.recordsSince(run, 0)) {
        rows.push_back(stream::encode(stream::Record{stream::RowRecord{0, r}}));
    }
    return rows;
}

class RealSshCliTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(SshdEnvironment::server && SshdEnvironment::server->ok())
            << "sshd could not start: "
            << (SshdEnvironment::server ? SshdEnvironment::server->why() : "no fixture");
        ssh_ = SshdEnvironment::server;
        dir_ = fs::temp_directory_path() /
               ("ampbench-real-ssh-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        server_ = (dir_ / "server.db").string();
        local_ = (dir_ / "local.db").string();
    }
    void TearDown() override {
        // A job still training (a failed assertion) must not outlive the test.
        for (int64_t id : launched_) {
            test::shell(kCli + " --db " + test::RealSshd::localQuote(server_) +
                        " cancel --experiment " + std::to_string(id));
        }
        fs::remove_all(dir_);
    }
    /// The remote command line for `ampbench-cli --db SERVER ARGS`, quoted for the
    /// remote shell.
    std::string remoteLine(const std::string& args) const {
        return test::RealSshd::localQuote(kCli) + " --db " + test::RealSshd::localQuote(server_) +
               " " + args;
    }
    test::ShellResult remote(const std::string& args) { return ssh_->ssh(remoteLine(args)); }
    int64_t launch(const std::string& flags) {
        auto r = remote("launch " + flags);
        EXPECT_EQ(r.code, 0) << r.out << ssh_->log();
        const auto brace = r.out.rfind('{');
        if (brace == std::string::npos) {
            ADD_FAILURE() << "launch printed no JSON: " << r.out;
            return 0;
        }
        const json j = json::parse(r.out.substr(brace));
        EXPECT_GT(j.value("pid", 0), 0);
        launched_.push_back(j.at("experiment_id").get<int64_t>());
        pids_[launched_.back()] = j.value("pid", 0);
        return launched_.back();
    }
    /// `ssh HOST 'cli tail ... --follow --stream' | cli ingest`, as the desktop does.
    test::ShellResult follow(int64_t id, const std::string& since) {
        const std::string tail =
            remoteLine("tail --experiment " + std::to_string(id) +
                       (since.empty() ? "" : " --since " + since) + " --follow --stream");
        // In a subshell, so that ssh's own messages are captured too.
        return test::shell("(" + ssh_->transport() + " " + test::RealSshd::localQuote(tail) +
                           " </dev/null | " + kCli + " --db " + test::RealSshd::localQuote(local_) +
                           " ingest - --origin gpu)");
    }
    /// The steps the server's first run of experiment `id` has stored (0 while none).
    int64_t firstRunSteps(int64_t id) const { return test::firstRunSteps(server_, id); }
    json status(int64_t id) {
        auto r = remote("status --json --experiment " + std::to_string(id));
        EXPECT_EQ(r.code, 0) << r.out;
        return json::parse(r.out.substr(r.out.find('{'))).at("jobs").at(0);
    }
    /// RUN:SEQ after the last row held here, for each of the server's runs.
    std::string since(int64_t id, int64_t* held) {
        auto local = Database::open(local_, Database::Mode::ReadOnly);
        auto server = Database::open(server_, Database::Mode::ReadOnly);
        std::string words;
        *held = 0;
        for (const auto& r : server->runs(id)) {
            if (auto seq = stream::lastSeqFromOrigin(*local, "gpu", r.id); seq && *seq > 0) {
                words +=
                    (words.empty() ? "" : " ") + std::to_string(r.id) + ":" + std::to_string(*seq);
                *held += *seq;
            }
        }
        return words;
    }
    /// Every server run is here, ended as there, row for row, seq 1 … N.
    void expectSameRows(int64_t id, RunStatus ended, size_t runs) {
        auto local = Database::open(local_, Database::Mode::ReadOnly);
        auto server = Database::open(server_, Database::Mode::ReadOnly);
        const auto serverRuns = server->runs(id);
        ASSERT_EQ(serverRuns.size(), runs);
        for (const auto& s : serverRuns) {
            auto mine = local->runFromOrigin("gpu", s.id);
            ASSERT_TRUE(mine) << "run " << s.id << " did not arrive";
            const auto l = local->run(*mine);
            EXPECT_EQ(l->status, ended) << "run " << s.id;
            EXPECT_EQ(l->last_step, s.last_step);
            const auto want = rowsOf(*server, s.id);
            const auto got = rowsOf(*local, *mine);
            ASSERT_EQ(got.size(), want.size()) << "run " << s.id;
            EXPECT_EQ(got, want) << "run " << s.id;
            const auto seqs = local->recordsSince(*mine, 0);
            for (size_t i = 0; i < seqs.size(); ++i) {
                ASSERT_EQ(seqs[i].seq, static_cast<int64_t>(i + 1)) << "run " << s.id;
            }
            EXPECT_EQ(local->stepCount(*mine), server->stepCount(s.id));
        }
    }

    test::RealSshd* ssh_ = nullptr;
    fs::path dir_;
    std::string server_, local_;
    std::vector<int64_t> launched_;
    std::map<int64_t, pid_t> pids_;  ///< the job of each launched experiment, as launch said
};

}  // namespace

TEST_F(RealSshCliTest, TailResumedAfterItsConnectionIsKilledEndsRowForRowEqual) {
    const int64_t id = launch(kSpec + " --micro-steps 300");
    ASSERT_GT(id, 0);
    // The job is held still from its first stored steps until the connection has been
    // killed, so the drop comes mid-run however short the run and however fast the machine.
    const pid_t job = pids_[id];
    ASSERT_GT(job, 0);
    ASSERT_TRUE(test::readyOrEnded(job, [&] { return firstRunSteps(id) > 0; }));
    test::Hold hold(job);
    ASSERT_TRUE(hold.holds()) << "the job ended before the connection could be killed";
    EXPECT_EQ(status(id)["state"], "running");
    // Follow in the background; drop the connection once rows have arrived here.
    test::ShellResult first;
    std::thread tail([&] { first = follow(id, ""); });
    int64_t held = 0;
    test::eventually(
        [&] {
            try {
                since(id, &held);
            } catch (const std::exception&) {
                // The local database is not there yet.
            }
            return held > 0;
        },
        test::kPatience, std::chrono::milliseconds(100));
    const int killed = ssh_->killConnections();
    tail.join();
    ASSERT_GT(held, 0) << "nothing arrived over ssh within " << test::kPatience.count()
                       << " s: " << first.out << ssh_->log();
    EXPECT_GE(killed, 1) << "no connection served the tail";
    EXPECT_NE(first.out.find("closed by remote host"), std::string::npos) << first.out;
    EXPECT_EQ(status(id)["state"], "running") << "the drop came after the end";
    hold.release();

    // Reconnect after the last row held here, and follow to the end.
    const std::string after = since(id, &held);
    auto r = follow(id, after);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(status(id)["state"], "finished");
    expectSameRows(id, RunStatus::Finished, 3);
}

TEST_F(RealSshCliTest, CancelOverSshEndsRunsCancelledWithRowsKept) {
    const int64_t id = launch(kSpec + " --micro-steps 100000");
    ASSERT_GT(id, 0);
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
    ASSERT_EQ(follow(id, "").code, 0);
    expectSameRows(id, RunStatus::Cancelled, 3);
    auto local = Database::open(local_, Database::Mode::ReadOnly);
    EXPECT_GT(local->stepCount(*local->runFromOrigin("gpu", s["runs"][0]["id"].get<int64_t>())),
              20);
    auto none = remote("cancel --experiment 99");
    EXPECT_EQ(none.code, 5) << none.out;
    EXPECT_NE(none.out.find("no launched job for experiment 99"), std::string::npos) << none.out;
}

TEST_F(RealSshCliTest, ARemoteDatabasePathWithSpacesAndQuotesIsUsedAsItIs) {
    // Quoted once for the remote shell; nothing in it is run there.
    const fs::path odd = dir_ / "it's a \"db\" $(touch pwned) `touch pwned2`;x.db";
    server_ = odd.string();
    const int64_t id = launch(kSpec + " --micro-steps 60");
    ASSERT_GT(id, 0);
    ASSERT_EQ(follow(id, "").code, 0);
    EXPECT_TRUE(fs::exists(odd)) << "the database is not where its path says";
    expectSameRows(id, RunStatus::Finished, 3);
    for (const auto& e : fs::directory_iterator(dir_)) {
        EXPECT_EQ(e.path().filename().string().rfind("pwned", 0), std::string::npos)
            << "the remote shell ran part of the path: " << e.path();
    }
    auto home = ssh_->ssh("ls -d pwned pwned2 2>/dev/null; true");
    EXPECT_EQ(home.out, "") << "the remote shell ran part of the path in the home folder";
}

TEST_F(RealSshCliTest, ARefusedKeyIsPermissionDeniedExit255AndRunsNothing) {
    const fs::path marker = dir_ / "ran";
    auto r = ssh_->ssh("touch " + test::RealSshd::localQuote(marker.string()), true);
    EXPECT_EQ(r.code, 255) << r.out;
    EXPECT_NE(r.out.find("Permission denied (publickey)"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(marker));
    // The authorized key runs the same command.
    auto ok = ssh_->ssh("touch " + test::RealSshd::localQuote(marker.string()));
    EXPECT_EQ(ok.code, 0) << ok.out;
    EXPECT_TRUE(fs::exists(marker));
}

TEST_F(RealSshCliTest, AMissingRemoteCliIsNotFoundExit127) {
    const std::string absent = (dir_ / "no such dir" / "ampbench-cli").string();
    auto r = ssh_->ssh(test::RealSshd::localQuote(absent) + " --version");
    EXPECT_EQ(r.code, 127) << r.out;
    EXPECT_NE(r.out.find("No such file or directory"), std::string::npos) << r.out;
    auto off = ssh_->ssh("ampbench-cli-absent --version");
    EXPECT_EQ(off.code, 127) << off.out;
    EXPECT_NE(off.out.find("not found"), std::string::npos) << off.out;
}

TEST(RealSshFixture, StopEndsTheServerAndEveryConnection) {
    const fs::path dir =
        fs::temp_directory_path() / ("ampbench-sshd-stop-" + std::to_string(getpid()));
    fs::remove_all(dir);
    test::RealSshd server(dir);
    ASSERT_TRUE(server.ok()) << server.why();
    const pid_t pid = server.pid();
    // A connection held open while the server stops (which ends it long before its
    // command would).
    std::thread held([&] { server.ssh("sleep 120"); });
    test::eventually([&] { return !server.connections().empty(); }, test::kPatience,
                     std::chrono::milliseconds(20));
    const auto connections = server.connections();
    EXPECT_FALSE(connections.empty());
    EXPECT_TRUE(server.stop());
    held.join();
    EXPECT_NE(::kill(pid, 0), 0) << "sshd " << pid << " still runs";
    for (pid_t c : connections) {
        EXPECT_NE(::kill(c, 0), 0) << "the connection's sshd " << c << " still runs";
    }
    EXPECT_EQ(server.running(), "") << "an sshd of the tests is left running";
    fs::remove_all(dir);
}
