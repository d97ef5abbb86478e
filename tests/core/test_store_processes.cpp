// Several programs on one database, as a desktop workbench open beside a CLI that
// trains into the same file: each is a process of its own, started from this test
// binary (tests/core/OtherProgram.h).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "OtherProgram.h"
#include "core/store/Database.h"

namespace fs = std::filesystem;
using ampbench::store::Database;

namespace {

std::string integrity(const std::string& path) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW)
            out += reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    } else {
        out = sqlite3_errmsg(db);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

class StoreProcesses : public ::testing::Test {
  protected:
    void SetUp() override {
        std::random_device rd;
        dir_ = fs::temp_directory_path() /
               ("ampbench_processes_" + std::to_string(getpid()) + "_" + std::to_string(rd()));
        fs::create_directories(dir_);
        db_ = (dir_ / "d.db").string();
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    fs::path dir_;
    std::string db_;
};

}  // namespace

// The desktop workbench keeps one connection for as long as it runs and opens more
// (its poll, File > Open, the training thread) beside it, while CLI runs write and
// exit. Every open of a second connection used to read the file's header through a
// descriptor of its own; closing it dropped the first connection's locks, so the next
// program to exit took itself for the last user and deleted the WAL under it: the
// workbench stopped seeing new runs, its own writes went into a deleted file, and
// closing it damaged the database.
TEST_F(StoreProcesses, ALongLivedConnectionBesideWritersThatExitKeepsEveryRowAndTheFileIntact) {
    auto gui = Database::open(db_);
    const int64_t first = gui->createExperiment("gui", "{}");
    ASSERT_EQ(first, 1);
    for (int i = 0; i < 3; ++i) {
        {
            auto poll = Database::open(db_, Database::Mode::ReadOnly);  // a second connection
            poll->experiments();
        }
        { auto again = Database::open(db_); }  // and a read-write one, as File > Open makes
        const std::string child = "cli-" + std::to_string(i);
        ASSERT_EQ(ampbench::test_processes::runOtherProgram("write", db_, child), 0);
        bool seen = false;
        for (const auto& e : gui->experiments())
            seen = seen || e.name == child;
        EXPECT_TRUE(seen) << "the long-lived connection does not see " << child;
        const std::string renamed = "renamed-" + std::to_string(i);
        gui->renameExperiment(first, renamed);
        EXPECT_EQ(ampbench::test_processes::runOtherProgram("read", db_, renamed), 0)
            << "another program does not see the rename to " << renamed;
    }
    gui.reset();
    EXPECT_EQ(integrity(db_), "ok");
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    std::vector<std::string> names;
    for (const auto& e : db->experiments())
        names.push_back(e.name);
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"cli-0", "cli-1", "cli-2", "renamed-2"}));
}

// Programs that create one new database at the same moment (two ingests of one
// stream, runs started together) all open it: the switch to WAL mode takes its lock
// without SQLite's busy wait and used to fail at once with "database is locked".
TEST_F(StoreProcesses, ProgramsCreatingOneNewFileAtOnceAllOpenIt) {
    for (int round = 0; round < 12; ++round) {
        const std::string db = (dir_ / ("new" + std::to_string(round) + ".db")).string();
        std::vector<pid_t> writers;
        for (int i = 0; i < 6; ++i)
            writers.push_back(
                ampbench::test_processes::startOtherProgram("write", db, "w" + std::to_string(i)));
        for (pid_t pid : writers)
            EXPECT_EQ(ampbench::test_processes::waitOtherProgram(pid), 0) << "round " << round;
        EXPECT_EQ(integrity(db), "ok");
        EXPECT_EQ(Database::open(db, Database::Mode::ReadOnly)->experiments().size(), 6u);
    }
}

// A follower reading a run's records while another program writes them sees them
// in order with no gap: the three tables are read in one snapshot (read one after
// another, a step and an event committed between two of the reads carried the
// follower past the step).
TEST_F(StoreProcesses, RecordsReadWhileAnotherProgramWritesThemComeWithoutGaps) {
    {
        auto db = Database::open(db_);
        const int64_t e = db->createExperiment("follow", "{}");
        ASSERT_EQ(db->createRun(e, "fp32", 0, 1, "{}", 600), 1);
    }
    const pid_t writer = ampbench::test_processes::startOtherProgram("append", db_, "event");
    auto reader = Database::open(db_, Database::Mode::ReadOnly);
    int64_t last = 0;
    int gaps = 0;
    bool done = false;
    while (!done) {
        int status = 0;
        done = ::waitpid(writer, &status, WNOHANG) == writer;  // then one more read drains it
        if (done) {
            EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        for (;;) {
            const auto records = reader->recordsSince(1, last, 7);
            if (records.empty())
                break;
            for (const auto& r : records) {
                gaps += r.seq != last + 1 ? 1 : 0;
                last = r.seq;
            }
        }
    }
    EXPECT_EQ(gaps, 0);
    EXPECT_EQ(last, 1200);
}

// A FIFO where the database should be would block the open until a writer came.
TEST_F(StoreProcesses, AFifoAsTheDatabaseIsRefusedAtOnce) {
    const std::string fifo = (dir_ / "pipe.db").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    try {
        Database::open(fifo, Database::Mode::ReadOnly);
        FAIL() << "a FIFO was opened as a database";
    } catch (const ampbench::store::StoreError& e) {
        EXPECT_NE(std::string(e.what()).find("FIFO"), std::string::npos) << e.what();
    }
}
