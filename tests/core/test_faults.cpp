// Fault injection: each test is a way the workbench used to lose or damage data,
// or crash, and now must not. No LibTorch here; the CLI's side is in
// tests/e2e/test_faults_cli.cpp.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "core/analysis/Format.h"
#include "core/config/ArmShorthand.h"
#include "core/config/Presets.h"
#include "core/config/SpecJson.h"
#include "core/config/Validation.h"
#include "core/store/BatchSearchStore.h"
#include "core/store/Database.h"
#include "core/store/Export.h"
#include "core/store/OutputFile.h"
#include "core/store/RunRecorder.h"
#include "core/store/private/Owner.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ampbench::store::Database;
using ampbench::store::LockPolicy;
using ampbench::store::RunRecorder;
using ampbench::store::StoreError;
using namespace ampbench::run;
namespace store = ampbench::store;
namespace config = ampbench::config;

namespace {

class Faults : public ::testing::Test {
  protected:
    void SetUp() override {
        std::random_device rd;
        dir_ = fs::temp_directory_path() /
               ("ampbench_faults_" + std::to_string(getpid()) + "_" + std::to_string(rd()));
        fs::create_directories(dir_);
        fs::permissions(dir_, fs::perms(0755));
    }
    void TearDown() override {
        std::error_code ec;
        fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(dir_, ec);
    }
    std::string file(const std::string& name) const { return (dir_ / name).string(); }
    fs::path dir_;
};

std::string readBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// A raw connection of "another program", holding the write lock while it lives.
class ForeignLock {
  public:
    explicit ForeignLock(const std::string& path) {
        EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
        EXPECT_EQ(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    }
    void release() {
        if (db_) {
            sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
            sqlite3_close(db_);
            db_ = nullptr;
        }
    }
    ~ForeignLock() { release(); }

  private:
    sqlite3* db_ = nullptr;
};

StepRecord step(int64_t i) {
    StepRecord s;
    s.step = i;
    s.samples = i * 32;
    s.loss = 1.0 / static_cast<double>(i);
    return s;
}

struct Added {
    int64_t experiment = 0;
    int64_t run = 0;
};

Added addRun(Database& db, const std::string& name = "exp", const std::string& arm = "fp32") {
    Added r;
    r.experiment = db.createExperiment(name, "{}");
    r.run = db.createRun(r.experiment, arm, 0, 1, "{}", 100);
    return r;
}

/// Tries every few milliseconds: a test must not wait out the real back-off.
LockPolicy quickTries(std::chrono::milliseconds limit, std::chrono::milliseconds final_wait) {
    LockPolicy policy;
    policy.try_wait = 5ms;
    policy.max_backoff = 20ms;
    policy.limit = limit;
    policy.final_wait = final_wait;
    return policy;
}

/// Runs `check` as an unprivileged user (root ignores file permissions), in a child
/// process; returns what it reported ("" when all held).
std::string asUnprivileged(const std::function<std::string()>& check) {
    if (geteuid() != 0) {
        return check();
    }
    int fds[2];
    if (pipe(fds) != 0) {
        return "pipe failed";
    }
    const pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        std::string result;
        if (setgid(65534) != 0 || setuid(65534) != 0) {
            result = "could not drop privileges";
        } else {
            result = check();
        }
        if (!result.empty() && write(fds[1], result.data(), result.size()) < 0) {
            _exit(3);
        }
        _exit(result.empty() ? 0 : 1);
    }
    close(fds[1]);
    std::string out;
    char buf[512];
    ssize_t n = 0;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) {
        out.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && out.empty())) {
        return "the unprivileged check did not finish";
    }
    return out;
}

}  // namespace

// --- 1. An output never replaces the database; a failed write leaves nothing ---

TEST_F(Faults, OutputNamingTheDatabaseIsRefusedUnderEverySpelling) {
    const std::string db = file("r.db");
    auto open = Database::open(db);
    addRun(*open);
    fs::create_directories(dir_ / "sub");
    fs::create_symlink(db, dir_ / "link.db");
    fs::create_hard_link(db, dir_ / "hard.db");
    for (const std::string& same : {db, file("./r.db"), file("sub/../r.db"), file("link.db"),
                                    file("hard.db"), db + "-wal", db + "-shm", db + "-journal"}) {
        const std::string why = store::outputClash(same, db);
        EXPECT_NE(why.find("refusing to write " + same), std::string::npos) << same;
    }
    // Relative spellings from the database's folder.
    const auto cwd = fs::current_path();
    fs::current_path(dir_);
    EXPECT_FALSE(store::outputClash("r.db", db).empty());
    EXPECT_FALSE(store::outputClash(db, "r.db").empty());
    EXPECT_FALSE(store::outputClash("r.db-wal", "./r.db").empty());
    EXPECT_TRUE(store::outputClash("r.csv", "r.db").empty());
    fs::current_path(cwd);
    EXPECT_TRUE(store::outputClash(file("r.db.csv"), db).empty());
    EXPECT_TRUE(store::outputClash(file("other.db"), db).empty());
}

TEST_F(Faults, AtomicWriteReplacesWholeOrNotAtAll) {
    const std::string out = file("report.csv");
    store::writeFileAtomically(out, std::string("old contents\n"));
    EXPECT_EQ(readBytes(out), "old contents\n");
    EXPECT_EQ(fs::status(out).permissions() & fs::perms::others_read, fs::perms::others_read);
    store::writeFileAtomically(out, [](std::ostream& o) { o << "new"; });
    EXPECT_EQ(readBytes(out), "new");

    // A file size limit (ulimit -f) stops the write half-way: the old file stays,
    // no temporary is left, and the message says why in the system's words.
    auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit old_limit{};
    getrlimit(RLIMIT_FSIZE, &old_limit);
    rlimit small = old_limit;
    small.rlim_cur = 4096;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    std::string message;
    try {
        store::writeFileAtomically(out, std::string(100000, 'x'));
    } catch (const store::OutputError& e) {
        message = e.what();
    }
    setrlimit(RLIMIT_FSIZE, &old_limit);
    std::signal(SIGXFSZ, old_handler);
    EXPECT_NE(message.find("cannot write " + out + ": File too large"), std::string::npos)
        << message;
    EXPECT_EQ(readBytes(out), "new");
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir_)) {
        (void)e;
        ++files;
    }
    EXPECT_EQ(files, 1) << "a temporary file was left behind";

    // A folder that does not exist, and a path that is a folder.
    EXPECT_THROW(store::writeFileAtomically(file("missing/x.csv"), std::string("x")),
                 store::OutputError);
    EXPECT_THROW(store::writeFileAtomically(dir_.string(), std::string("x")), store::OutputError);
}

TEST_F(Faults, AtomicWriteIntoAReadOnlyFolderSaysPermissionDenied) {
    fs::create_directories(dir_ / "locked");
    fs::permissions(dir_ / "locked", fs::perms(0555));
    const std::string target = file("locked/out.json");
    const std::string result = asUnprivileged([&]() -> std::string {
        try {
            store::writeFileAtomically(target, std::string("{}"));
        } catch (const store::OutputError& e) {
            const std::string m = e.what();
            return m.find("Permission denied") != std::string::npos ? "" : "message: " + m;
        }
        return "no error";
    });
    EXPECT_EQ(result, "");
    EXPECT_FALSE(fs::exists(target));
}

// Every file this process writes is checked against every database it has open, not
// only the outputs a command names: a saved model whose name was the database's used
// to replace it.
TEST_F(Faults, NoWriteOfThisProcessReplacesAnOpenDatabase) {
    const std::string db = file("w-run1-fp32-seed1.pt");
    {
        auto open = Database::open(db);
        addRun(*open);
        const std::string before = readBytes(db);
        try {
            store::writeFileAtomically(file("./w-run1-fp32-seed1.pt"), std::string("PK zip"));
            FAIL() << "an open database was replaced";
        } catch (const store::OutputError& e) {
            EXPECT_NE(std::string(e.what()).find("the database"), std::string::npos) << e.what();
        }
        EXPECT_THROW(store::writeFileAtomically(db + "-wal", std::string("x")), store::OutputError);
        EXPECT_EQ(readBytes(db), before);
    }
    // Closed, it is an ordinary file again.
    store::writeFileAtomically(db, std::string("x"));
    EXPECT_EQ(readBytes(db), "x");
}

// A FIFO or a device named as an output is written into, never replaced by a regular
// file (as root, `--json /dev/null` would have replaced the system's /dev/null).
TEST_F(Faults, OutputsIntoAFifoOrADeviceAreStreamedAndTheNodeStays) {
    const std::string fifo = file("out.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // Nobody reads it: refused at once instead of waiting forever.
    try {
        store::writeFileAtomically(fifo, std::string("{}"));
        FAIL() << "a FIFO nobody reads was written";
    } catch (const store::OutputError& e) {
        EXPECT_NE(std::string(e.what()).find("nobody reads"), std::string::npos) << e.what();
    }
    std::string received;
    std::thread reader([&] {
        std::ifstream in(fifo, std::ios::binary);
        received.assign(std::istreambuf_iterator<char>(in), {});
    });
    const std::string payload(200000, 'r');  // larger than a pipe's buffer
    bool written = false;
    const auto until = std::chrono::steady_clock::now() + 120s;
    while (!written && std::chrono::steady_clock::now() < until) {  // until the reader opened
        try {
            store::writeFileAtomically(fifo, payload);
            written = true;
        } catch (const store::OutputError&) {
            std::this_thread::sleep_for(10ms);
        }
    }
    reader.join();
    EXPECT_TRUE(written);
    EXPECT_EQ(received, payload);
    EXPECT_TRUE(fs::is_fifo(fifo));

    // A copy of /dev/null (needs root to make; the system's own is used otherwise).
    std::string null = file("null");
    if (::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
        null = "/dev/null";
    store::writeFileAtomically(null, std::string("discarded"));
    EXPECT_TRUE(fs::is_character_file(null));
    for (const auto& e : fs::directory_iterator(dir_))
        EXPECT_EQ(e.path().filename().string().rfind(".", 0), std::string::npos)
            << "a temporary file was left: " << e.path();
}

// --- 2. A lock held by another program costs no rows ---

TEST_F(Faults, RecorderKeepsEveryStepWhileAnotherProgramHoldsTheLock) {
    const std::string path = file("locked.db");
    auto db = Database::open(path);
    const Added r = addRun(*db);
    RunRecorder rec(*db, r.run, 0ms, quickTries(60s, 60s));
    rec.onStart({});
    ForeignLock lock(path);
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 1; i <= 40; ++i) {
        EXPECT_NO_THROW(rec.onStep(step(i)));
        std::this_thread::sleep_for(5ms);
    }
    // Training was not held up by the lock (each try waits 5 ms at most, 40 steps take
    // a fifth of a second; held up, one step would wait the 60 s limit).
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s);
    EXPECT_EQ(rec.pendingRows(), 40u);
    lock.release();
    std::this_thread::sleep_for(50ms);  // past the back-off
    rec.onStep(step(41));
    EXPECT_EQ(rec.pendingRows(), 0u);
    rec.onFinish({RunStatus::Finished, "", 41, 1.0});
    auto reader = Database::open(path, Database::Mode::ReadOnly);
    EXPECT_EQ(reader->stepCount(r.run), 41);
    EXPECT_EQ(reader->run(r.run)->status, RunStatus::Finished);
    bool said = false;
    for (const auto& e : reader->events(r.run)) {
        said = said || (e.kind == EventKind::Warning &&
                        e.message.find("locked by another program") != std::string::npos &&
                        e.message.find("steps waited in memory") != std::string::npos);
    }
    EXPECT_TRUE(said) << "the wait is recorded as an event";
}

TEST_F(Faults, ALockPastTheLimitEndsTheRunButEveryStepIsStillWritten) {
    const std::string path = file("long-lock.db");
    auto db = Database::open(path);
    const Added r = addRun(*db);
    RunRecorder rec(*db, r.run, 0ms, quickTries(300ms, 30s));
    rec.onStart({});
    ForeignLock lock(path);
    int64_t fed = 0;
    std::string why;
    try {
        for (int64_t i = 1; i <= 1000; ++i) {
            fed = i;
            rec.onStep(step(i));
            std::this_thread::sleep_for(5ms);
        }
    } catch (const StoreError& e) {
        why = e.what();
    }
    ASSERT_NE(why.find("stayed locked by another program"), std::string::npos) << why;
    EXPECT_LT(fed, 1000);
    // The trainer then ends the run; the lock goes a little later.
    std::thread release([&] {
        std::this_thread::sleep_for(300ms);
        lock.release();
    });
    rec.onEvent({fed, EventKind::Warning, why, 0.0});
    EXPECT_NO_THROW(rec.onFinish({RunStatus::Failed, why, fed, 1.0}));
    release.join();
    auto reader = Database::open(path, Database::Mode::ReadOnly);
    EXPECT_EQ(reader->stepCount(r.run), fed);
    EXPECT_EQ(reader->run(r.run)->status, RunStatus::Failed);
    EXPECT_NE(reader->run(r.run)->error.find("stayed locked"), std::string::npos);
}

TEST_F(Faults, ALockThatNeverGoesIsReportedWithExactlyWhatWasNotWritten) {
    const std::string path = file("stuck.db");
    auto db = Database::open(path);
    const Added r = addRun(*db);
    {
        RunRecorder rec(*db, r.run, 1h, quickTries(60s, 200ms));
        rec.onStart({});
        ForeignLock lock(path);
        for (int64_t i = 1; i <= 7; ++i) {
            rec.onStep(step(i));
        }
        rec.onEval({7, 224, 0.5, 0.8, 1.0});
        std::string message;
        try {
            rec.onFinish({RunStatus::Finished, "", 7, 1.0});
        } catch (const StoreError& e) {
            message = e.what();
        }
        EXPECT_NE(message.find("7 steps, 1 evaluations and 0 events of run " +
                               std::to_string(r.run) + " could not be written"),
                  std::string::npos)
            << message;
    }
    EXPECT_EQ(db->stepCount(r.run), 0);
}

// --- 3. A damaged file: every reader gets an error, writers refuse it ---

TEST_F(Faults, DamagedPageIsAnErrorNotACrashAndWritersRefuseTheFile) {
    const std::string path = file("damaged.db");
    int64_t run = 0;
    int64_t root = 0;
    {
        auto db = Database::open(path);
        run = addRun(*db).run;
        std::vector<StepRecord> rows;
        for (int64_t i = 1; i <= 3000; ++i) {
            rows.push_back(step(i));
        }
        db->insertSteps(run, rows);
        sqlite3_stmt* st = nullptr;
        sqlite3_prepare_v2(db->handle(), "SELECT rootpage FROM sqlite_schema WHERE name='steps'",
                           -1, &st, nullptr);
        ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
        root = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }  // the last connection checkpoints the WAL into the file
    {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp((root - 1) * 4096 + 8);
        const std::string garbage(2000, '\x5a');
        f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    auto db = Database::open(path, Database::Mode::ReadOnly);
    EXPECT_NO_THROW(db->experiments());
    const std::string read = [&] {
        try {
            db->steps(run);
        } catch (const StoreError& e) {
            EXPECT_EQ(e.kind(), StoreError::Kind::Corrupt);
            return std::string(e.what());
        }
        return std::string("no error");
    }();
    EXPECT_NE(read.find("is damaged"), std::string::npos) << read;
    EXPECT_NE(read.find(".recover"), std::string::npos) << read;
    db.reset();
    auto writer = Database::open(path);
    try {
        writer->requireIntact();
        ADD_FAILURE() << "the integrity check passed a damaged file";
    } catch (const StoreError& e) {
        EXPECT_EQ(e.kind(), StoreError::Kind::Corrupt);
        EXPECT_NE(std::string(e.what()).find("nothing was written"), std::string::npos);
    }
}

TEST_F(Faults, IntactFilePassesTheIntegrityCheck) {
    auto db = Database::open(file("fine.db"));
    addRun(*db);
    EXPECT_NO_THROW(db->requireIntact());
}

// --- 4. A foreign database is never changed, even with our table names ---

TEST_F(Faults, ForeignDatabaseWithOurTableNamesIsLeftByteForByte) {
    const std::string path = file("theirs.db");
    {
        sqlite3* raw = nullptr;
        ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
        ASSERT_EQ(sqlite3_exec(raw,
                               "CREATE TABLE experiments(id INTEGER PRIMARY KEY, title TEXT);"
                               "CREATE TABLE runs(id INTEGER PRIMARY KEY, who TEXT);"
                               "INSERT INTO runs(who) VALUES('someone');",
                               nullptr, nullptr, nullptr),
                  SQLITE_OK);
        sqlite3_close(raw);
    }
    const std::string before = readBytes(path);
    for (auto mode : {Database::Mode::ReadWrite, Database::Mode::ReadOnly}) {
        try {
            Database::open(path, mode);
            ADD_FAILURE() << "opened a foreign database";
        } catch (const StoreError& e) {
            EXPECT_EQ(e.kind(), StoreError::Kind::ForeignDatabase) << e.what();
            EXPECT_NE(std::string(e.what()).find("another program"), std::string::npos);
        }
    }
    EXPECT_EQ(readBytes(path), before) << "the file changed (journal mode, schema)";
    EXPECT_FALSE(fs::exists(path + "-wal"));
}

// --- 5. Spreadsheets never run a name as a formula ---

TEST_F(Faults, CsvAndTsvNeutraliseFormulas) {
    EXPECT_EQ(store::spreadsheetSafe("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
    EXPECT_EQ(store::spreadsheetSafe("@SUM(A1)"), "'@SUM(A1)");
    EXPECT_EQ(store::spreadsheetSafe("+amp"), "'+amp");
    EXPECT_EQ(store::spreadsheetSafe("-2+3+cmd|' /C calc'!A0"), "'-2+3+cmd|' /C calc'!A0");
    EXPECT_EQ(store::spreadsheetSafe("\tx"), "'\tx");
    for (const std::string number :
         {"-0.5", "-3.2%", "+1e-3", "-12.5 ms", "1.46\xC3\x97", "fp32", "amp-accum4"}) {
        EXPECT_EQ(store::spreadsheetSafe(number), number);
    }

    auto db = Database::open(file("csv.db"));
    const Added r = addRun(*db, "=cmd|'/C calc'!A0", "-amp+x");
    db->insertSteps(r.run, {step(1)});
    std::ostringstream csv;
    store::exportCsv(*db, {r.run}, csv);
    const std::string text = csv.str();
    EXPECT_NE(text.find(",'=cmd|'/C calc'!A0,'-amp+x,"), std::string::npos) << text;
    EXPECT_EQ(text.find(",=cmd"), std::string::npos);

    ampbench::analysis::TextTable t({"arm", "speed-up"});
    t.addRow({"=1+1", "-3.2%"});
    EXPECT_EQ(t.renderTsv(), "arm\tspeed-up\n'=1+1\t-3.2%\n");
}

// --- 6. Spec JSON that a parser takes but a program cannot hold ---

TEST_F(Faults, NumberTooLargeForADoubleNamesItsField) {
    std::vector<config::FieldError> errors;
    config::specFromJsonText(R"({"name": "x", "optimizer": {"lr": 1e400}})", errors);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].field, "optimizer.lr");
    EXPECT_EQ(errors[0].value, "1e400");
    EXPECT_NE(errors[0].message.find("too large"), std::string::npos);

    errors.clear();
    config::specFromJsonText(R"({"arms": [{"name": "a"}, {"grad_clip": -1e999}]})", errors);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].field, "arms[1].grad_clip");

    errors.clear();
    config::specFromJsonText(R"({"seeds": [1, 2, 1e500]})", errors);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].field, "seeds[2]");
}

TEST_F(Faults, DeepNestingIsRefusedWithoutRecursion) {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    std::vector<config::FieldError> errors;
    config::specFromJsonText("{\"arms\": " + deep + "}", errors);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].message.find("nested more than 64 levels"), std::string::npos)
        << errors[0].toString();
    EXPECT_EQ(errors[0].field.rfind("arms[0][0]", 0), 0u) << errors[0].field;

    // A spec of ordinary depth still reads, and syntax errors still say where.
    errors.clear();
    const auto spec =
        config::specFromJsonText(config::specToJsonText(*config::preset("default")), errors);
    EXPECT_TRUE(errors.empty());
    EXPECT_EQ(spec, *config::preset("default"));
    errors.clear();
    config::specFromJsonText("{\"name\": ", errors);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].field, "(file)");
    EXPECT_NE(errors[0].message.find("not valid JSON"), std::string::npos);
}

// --- 7. A dead owner is seen at once, by readers too, and a reused pid is no owner ---

TEST_F(Faults, RunsOfADeadProcessReadAsInterruptedEvenQueuedOnesAndSearches) {
    const std::string path = file("dead.db");
    int64_t running = 0, queued = 0, search = 0;
    {
        auto db = Database::open(path);
        const Added r = addRun(*db);
        running = r.run;
        queued = db->createRun(r.experiment, "amp", 1, 1, "{}", 100);
        db->markRunning(running, "{}");
        store::BatchSearchStore searches(*db);
        store::BatchSearchRow row;
        row.arm = "fp32";
        row.precision = "fp32";
        row.device = "cpu";
        row.spec_json = "{}";
        search = searches.create(row);

        const pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            _exit(0);
        }
        ASSERT_EQ(waitpid(child, nullptr, 0), child);
        const std::string owner = "owner_pid = " + std::to_string(child) + ", owner_token = '" +
                                  store::owner::processToken(store::owner::currentPid()) + "x'";
        const std::string sql = "UPDATE runs SET " + owner + "; UPDATE batch_searches SET " + owner;
        ASSERT_EQ(sqlite3_exec(db->handle(), sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    }
    {
        auto reader = Database::open(path, Database::Mode::ReadOnly);
        EXPECT_EQ(reader->run(running)->status, RunStatus::Interrupted);
        EXPECT_EQ(reader->run(queued)->status, RunStatus::Interrupted);
        EXPECT_NE(reader->run(queued)->error.find("never started"), std::string::npos);
        EXPECT_EQ(reader->run(running)->failure, FailureKind::Interrupted);
        EXPECT_EQ(store::BatchSearchStore(*reader).searches().at(0).status, "interrupted");
    }
    auto writer = Database::open(path);
    EXPECT_EQ(writer->recoveredRuns(), 2);
    EXPECT_EQ(store::BatchSearchStore(*writer).searches().at(0).status, "interrupted");
    (void)search;
}

TEST_F(Faults, WhyARunFailedIsStoredAsAKind) {
    const std::string path = file("kinds.db");
    auto db = Database::open(path);
    const Added r = addRun(*db);
    db->markRunning(r.run, "{}");
    db->finishRun(r.run, RunStatus::Failed, "out of memory: 80 GiB", FailureKind::OutOfMemory);
    EXPECT_EQ(Database::open(path, Database::Mode::ReadOnly)->run(r.run)->failure,
              FailureKind::OutOfMemory);
    db->markRunning(r.run, "{}");  // a rerun starts clean
    EXPECT_EQ(db->run(r.run)->failure, FailureKind::None);
    for (auto kind :
         {FailureKind::NonFinite, FailureKind::Data, FailureKind::Setup, FailureKind::Runtime,
          FailureKind::Recording, FailureKind::Cancelled, FailureKind::Interrupted}) {
        EXPECT_EQ(failureKindFromString(toString(kind)), kind);
    }
}

TEST_F(Faults, AReusedPidDoesNotKeepADeadRunRunning) {
    const std::string path = file("reused.db");
    auto db = Database::open(path);
    const Added r = addRun(*db);
    db->markRunning(r.run, "{}");
    EXPECT_EQ(db->run(r.run)->status, RunStatus::Running);  // we own it, and we live
    // The same pid, but another process's start time: the pid was reused.
    const std::string sql =
        "UPDATE runs SET owner_token = 'another-boot/1' WHERE id = " + std::to_string(r.run);
    ASSERT_EQ(sqlite3_exec(db->handle(), sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_EQ(db->run(r.run)->status, RunStatus::Interrupted);

    // A live process other than this one, with its own token, still owns its run.
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    const std::string token = store::owner::processToken(child);
    ASSERT_FALSE(token.empty());
    const std::string mine = "UPDATE runs SET owner_pid = " + std::to_string(child) +
                             ", owner_token = '" + token + "' WHERE id = " + std::to_string(r.run);
    ASSERT_EQ(sqlite3_exec(db->handle(), mine.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_EQ(db->run(r.run)->status, RunStatus::Running);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    EXPECT_EQ(db->run(r.run)->status, RunStatus::Interrupted);
}

// --- 8. Read-only places: readable, and nothing left behind ---

TEST_F(Faults, ReadOnlyFolderAndReadOnlyFileAreReadableAndLeaveNoFiles) {
    for (const bool folder_locked : {true, false}) {
        const fs::path sub = dir_ / (folder_locked ? "ro-folder" : "ro-file");
        fs::create_directories(sub);
        const std::string path = (sub / "r.db").string();
        {
            auto db = Database::open(path);
            addRun(*db, "kept");
        }
        ASSERT_FALSE(fs::exists(path + "-wal"));
        fs::permissions(path, fs::perms(0444));
        fs::permissions(sub, fs::perms(folder_locked ? 0555 : 0777));
        const std::string result = asUnprivileged([&]() -> std::string {
            try {
                auto db = Database::open(path, Database::Mode::ReadOnly);
                if (db->experiments().size() != 1 || db->runs().size() != 1) {
                    return "wrong contents";
                }
            } catch (const std::exception& e) {
                return e.what();
            }
            return "";
        });
        EXPECT_EQ(result, "") << (folder_locked ? "read-only folder" : "read-only file");
        EXPECT_FALSE(fs::exists(path + "-wal"));
        EXPECT_FALSE(fs::exists(path + "-shm"));
        fs::permissions(sub, fs::perms(0755));
    }
}

// --- 10. Small inputs ---

TEST_F(Faults, NamesAreBoundedAndFreeOfControlCharacters) {
    auto spec = *config::preset("default");
    spec.name = std::string(10 * 1024 * 1024, 'n');
    auto errors = config::validate(spec);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].field, "name");
    EXPECT_NE(errors[0].message.find("at most 200"), std::string::npos);
    EXPECT_LT(errors[0].toString().size(), 300u) << "the message repeats the whole name";

    spec.name = "evil\x1b]2;pwned\x07";
    errors = config::validate(spec);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].message.find("control characters"), std::string::npos);

    spec.name = "ok";
    spec.arms[0].name = std::string(65, 'a');
    errors = config::validate(spec);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].field, "arms[0].name");

    // What a terminal is shown of a stored name.
    EXPECT_EQ(ampbench::analysis::printable("a\x1b[2Jb\xC2\x9B"
                                            "c"),
              "a\\x1B[2Jb\\x9Bc");
    EXPECT_EQ(ampbench::analysis::printable("line\nbreak", false), "line\\x0Abreak");
}

TEST_F(Faults, ArmShorthandRefusesARepeatedKey) {
    std::string error;
    EXPECT_FALSE(config::parseArmShorthand("k=amp,accum=4,accum=8", error));
    EXPECT_NE(error.find("accum is given more than once"), std::string::npos) << error;
    EXPECT_TRUE(config::parseArmShorthand("k=amp,accum=4,lr=sqrt", error));
}
