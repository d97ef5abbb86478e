// Fault injection through the real CLI: outputs named like the database, a damaged
// file, a lock held by another program during a run, kill -9, file size limits and
// hostile input. Each was once a way to lose data or crash; now each must not.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "Shell.h"
#include "core/config/DataPaths.h"
#include "core/store/Database.h"

namespace fs = std::filesystem;
using ampbench::run::EventKind;
using ampbench::run::RunStatus;
using ampbench::store::Database;
namespace test = ampbench::test;

namespace {

const std::string kCli = AMPBENCH_CLI_PATH;

bool haveData() {
    return ampbench::config::haveFashionMnist();
}

std::string readBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

class CliFaults : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!haveData()) {
            GTEST_SKIP() << "dataset-fashion-mnist is not installed";
        }
        dir_ = fs::temp_directory_path() /
               ("ampbench-faults-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "r.db").string();
    }
    void TearDown() override { fs::remove_all(dir_); }

    test::ShellResult cli(const std::string& args) const {
        return test::shell("cd " + quote(dir_.string()) + " && " + kCli + " --db " + quote(db_) +
                           " " + args);
    }
    /// A small finished experiment to have something to lose.
    void trainSmall() {
        auto r =
            cli("run --preset smoke --steps 8 --warmup 1 --eval-interval 0 --eval-batches 2 -q");
        ASSERT_EQ(r.code, 0) << r.out;
    }
    int64_t experiments() const {
        return static_cast<int64_t>(
            Database::open(db_, Database::Mode::ReadOnly)->experiments().size());
    }

    fs::path dir_;
    std::string db_;
};

/// Starts the CLI without waiting; output goes to `log`.
pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
    const pid_t pid = fork();
    if (pid == 0) {
        freopen(log.c_str(), "w", stderr);
        freopen("/dev/null", "w", stdout);
        std::vector<char*> argv{const_cast<char*>(kCli.c_str())};
        for (const auto& a : args) {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        execv(kCli.c_str(), argv.data());
        _exit(127);
    }
    return pid;
}

/// Waits until run `run_index` (0-based, in creation order) has at least `rows` steps.
int64_t waitForSteps(const std::string& db, size_t run_index, int64_t rows) {
    int64_t seen = 0;
    test::eventually([&] {
        try {
            auto d = Database::open(db, Database::Mode::ReadOnly);
            const auto runs = d->runs();
            seen = runs.size() > run_index ? d->stepCount(runs[run_index].id) : 0;
        } catch (const std::exception&) {
        }
        return seen >= rows;
    });
    return seen;
}

/// Whether child `pid` has ended (it is left to be reaped).
bool endedOn(pid_t pid) {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid;
}

/// The CPU time `pid` has used so far, in seconds (0 once it is gone).
double cpuSecondsOf(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), {});
    const auto end = stat.rfind(')');
    if (end == std::string::npos) {
        return 0;
    }
    // After the name: state and ten more fields, then utime and stime in clock ticks.
    std::istringstream fields(stat.substr(end + 2));
    std::string skip;
    for (int i = 0; i < 11; ++i) {
        fields >> skip;
    }
    double utime = 0, stime = 0;
    fields >> utime >> stime;
    return (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace

// 1. No output may be the open database (or its -wal/-shm), under any spelling.
TEST_F(CliFaults, OutputsNamedLikeTheDatabaseAreRefusedAndNothingIsLost) {
    trainSmall();
    fs::create_symlink(db_, dir_ / "alias.db");
    for (const std::string& args :
         {std::string("export -e 1 --csv r.db"), std::string("export -e 1 --json ./r.db"),
          std::string("export 1 --csv alias.db"), std::string("export 1 --csv r.db-wal"),
          std::string("run --dry-run --save-spec r.db"),
          "run --dry-run --save-spec " + quote((dir_ / "sub" / ".." / "r.db").string())}) {
        fs::create_directories(dir_ / "sub");
        const auto r = cli(args);
        EXPECT_EQ(r.code, 6) << args << "\n" << r.out;
        EXPECT_NE(r.out.find("refusing to write"), std::string::npos) << r.out;
        EXPECT_EQ(experiments(), 1) << args;
    }
    const auto list = cli("list");
    EXPECT_EQ(list.code, 0);
    EXPECT_NE(list.out.find("finished"), std::string::npos) << list.out;
}

// A file size limit stops the export half-way: no partial file, and the reason.
TEST_F(CliFaults, ExportUnderAFileSizeLimitLeavesNoPartialFile) {
    trainSmall();
    // Keep the database's -wal/-shm in place, at full size, while the limit holds.
    auto holder = Database::open(db_, Database::Mode::ReadOnly);
    holder->experiments();
    std::ofstream(dir_ / "old.csv") << "previous export\n";
    const auto r = test::shell("cd " + quote(dir_.string()) + " && ulimit -f 1 && " + kCli +
                               " --db r.db export -e 1 --csv old.csv");
    EXPECT_EQ(r.code, 6) << r.out;
    EXPECT_NE(r.out.find("cannot write old.csv: File too large"), std::string::npos) << r.out;
    EXPECT_EQ(readBytes((dir_ / "old.csv").string()), "previous export\n");
    for (const auto& e : fs::directory_iterator(dir_)) {
        EXPECT_EQ(e.path().filename().string().find(".old.csv."), std::string::npos)
            << "temporary file left: " << e.path();
    }
}

// 3. A damaged page: exit 4 with the message on every command, never an abort;
// `run` refuses the file and says how to save what is readable.
TEST_F(CliFaults, DamagedDatabaseGivesExitFourEverywhereAndRunRefusesIt) {
    trainSmall();
    int64_t root = 0;
    {
        sqlite3* raw = nullptr;
        ASSERT_EQ(sqlite3_open(db_.c_str(), &raw), SQLITE_OK);
        sqlite3_stmt* st = nullptr;
        sqlite3_prepare_v2(raw, "SELECT rootpage FROM sqlite_schema WHERE name = 'steps'", -1, &st,
                           nullptr);
        ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
        root = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        sqlite3_close(raw);
    }
    {
        std::fstream f(db_, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp((root - 1) * 4096);
        const std::string garbage(4096, '\x33');
        f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    for (const std::string& args :
         {std::string("list"), std::string("show 1"), std::string("show -e 1"),
          std::string("export -e 1 --csv out.csv")}) {
        const auto r = cli(args);
        EXPECT_EQ(r.code, 4) << args << "\n" << r.out;
        EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("damaged"), std::string::npos) << args << "\n" << r.out;
    }
    EXPECT_FALSE(fs::exists(dir_ / "out.csv"));
    const auto run = cli("run --preset smoke --steps 8 --warmup 1 -q");
    EXPECT_EQ(run.code, 4) << run.out;
    EXPECT_NE(run.out.find(".recover"), std::string::npos) << run.out;
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db_.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(raw, "SELECT COUNT(*) FROM experiments", -1, &st, nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int64(st, 0), 1) << "run added an experiment to a damaged file";
    sqlite3_finalize(st);
    sqlite3_close(raw);
}

// 4. A foreign database with our table names: refused before any write.
TEST_F(CliFaults, ForeignDatabaseWithOurTableNamesStaysByteForByte) {
    {
        sqlite3* raw = nullptr;
        ASSERT_EQ(sqlite3_open(db_.c_str(), &raw), SQLITE_OK);
        ASSERT_EQ(sqlite3_exec(raw,
                               "CREATE TABLE experiments(x); CREATE TABLE runs(y);"
                               "INSERT INTO runs VALUES(1);",
                               nullptr, nullptr, nullptr),
                  SQLITE_OK);
        sqlite3_close(raw);
    }
    const std::string before = readBytes(db_);
    for (const std::string& args : {std::string("list"), std::string("run --preset smoke -q")}) {
        const auto r = cli(args);
        EXPECT_EQ(r.code, 4) << r.out;
        EXPECT_NE(r.out.find("another program"), std::string::npos) << r.out;
    }
    EXPECT_EQ(readBytes(db_), before);
}

// 2. Another program holds the write lock for 7 s (longer than one busy wait), and
// on until the run has trained on for a second of CPU time under it (so it has
// tried to write), in the middle of a run: training goes on, every step is stored,
// the wait is an event.
TEST_F(CliFaults, ALockHeldDuringARunLosesNoSteps) {
    const std::string log = (dir_ / "run.log").string();
    const pid_t pid =
        spawn({"--db", db_, "run", "--preset", "smoke", "--steps", "400", "--arm", "fp32=fp32",
               "--seeds", "1", "--eval-interval", "0", "--eval-batches", "2"},
              log);
    ASSERT_GE(waitForSteps(db_, 0, 10), 10) << readBytes(log);
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db_.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    const auto locked = std::chrono::steady_clock::now();
    const double cpu = cpuSecondsOf(pid);
    test::eventually([&] {
        return std::chrono::steady_clock::now() - locked >= std::chrono::seconds(7) &&
               (cpuSecondsOf(pid) - cpu >= 1.0 || endedOn(pid));
    });
    sqlite3_exec(raw, "COMMIT", nullptr, nullptr, nullptr);
    sqlite3_close(raw);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << readBytes(log);
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    const auto run = db->runs().at(0);
    EXPECT_EQ(run.status, RunStatus::Finished) << run.error;
    EXPECT_EQ(db->stepCount(run.id), 400);
    EXPECT_EQ(run.last_step, 400);
    bool said = false;
    for (const auto& e : db->events(run.id)) {
        said = said || e.message.find("locked by another program") != std::string::npos;
    }
    EXPECT_TRUE(said) << "the wait is recorded";
}

// 7. After kill -9, readers show the run (and the queue behind it) as interrupted
// at once, without a read-write open in between.
TEST_F(CliFaults, AfterKillNineReadersShowInterruptedRunsAndQueue) {
    const std::string log = (dir_ / "run.log").string();
    const pid_t pid =
        spawn({"--db", db_, "run", "--preset", "smoke", "--steps", "100000", "--seeds", "1"}, log);
    ASSERT_GE(waitForSteps(db_, 0, 5), 5) << readBytes(log);
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    const auto list = cli("list");
    EXPECT_EQ(list.code, 0) << list.out;
    EXPECT_EQ(list.out.find("running"), std::string::npos) << list.out;
    EXPECT_EQ(list.out.find("queued"), std::string::npos) << list.out;
    const auto show = cli("show 2");
    EXPECT_NE(show.out.find("interrupted: never started"), std::string::npos) << show.out;
    const auto show1 = cli("show 1");
    EXPECT_NE(show1.out.find("status      interrupted"), std::string::npos) << show1.out;
}

// Outputs named by special paths: a character device stays one, a descriptor's path
// (/proc/self/fd/1: the pipe this test reads) gets the content, a FIFO nobody reads
// is refused at once with exit 6.
TEST_F(CliFaults, OutputsIntoDevicesFifosAndDescriptorsAreStreamedNeverReplaced) {
    trainSmall();
    std::string null = (dir_ / "null").string();
    if (test::shell("mknod " + quote(null) + " c 1 3").code != 0)
        null = "/dev/null";
    auto r = cli("export -e 1 --json " + quote(null) + " --csv /proc/self/fd/1");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(fs::is_character_file(null));
    EXPECT_NE(r.out.find("run_id"), std::string::npos) << "the CSV did not reach stdout: " << r.out;
    const std::string fifo = (dir_ / "out.fifo").string();
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    r = cli("report 1 --json " + quote(fifo));
    EXPECT_EQ(r.code, 6) << r.out;
    EXPECT_NE(r.out.find("nobody reads"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::is_fifo(fifo));
}

// The database's files made immutable mid-run: SQLite's mapped -shm pages can no
// longer be written and the kernel answers with SIGBUS. The run ends with the reason,
// exit 4, not a bare "Bus error"; every row committed before is kept.
TEST_F(CliFaults, DatabaseFilesMadeImmutableMidRunEndWithTheReasonAndKeepTheRows) {
    const std::string log = (dir_ / "run.log").string();
    const pid_t pid = spawn({"--db", db_, "run", "--preset", "smoke", "--steps", "100000", "--arm",
                             "fp32=fp32", "--seeds", "1", "--eval-interval", "0"},
                            log);
    const int64_t before = waitForSteps(db_, 0, 20);
    ASSERT_GE(before, 20) << readBytes(log);
    const std::string files = quote(db_) + " " + quote(db_ + "-wal") + " " + quote(db_ + "-shm");
    if (test::shell("chattr +i " + files).code != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        GTEST_SKIP() << "chattr +i is not possible here (needs root and ext4/xfs)";
    }
    int status = 0;
    bool ended = false;
    test::eventually([&] { return ended = waitpid(pid, &status, WNOHANG) == pid; }, test::kPatience,
                     std::chrono::milliseconds(100));
    test::shell("chattr -i " + files);
    if (!ended) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
    }
    ASSERT_TRUE(ended) << "the run did not end with its database immutable";
    const std::string out = readBytes(log);
    ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status) << ": " << out;
    EXPECT_EQ(WEXITSTATUS(status), 4) << out;
    EXPECT_TRUE(out.find(db_) != std::string::npos) << out;
    auto db = Database::open(db_, Database::Mode::ReadOnly);
    EXPECT_GE(db->stepCount(db->runs().at(0).id), before);
    EXPECT_NE(db->runs().at(0).status, RunStatus::Running);
}

// 9. Memory budgets (what a trial adds, not what the process holds): more than the
// machine has is clamped with a warning; one below what a single sample adds is
// named as such, once, and the search fails.
TEST_F(CliFaults, BudgetsAreClampedAndOneTooSmallIsNamed) {
    const auto tiny =
        cli("find-batch --preset smoke --device cpu --arm f=fp32 --budget 4K --trial-steps 1");
    EXPECT_EQ(tiny.code, 1) << tiny.out;
    EXPECT_NE(tiny.out.find("below what one sample needs"), std::string::npos) << tiny.out;
    EXPECT_NE(tiny.out.find("batch      1"), std::string::npos) << "no trial at 1: " << tiny.out;

    const auto huge =
        cli("find-batch --preset smoke --device cpu --arm f=fp32 --budget 1T --max-trials 1 "
            "--trial-steps 1");
    EXPECT_EQ(huge.code, 0) << huge.out;
    EXPECT_NE(huge.out.find("is more than cpu has"), std::string::npos) << huge.out;
}

// A failed host allocation is a memory limit, like CUDA's out-of-memory.
TEST_F(CliFaults, AnAllocatorFailureIsOutOfMemory) {
    const auto r =
        test::shell("cd " + quote(dir_.string()) + " && ulimit -v 4000000 && " + kCli +
                    " --db r.db find-batch --preset smoke --device cpu --arm f=fp32 --start 30000 "
                    "--max-trials 1 --trial-steps 1 --threads 1");
    EXPECT_NE(r.out.find("out_of_memory"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("not a memory limit"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("below what one sample needs"), std::string::npos) << r.out;
}

// 10. Small inputs, each named.
TEST_F(CliFaults, SmallInputsAreRefusedWithTheirName) {
    auto r = cli("run --seeds -1 --dry-run");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("--seeds"), std::string::npos) << r.out;

    r = cli("run --arm k=amp,accum=4,accum=8 --dry-run");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("accum is given more than once"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("arms = []"), std::string::npos) << r.out;

    r = cli("run --data /etc/hostname --steps 8 --warmup 1");
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_NE(r.out.find("is a file, not a folder"), std::string::npos) << r.out;

    r = cli("run --dry-run --name \"$(printf 'x\\033]2;pwned\\007')\"");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("control characters"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "an escape reached the terminal";

    r = cli("run --dry-run --name " + std::string(300, 'n'));
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_LT(r.out.size(), 1000u);

    r = cli("run --micro-batch 60000 --steps 8 --warmup 1");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("micro_batch"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(db_) && experiments() > 0);

    std::ofstream(dir_ / "big.json") << R"({"optimizer": {"lr": 1e400}})";
    r = cli("run --config big.json");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("optimizer.lr"), std::string::npos) << r.out;
    r = cli("find-batch --config big.json");
    EXPECT_EQ(r.code, 2) << r.out;

    std::ofstream(dir_ / "deep.json") << std::string(100000, '[') << std::string(100000, ']');
    r = cli("run --config deep.json");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("nested more than"), std::string::npos) << r.out;
}
