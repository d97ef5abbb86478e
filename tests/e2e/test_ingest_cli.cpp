// End to end: `ampbench-cli ingest` of streams that a careful writer would not send. A
// stream that never pauses has its rows in the database while it flows; a run whose
// stream stops without its status (a full disk, a killed writer) ends interrupted
// with its rows, and the rest of its stream completes it; a run whose stored arm
// contradicts its own is refused naming its line, and the rest is stored and reported.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "Processes.h"
#include "Shell.h"
#include "StoredSteps.h"
#include "core/store/Database.h"
#include "core/stream/RecordStream.h"

namespace fs = std::filesystem;
using ampbench::run::RunStatus;
using ampbench::store::Database;
namespace stream = ampbench::stream;
namespace test = ampbench::test;

namespace {

const std::string kCli = AMPBENCH_CLI_PATH;

/// The lines of a stream written by hand, as another machine's writer would send them.
struct StreamLines {
    std::string text;
    StreamLines& add(const stream::Record& r) {
        text += stream::encode(r) + "\n";
        return *this;
    }
    StreamLines& header() {
        return add(stream::makeHeader(R"({"hostname":"gpu"})", std::string(32, 'a')));
    }
    StreamLines& experiment(const std::string& name = "e") {
        ampbench::store::ExperimentRow e;
        e.id = 1;
        e.name = name;
        e.spec_json = "{}";
        e.created_at = "2026-12-04T00:00:00Z";
        return add(e);
    }
    /// Run `id`, arm `arm`, whose stored arm (spec_json) names `stored_arm`.
    StreamLines& run(int64_t id, const std::string& arm, const std::string& stored_arm,
                     RunStatus status = RunStatus::Running) {
        ampbench::store::RunRow r;
        r.id = id;
        r.experiment_id = 1;
        r.arm = arm;
        r.arm_index = static_cast<int>(id - 1);
        r.seed = 1;
        r.spec_json = R"({"name":")" + stored_arm + R"(","precision":"fp32"})";
        r.env_json = "{}";
        r.status = status;
        r.planned_steps = 100;
        r.started_at = "2026-12-04T00:00:01Z";
        return add(r);
    }
    StreamLines& step(int64_t run, int64_t n) {
        ampbench::run::StepRecord s;
        s.step = n;
        s.samples = 8 * n;
        s.loss = 1.0 / static_cast<double>(n);
        s.wall_s = 0.1 * static_cast<double>(n);
        return add(stream::RowRecord{run, {n, s}});
    }
    StreamLines& status(int64_t run, int64_t last_seq) {
        stream::StatusRecord s;
        s.run = run;
        s.status = RunStatus::Finished;
        s.last_seq = last_seq;
        return add(s);
    }
};

class IngestCli : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ampbench-ingest-e2e-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "local.db").string();
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    test::ShellResult cli(const std::string& args) const {
        return test::shell(kCli + " --db " + db_ + " " + args);
    }
    test::ShellResult ingest(const std::string& name, const StreamLines& lines) const {
        std::ofstream(path(name), std::ios::binary) << lines.text;
        return cli("ingest --origin gpu " + path(name));
    }
    fs::path dir_;
    std::string db_;
};

// A stream whose lines never pause for 100 ms (a step every 20 ms) has its rows in the
// database while it flows: before, they were written every 4096 rows or at a pause,
// so a reader saw none for minutes and a kill of the ingest lost them.
TEST_F(IngestCli, RowsOfAStreamThatNeverPausesAreStoredWhileItFlows) {
    const std::string fifo = path("s.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    test::Background ingest(kCli + " --db " + db_ + " ingest --origin gpu " + fifo, dir_.string());
    const int fd = ::open(fifo.c_str(), O_WRONLY);  // waits for ingest to open it
    ASSERT_GE(fd, 0);
    auto send = [fd](const StreamLines& lines) {
        return ::write(fd, lines.text.data(), lines.text.size()) ==
               static_cast<ssize_t>(lines.text.size());
    };
    ASSERT_TRUE(send(StreamLines().header().experiment().run(1, "a", "a")));
    int64_t sent = 0, stored = 0;
    // The writer's rhythm, not a wait: a line every 20 ms, until the database shows
    // rows while lines still come (or 2,000 lines, 40 s, have gone unseen).
    while (sent < 2000 && stored == 0) {
        ASSERT_TRUE(send(StreamLines().step(1, ++sent)));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        stored = test::firstRunSteps(db_);
    }
    const int64_t sent_when_seen = sent;
    ASSERT_TRUE(send(StreamLines().status(1, sent)));
    ::close(fd);
    EXPECT_EQ(ingest.wait(), 0) << ingest.output();
    EXPECT_GT(stored, 0) << "no row was stored while " << sent_when_seen << " lines came";
    EXPECT_LT(sent_when_seen, 500)
        << "rows came " << sent_when_seen << " lines (10 s and more) late";
    EXPECT_EQ(test::firstRunSteps(db_), sent);
}

// A stream cut off before its run's status (the writer's disk filled, it was killed):
// once the ingest of it ends the run reads interrupted, saying where the stream ended
// and how to resume, with every row that came; the rest of the stream, ingested later,
// completes it.
TEST_F(IngestCli, ARunWhoseStreamEndsWithoutItsStatusEndsInterruptedUntilTheRestComes) {
    StreamLines first;
    first.header().experiment().run(1, "a", "a");
    for (int64_t n = 1; n <= 5; ++n) {
        first.step(1, n);
    }
    auto r = ingest("first.ndjson", first);
    EXPECT_EQ(r.code, 8) << r.out;
    EXPECT_NE(r.out.find("run 1 of gpu (here run 1): the stream ended after record 5 (step 5) "
                         "without the run's end"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("tail --since 1:5"), std::string::npos) << r.out;
    {
        auto db = Database::open(db_, Database::Mode::ReadOnly);
        const auto run = db->run(1);
        ASSERT_TRUE(run);
        EXPECT_EQ(run->status, RunStatus::Interrupted);
        EXPECT_EQ(run->failure, ampbench::run::FailureKind::Interrupted);
        EXPECT_NE(run->error.find("ended after record 5"), std::string::npos) << run->error;
        EXPECT_EQ(db->steps(1).size(), 5u);
    }
    StreamLines rest;
    rest.header().experiment().run(1, "a", "a");
    for (int64_t n = 6; n <= 8; ++n) {
        rest.step(1, n);
    }
    rest.status(1, 8);
    r = ingest("rest.ndjson", rest);
    EXPECT_EQ(r.code, 0) << r.out;
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    EXPECT_EQ(db->run(1)->status, RunStatus::Finished);
    EXPECT_EQ(db->run(1)->error, "");
    EXPECT_EQ(db->steps(1).size(), 8u);
}

// A run whose stored arm (spec_json) names another arm than the run's own is refused
// where it enters, naming its line and both names, with its rows; before, it was
// stored and `report --csv` then wrote nothing for the whole experiment (exit 4).
TEST_F(IngestCli, ARunWhoseStoredArmIsAnotherArmIsRefusedAndTheRestIsReported) {
    StreamLines lines;
    lines.header().experiment().run(1, "a", "a").run(2, "b", "other");
    for (int64_t n = 1; n <= 3; ++n) {
        lines.step(1, n).step(2, n);
    }
    lines.status(1, 3).status(2, 3);
    auto r = ingest("s.ndjson", lines);
    EXPECT_EQ(r.code, 8) << r.out;
    EXPECT_NE(r.out.find("line 4: run 2's stored arm (spec_json) names arm \"other\", but the "
                         "run is arm \"b\""),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("3 refused"), std::string::npos) << r.out;
    {
        auto db = Database::open(db_, Database::Mode::ReadOnly);
        ASSERT_EQ(db->runs().size(), 1u);
        EXPECT_EQ(db->runs()[0].arm, "a");
        EXPECT_EQ(db->steps(db->runs()[0].id).size(), 3u);
    }
    r = cli("report 1 --csv " + path("r.csv"));
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(test::fileText(path("r.csv")).find(",a,"), std::string::npos)
        << test::fileText(path("r.csv"));
}

}  // namespace
