#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include <regex>
#include <sstream>
#include "ScratchDir.h"
#include "StoreDowngrade.h"
#include "core/store/BatchSearchStore.h"

#include "core/store/Database.h"
#include "core/store/Export.h"
#include "core/store/RunRecorder.h"
#include "tests/e2e/Eventually.h"

namespace fs = std::filesystem;
using ampbench::store::Database;
using ampbench::store::RunRecorder;
using ampbench::store::StoreError;
using namespace ampbench::run;

namespace {

class StoreTest : public ampbench::test::ScratchDirTest {};

StepRecord makeStep(int64_t step) {
    StepRecord s;
    s.step = step;
    s.samples = step * 64;
    s.loss = 2.5 / static_cast<double>(step);
    s.lr = 1e-3;
    s.loss_scale = 65536.0;
    s.skipped = step % 5 == 0;
    s.grad_norm = s.skipped ? std::numeric_limits<double>::infinity() : 0.25 * step;
    s.step_ms = 12.5 + step;
    s.data_wait_ms = 0.125;
    s.timed = step > 2;
    s.mem_allocated = 1000 + step;
    s.mem_reserved = 2000 + step;
    s.mem_peak = (int64_t{1} << 40) + step;
    s.wall_s = 0.01 * step;
    return s;
}

void expectSameStep(const StepRecord& a, const StepRecord& b) {
    EXPECT_EQ(a.step, b.step);
    EXPECT_EQ(a.samples, b.samples);
    EXPECT_DOUBLE_EQ(a.loss, b.loss);
    EXPECT_DOUBLE_EQ(a.lr, b.lr);
    EXPECT_DOUBLE_EQ(a.loss_scale, b.loss_scale);
    EXPECT_EQ(a.skipped, b.skipped);
    EXPECT_DOUBLE_EQ(a.grad_norm, b.grad_norm);
    EXPECT_DOUBLE_EQ(a.step_ms, b.step_ms);
    EXPECT_DOUBLE_EQ(a.data_wait_ms, b.data_wait_ms);
    EXPECT_EQ(a.timed, b.timed);
    EXPECT_EQ(a.mem_allocated, b.mem_allocated);
    EXPECT_EQ(a.mem_reserved, b.mem_reserved);
    EXPECT_EQ(a.mem_peak, b.mem_peak);
    EXPECT_DOUBLE_EQ(a.wall_s, b.wall_s);
}

std::vector<StepRecord> makeSteps(int64_t first, int64_t last) {
    std::vector<StepRecord> rows;
    for (int64_t i = first; i <= last; ++i)
        rows.push_back(makeStep(i));
    return rows;
}

std::string readBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

using ampbench::test::rawExec;

/// Runs `fn`, expects a StoreError of `kind` and returns its message.
template <typename Fn>
std::string expectStoreError(StoreError::Kind kind, Fn fn) {
    try {
        fn();
    } catch (const StoreError& e) {
        EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no StoreError thrown";
    return {};
}

struct Fixture {
    int64_t experiment = 0;
    int64_t run = 0;
};

Fixture addRun(Database& db, const std::string& name = "exp") {
    Fixture f;
    f.experiment = db.createExperiment(name, R"({"name":"exp"})");
    f.run = db.createRun(f.experiment, "amp-fp16", 1, 42, R"({"precision":"amp-fp16"})", 100);
    return f;
}

}  // namespace

TEST(Records, StringsRoundTrip) {
    for (auto k : {EventKind::SkippedStep, EventKind::OutOfMemory, EventKind::NonFinite,
                   EventKind::Warning, EventKind::Info})
        EXPECT_EQ(eventKindFromString(toString(k)), k);
    for (auto s : {RunStatus::Queued, RunStatus::Running, RunStatus::Finished, RunStatus::Failed,
                   RunStatus::Cancelled, RunStatus::Interrupted})
        EXPECT_EQ(runStatusFromString(toString(s)), s);
    EXPECT_EQ(toString(EventKind::OutOfMemory), "out_of_memory");
    EXPECT_EQ(toString(RunStatus::Interrupted), "interrupted");
    try {
        runStatusFromString("bogus");
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("bogus"), std::string::npos);
    }
    EXPECT_THROW(eventKindFromString("Info"), std::invalid_argument);
}

TEST_F(StoreTest, NewFileGetsSchemaWalAndIdentity) {
    const std::string path = file("sub/dir/bench.db");  // parent folders are created
    auto db = Database::open(path);
    ASSERT_TRUE(fs::exists(path));
    sqlite3* h = db->handle();
    auto pragma = [&](const char* sql) {
        sqlite3_stmt* st = nullptr;
        EXPECT_EQ(sqlite3_prepare_v2(h, sql, -1, &st, nullptr), SQLITE_OK);
        EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
        std::string v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        return v;
    };
    EXPECT_EQ(pragma("PRAGMA user_version"), std::to_string(Database::kSchemaVersion));
    EXPECT_EQ(pragma("PRAGMA application_id"), std::to_string(0x414D5042));
    EXPECT_EQ(pragma("PRAGMA journal_mode"), "wal");
    EXPECT_EQ(pragma("PRAGMA foreign_keys"), "1");
    EXPECT_EQ(db->recoveredRuns(), 0);
    db.reset();
    EXPECT_NO_THROW(Database::open(path));  // reopening an up-to-date file
}

TEST_F(StoreTest, RoundTripsEveryField) {
    auto db = Database::open(file("a.db"));
    const int64_t exp = db->createExperiment("fp32 vs amp, mnist", R"({"seeds":[1,2]})");
    const int64_t run =
        db->createRun(exp, "amp-bf16", 2, 0xFFFFFFFFFFFFFFF0ull, R"({"lr":0.1})", 500);
    auto queued = db->run(run);
    ASSERT_TRUE(queued);
    EXPECT_EQ(queued->status, RunStatus::Queued);
    EXPECT_TRUE(queued->started_at.empty());

    db->markRunning(run, R"({"device":"cpu"})");
    const auto steps = makeSteps(1, 10);
    db->insertSteps(run, steps);
    StepRecord nan_step = makeStep(11);
    nan_step.loss = std::nan("");
    nan_step.grad_norm = -std::numeric_limits<double>::infinity();
    db->insertSteps(run, {nan_step});
    db->insertEvals(run, {{5, 320, 0.75, 0.8125, 1.5}, {10, 640, 0.5, 0.875, 3.0}});
    db->insertEvents(run, {{5, EventKind::SkippedStep, "inf in grads, scale 32768", 32768.0},
                           {7, EventKind::Warning, "slow \"loader\", 40%", 0.4}});
    db->finishRun(run, RunStatus::Failed, "diverged at step 11");
    db->setRunNotes(run, "run notes");
    db->setExperimentNotes(exp, "exp notes");
    db->renameExperiment(exp, "renamed");

    const auto exps = db->experiments();
    ASSERT_EQ(exps.size(), 1u);
    EXPECT_EQ(exps[0].id, exp);
    EXPECT_EQ(exps[0].name, "renamed");
    EXPECT_EQ(exps[0].spec_json, R"({"seeds":[1,2]})");
    EXPECT_EQ(exps[0].notes, "exp notes");
    EXPECT_EQ(exps[0].run_count, 1);
    const std::regex iso(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
    EXPECT_TRUE(std::regex_match(exps[0].created_at, iso)) << exps[0].created_at;

    const auto r = db->run(run);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->experiment_id, exp);
    EXPECT_EQ(r->experiment_name, "renamed");
    EXPECT_EQ(r->arm, "amp-bf16");
    EXPECT_EQ(r->arm_index, 2);
    EXPECT_EQ(r->seed, 0xFFFFFFFFFFFFFFF0ull);
    EXPECT_EQ(r->spec_json, R"({"lr":0.1})");
    EXPECT_EQ(r->env_json, R"({"device":"cpu"})");
    EXPECT_EQ(r->status, RunStatus::Failed);
    EXPECT_EQ(r->error, "diverged at step 11");
    EXPECT_EQ(r->notes, "run notes");
    EXPECT_TRUE(std::regex_match(r->started_at, iso)) << r->started_at;
    EXPECT_TRUE(std::regex_match(r->ended_at, iso)) << r->ended_at;
    EXPECT_EQ(r->last_step, 11);
    EXPECT_EQ(r->planned_steps, 500);
    EXPECT_EQ(db->runs().size(), 1u);
    EXPECT_EQ(db->runs(exp).size(), 1u);
    EXPECT_TRUE(db->runs(exp + 1).empty());

    const auto got = db->steps(run);
    ASSERT_EQ(got.size(), 11u);
    for (size_t i = 0; i < steps.size(); ++i)
        expectSameStep(got[i], steps[i]);
    EXPECT_TRUE(std::isnan(got[10].loss));  // SQLite keeps NaN as NULL; it reads back as NaN
    EXPECT_TRUE(std::isinf(got[10].grad_norm) && got[10].grad_norm < 0);
    EXPECT_EQ(db->stepCount(run), 11);

    const auto evals = db->evals(run);
    ASSERT_EQ(evals.size(), 2u);
    EXPECT_EQ(evals[1].step, 10);
    EXPECT_EQ(evals[1].samples, 640);
    EXPECT_DOUBLE_EQ(evals[1].val_loss, 0.5);
    EXPECT_DOUBLE_EQ(evals[1].val_accuracy, 0.875);
    EXPECT_DOUBLE_EQ(evals[1].wall_s, 3.0);
    EXPECT_EQ(db->evals(run, 5).size(), 1u);

    const auto events = db->events(run);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].kind, EventKind::SkippedStep);
    EXPECT_EQ(events[0].message, "inf in grads, scale 32768");
    EXPECT_DOUBLE_EQ(events[0].value, 32768.0);
    EXPECT_EQ(events[1].step, 7);
    EXPECT_EQ(events[1].kind, EventKind::Warning);
}

// A foreign string that is not UTF-8 (a script's stderr, a remote program's output)
// is stored with U+FFFD for each bad byte, whichever writer brings it.
TEST_F(StoreTest, TextThatIsNotUtf8IsStoredWithReplacementCharacters) {
    auto db = Database::open(file("a.db"));
    const int64_t exp = db->createExperiment("exp \xFF", "{}");
    const int64_t run = db->createRun(exp, "fp32", 0, 1, "{}", 10);
    db->markRunning(run, "{}");
    db->insertEvents(run, {{1, EventKind::Warning, "loader \xC3 said \xFE\xFF", 0.0}});
    db->finishRun(run, RunStatus::Failed, "bad \xED\xA0\x80 end");
    db->setRunNotes(run, "note \x80");
    const std::string fffd = "\xEF\xBF\xBD";
    EXPECT_EQ(db->experiment(exp)->name, "exp " + fffd);
    const auto r = db->run(run);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->error, "bad " + fffd + fffd + fffd + " end");
    EXPECT_EQ(r->notes, "note " + fffd);
    EXPECT_EQ(db->events(run).at(0).message, "loader " + fffd + " said " + fffd + fffd);
    const std::string valid = "caf\xC3\xA9 \xE2\x80\x93 \xF0\x9F\x98\x80";
    db->setRunNotes(run, valid);
    EXPECT_EQ(db->run(run)->notes, valid) << "valid text is stored as it is";
}

TEST_F(StoreTest, StepsAfterAndLimitAndRetriedStepOverwrites) {
    auto db = Database::open(file("a.db"));
    const auto f = addRun(*db);
    db->insertSteps(f.run, makeSteps(1, 50));
    auto page = db->steps(f.run, 20, 5);
    ASSERT_EQ(page.size(), 5u);
    EXPECT_EQ(page.front().step, 21);
    EXPECT_EQ(page.back().step, 25);
    EXPECT_EQ(db->steps(f.run, 45).size(), 5u);
    EXPECT_TRUE(db->steps(f.run, 50).empty());
    EXPECT_EQ(db->steps(f.run, 0, 0).size(), 50u);

    StepRecord retry = makeStep(30);
    retry.loss = 99.0;
    db->insertSteps(f.run, {retry});
    EXPECT_EQ(db->stepCount(f.run), 50);
    EXPECT_DOUBLE_EQ(db->steps(f.run, 29, 1).at(0).loss, 99.0);
}

TEST_F(StoreTest, SecondConnectionSeesOnlyCommittedRows) {
    const std::string path = file("shared.db");
    auto writer = Database::open(path);
    const auto f = addRun(*writer);
    auto reader = Database::open(path, Database::Mode::ReadOnly);
    const int64_t v0 = reader->dataVersion();

    writer->begin();
    writer->insertSteps(f.run, makeSteps(1, 3));  // joins the open transaction
    EXPECT_EQ(writer->stepCount(f.run), 3);
    EXPECT_EQ(reader->stepCount(f.run), 0);
    EXPECT_EQ(reader->dataVersion(), v0);
    writer->commit();

    EXPECT_EQ(reader->stepCount(f.run), 3);
    EXPECT_NE(reader->dataVersion(), v0);
    EXPECT_EQ(reader->runs().at(0).last_step, 3);

    writer->begin();
    writer->insertSteps(f.run, makeSteps(4, 6));
    writer->rollback();
    EXPECT_EQ(reader->stepCount(f.run), 3);
    EXPECT_EQ(writer->stepCount(f.run), 3);
}

TEST_F(StoreTest, ReadOnlyConnectionCannotWrite) {
    const std::string path = file("ro.db");
    Database::open(path);
    auto ro = Database::open(path, Database::Mode::ReadOnly);
    const std::string msg =
        expectStoreError(StoreError::Kind::Io, [&] { ro->createExperiment("x", "{}"); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST_F(StoreTest, RecorderFlushesEveryIntervalAndOnFinish) {
    const std::string path = file("rec.db");
    auto db = Database::open(path);
    auto watcher = Database::open(path, Database::Mode::ReadOnly);
    const auto f = addRun(*db);
    {
        RunRecorder rec(*db, f.run, std::chrono::milliseconds(0));
        RunInfo info;
        info.env_json = R"({"host":"test"})";
        rec.onStart(info);
        EXPECT_EQ(watcher->run(f.run)->status, RunStatus::Running);
        EXPECT_EQ(watcher->run(f.run)->env_json, R"({"host":"test"})");
        rec.onStep(makeStep(1));
        EXPECT_EQ(watcher->stepCount(f.run), 1);
        rec.onEval({1, 64, 1.0, 0.5, 0.1});
        rec.onEvent({1, EventKind::Info, "hello", 0.0});
        EXPECT_EQ(watcher->evals(f.run).size(), 1u);
        EXPECT_EQ(watcher->events(f.run).size(), 1u);
    }
    const auto g = addRun(*db, "slow");
    {
        RunRecorder rec(*db, g.run, std::chrono::hours(1));
        rec.onStart({});
        for (int i = 1; i <= 20; ++i)
            rec.onStep(makeStep(i));
        rec.onEvent({3, EventKind::SkippedStep, "skip", 1024.0});
        EXPECT_EQ(watcher->stepCount(g.run), 0);  // buffered: the interval has not passed
        rec.onFinish({RunStatus::Cancelled, "", 20, 1.0});
        EXPECT_EQ(watcher->stepCount(g.run), 20);
        EXPECT_EQ(watcher->events(g.run).size(), 1u);
        EXPECT_EQ(watcher->run(g.run)->status, RunStatus::Cancelled);
    }
    const auto h = addRun(*db, "dtor");
    {
        RunRecorder rec(*db, h.run, std::chrono::hours(1));
        rec.onStep(makeStep(1));
    }  // the destructor flushes
    EXPECT_EQ(watcher->stepCount(h.run), 1);
}

// A producer that goes quiet (an evaluation, a script's pause) says so: what the
// recorder holds is committed then, not when the next row comes; under another
// program's lock the rows stay held, onIdle says so, and a later call writes them.
TEST_F(StoreTest, RecorderCommitsWhatItHoldsWhenTheProducerIsIdle) {
    const std::string path = file("idle.db");
    auto db = Database::open(path);
    auto watcher = Database::open(path, Database::Mode::ReadOnly);
    const auto f = addRun(*db);
    RunRecorder rec(*db, f.run, std::chrono::hours(1));
    rec.onStart({});
    EXPECT_FALSE(rec.onIdle()) << "nothing held";
    for (int i = 1; i <= 20; ++i)
        rec.onStep(makeStep(i));
    EXPECT_EQ(watcher->stepCount(f.run), 0);
    EXPECT_FALSE(rec.onIdle());
    EXPECT_EQ(watcher->stepCount(f.run), 20);
    EXPECT_EQ(rec.pendingRows(), 0u);

    auto other = Database::open(path);
    other->begin();
    other->createExperiment("holds the lock", "{}");
    rec.onStep(makeStep(21));
    EXPECT_TRUE(rec.onIdle()) << "held: the lock is another program's";
    EXPECT_EQ(rec.pendingRows(), 1u);
    other->commit();
    EXPECT_TRUE(ampbench::test::eventually([&] { return !rec.onIdle(); }));
    EXPECT_EQ(watcher->stepCount(f.run), 21);
}

TEST_F(StoreTest, RecorderFlushFailureKeepsTheRowsAndSaysHowMany) {
    auto db = Database::open(file("fail.db"));
    const auto f = addRun(*db);
    RunRecorder rec(*db, f.run, std::chrono::hours(1));
    rec.onStep(makeStep(1));
    rec.onStep(makeStep(2));
    db->deleteRun(f.run);  // the foreign key now rejects the buffered rows
    const std::string message = expectStoreError(StoreError::Kind::Io, [&] { rec.flush(); });
    EXPECT_NE(message.find("2 steps, 0 evaluations and 0 events of run"), std::string::npos)
        << message;
    EXPECT_EQ(rec.pendingRows(), 2u);                    // kept, not dropped
    EXPECT_EQ(sqlite3_get_autocommit(db->handle()), 1);  // rolled back, no transaction left
}

TEST_F(StoreTest, RecoversRunsOfDeadProcessesOnThisHost) {
    const std::string path = file("recover.db");
    int64_t dead_child = 0, no_such_pid = 0, ours = 0, other_host = 0, queued = 0;
    {
        auto db = Database::open(path);
        const auto f = addRun(*db);
        dead_child = f.run;
        no_such_pid = db->createRun(f.experiment, "fp32", 0, 1, "{}", 10);
        ours = db->createRun(f.experiment, "fp32", 0, 2, "{}", 10);
        other_host = db->createRun(f.experiment, "fp32", 0, 3, "{}", 10);
        queued = db->createRun(f.experiment, "fp32", 0, 4, "{}", 10);
        for (int64_t id : {dead_child, no_such_pid, ours, other_host})
            db->markRunning(id, "{}");

        const pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0)
            _exit(0);
        ASSERT_EQ(waitpid(child, nullptr, 0), child);
        const std::string sql =
            "UPDATE runs SET owner_pid = " + std::to_string(child) +
            " WHERE id = " + std::to_string(dead_child) + ";" +
            "UPDATE runs SET owner_pid = " + std::to_string((1 << 22) + 12345) +
            " WHERE id = " + std::to_string(no_such_pid) + ";" +
            "UPDATE runs SET owner_pid = 1, owner_host = 'elsewhere.invalid' WHERE id = " +
            std::to_string(other_host) + ";";
        ASSERT_EQ(sqlite3_exec(db->handle(), sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    }
    {
        // A reader writes nothing, yet shows the dead runs as interrupted.
        auto ro = Database::open(path, Database::Mode::ReadOnly);
        EXPECT_EQ(ro->recoveredRuns(), 0);
        EXPECT_EQ(ro->run(dead_child)->status, RunStatus::Interrupted);
        EXPECT_EQ(ro->run(ours)->status, RunStatus::Running);
        sqlite3* raw = nullptr;
        ASSERT_EQ(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
        sqlite3_stmt* st = nullptr;
        sqlite3_prepare_v2(raw, "SELECT status FROM runs WHERE id = ?1", -1, &st, nullptr);
        sqlite3_bind_int64(st, 1, dead_child);
        ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
        EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "running");
        sqlite3_finalize(st);
        sqlite3_close(raw);
    }

    auto db = Database::open(path);
    EXPECT_EQ(db->recoveredRuns(), 2);
    for (int64_t id : {dead_child, no_such_pid}) {
        const auto r = db->run(id);
        EXPECT_EQ(r->status, RunStatus::Interrupted);
        EXPECT_EQ(r->error, "the process writing this run ended without finishing it");
    }
    EXPECT_EQ(db->run(ours)->status, RunStatus::Running);
    EXPECT_EQ(db->run(other_host)->status, RunStatus::Running);
    EXPECT_EQ(db->run(queued)->status, RunStatus::Queued);
    EXPECT_EQ(Database::open(path)->recoveredRuns(), 0);
}

TEST_F(StoreTest, ARunItsDeadWriterLeftCanBeTakenOverButNoRecordedEndIsUndone) {
    const std::string path = file("resume.db");
    int64_t orphan = 0, never = 0, requeued = 0, finished = 0;
    std::string started_at;
    {
        auto db = Database::open(path);
        const auto f = addRun(*db);
        orphan = f.run;
        never = db->createRun(f.experiment, "fp32", 0, 1, "{}", 10);
        requeued = db->createRun(f.experiment, "fp32", 0, 2, "{}", 10);
        finished = db->createRun(f.experiment, "fp32", 0, 3, "{}", 10);
        for (int64_t id : {orphan, requeued, finished})
            db->markRunning(id, "{\"device\":\"cpu\"}");
        db->finishRun(requeued, RunStatus::Interrupted, "requeued by Slurm at step 3",
                      FailureKind::Interrupted);
        db->finishRun(finished, RunStatus::Finished, "");
        started_at = db->run(orphan)->started_at;
        const pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0)
            _exit(0);
        ASSERT_EQ(waitpid(child, nullptr, 0), child);
        const std::string sql = "UPDATE runs SET owner_pid = " + std::to_string(child) +
                                " WHERE id IN (" + std::to_string(orphan) + ", " +
                                std::to_string(never) + ")";
        ASSERT_EQ(sqlite3_exec(db->handle(), sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    }
    auto db = Database::open(path);  // marks the dead writer's two runs interrupted
    ASSERT_EQ(db->recoveredRuns(), 2);
    for (int64_t id : {orphan, never})
        EXPECT_TRUE(Database::endedWithoutWriter(*db->run(id)));
    EXPECT_FALSE(Database::endedWithoutWriter(*db->run(requeued)));
    EXPECT_FALSE(Database::endedWithoutWriter(*db->run(finished)));

    db->resumeRun(orphan, RunStatus::Running);
    db->resumeRun(never, RunStatus::Queued);
    const auto r = db->run(orphan);
    EXPECT_EQ(r->status, RunStatus::Running);
    EXPECT_EQ(r->started_at, started_at);  // its start and environment are kept
    EXPECT_EQ(r->env_json, "{\"device\":\"cpu\"}");
    EXPECT_TRUE(r->error.empty());
    EXPECT_EQ(db->run(never)->status, RunStatus::Queued);
    // Owned by this process now: opening again recovers nothing.
    EXPECT_EQ(Database::open(path)->recoveredRuns(), 0);
    // Taken over, it can end as it truly did.
    db->finishRun(orphan, RunStatus::Finished, "");
    EXPECT_EQ(db->run(orphan)->status, RunStatus::Finished);

    for (int64_t id : {requeued, finished, orphan}) {
        const auto before = db->run(id);
        try {
            db->resumeRun(id, RunStatus::Running);
            ADD_FAILURE() << "run " << id << " was resumed after its end was recorded";
        } catch (const StoreError& e) {
            EXPECT_EQ(e.kind(), StoreError::Kind::InUse);
            EXPECT_NE(std::string(e.what()).find("is not resumed"), std::string::npos) << e.what();
        }
        EXPECT_EQ(db->run(id)->status, before->status);
        EXPECT_EQ(db->run(id)->error, before->error);
    }
    EXPECT_THROW(db->resumeRun(99999, RunStatus::Running), StoreError);
    EXPECT_THROW(db->resumeRun(never, RunStatus::Finished), StoreError);
}

TEST_F(StoreTest, RefusesGarbageFileUntouched) {
    const std::string path = file("notes.txt");
    {
        std::ofstream out(path, std::ios::binary);
        std::mt19937 rng(7);
        for (int i = 0; i < 5000; ++i)
            out << static_cast<char>('a' + rng() % 26);
    }
    const std::string before = readBytes(path);
    const std::string msg =
        expectStoreError(StoreError::Kind::NotADatabase, [&] { Database::open(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("left untouched"), std::string::npos) << msg;
    expectStoreError(StoreError::Kind::NotADatabase,
                     [&] { Database::open(path, Database::Mode::ReadOnly); });
    EXPECT_EQ(readBytes(path), before);
    EXPECT_FALSE(fs::exists(path + "-wal"));
    EXPECT_FALSE(fs::exists(path + "-journal"));

    const std::string tiny = file("tiny.db");
    std::ofstream(tiny, std::ios::binary) << "SQLite";
    expectStoreError(StoreError::Kind::NotADatabase, [&] { Database::open(tiny); });
    EXPECT_EQ(readBytes(tiny), "SQLite");
}

TEST_F(StoreTest, EmptyFileIsTreatedAsNew) {
    const std::string path = file("empty.db");
    std::ofstream(path, std::ios::binary).close();
    auto db = Database::open(path);
    EXPECT_GT(db->createExperiment("e", "{}"), 0);
}

TEST_F(StoreTest, RefusesNewerSchemaUntouched) {
    const std::string path = file("newer.db");
    {
        auto db = Database::open(path);
        addRun(*db);
    }
    rawExec(path, "PRAGMA user_version = " + std::to_string(Database::kSchemaVersion + 1) +
                      "; PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;");
    const std::string before = readBytes(path);
    const auto mtime = fs::last_write_time(path);
    const std::string msg =
        expectStoreError(StoreError::Kind::NewerSchema, [&] { Database::open(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(
        msg.find("newer ampbench (schema " + std::to_string(Database::kSchemaVersion + 1) +
                 ", this build reads up to " + std::to_string(Database::kSchemaVersion) + ")"),
        std::string::npos)
        << msg;
    expectStoreError(StoreError::Kind::NewerSchema,
                     [&] { Database::open(path, Database::Mode::ReadOnly); });
    EXPECT_EQ(readBytes(path), before);
    EXPECT_EQ(fs::last_write_time(path), mtime);
}

TEST_F(StoreTest, RefusesNewerSchemaStillInTheWal) {
    const std::string path = file("newer-wal.db");
    auto db = Database::open(path);  // keeps the WAL alive so the header stays old
    sqlite3* h = db->handle();
    ASSERT_EQ(sqlite3_exec(h, "PRAGMA wal_autocheckpoint = 0; PRAGMA user_version = 99", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    expectStoreError(StoreError::Kind::NewerSchema, [&] { Database::open(path); });
}

TEST_F(StoreTest, RefusesForeignDatabases) {
    const std::string tables = file("other.sqlite");
    rawExec(tables,
            "CREATE TABLE contacts(id INTEGER PRIMARY KEY, name TEXT);"
            "INSERT INTO contacts(name) VALUES('ada');");
    const std::string before = readBytes(tables);
    const std::string msg =
        expectStoreError(StoreError::Kind::ForeignDatabase, [&] { Database::open(tables); });
    EXPECT_NE(msg.find("contacts"), std::string::npos) << msg;
    EXPECT_EQ(readBytes(tables), before);

    const std::string appid = file("appid.sqlite");
    rawExec(appid, "PRAGMA application_id = 1234;");
    const std::string before_id = readBytes(appid);
    expectStoreError(StoreError::Kind::ForeignDatabase, [&] { Database::open(appid); });
    expectStoreError(StoreError::Kind::ForeignDatabase,
                     [&] { Database::open(appid, Database::Mode::ReadOnly); });
    EXPECT_EQ(readBytes(appid), before_id);
}

TEST_F(StoreTest, CannotOpenMissingReadOnlyOrUnreachablePath) {
    const std::string missing = file("missing.db");
    const std::string msg = expectStoreError(
        StoreError::Kind::CannotOpen, [&] { Database::open(missing, Database::Mode::ReadOnly); });
    EXPECT_NE(msg.find(missing), std::string::npos) << msg;
    EXPECT_FALSE(fs::exists(missing));

    const std::string blocker = file("plain-file");
    std::ofstream(blocker) << "x";
    const std::string under = blocker + "/sub/bench.db";  // a file stands where a folder must
    const std::string msg2 =
        expectStoreError(StoreError::Kind::CannotOpen, [&] { Database::open(under); });
    EXPECT_NE(msg2.find(under), std::string::npos) << msg2;
    expectStoreError(StoreError::Kind::CannotOpen, [&] { Database::open(dir_.string()); });
}

TEST_F(StoreTest, DeletesCascade) {
    auto db = Database::open(file("del.db"));
    const auto f = addRun(*db);
    const int64_t other = db->createRun(f.experiment, "fp32", 0, 7, "{}", 10);
    for (int64_t id : {f.run, other}) {
        db->insertSteps(id, makeSteps(1, 5));
        db->insertEvals(id, {{5, 320, 1.0, 0.5, 1.0}});
        db->insertEvents(id, {{2, EventKind::Info, "x", 0.0}});
    }
    db->deleteRun(other);
    EXPECT_FALSE(db->run(other));
    EXPECT_EQ(db->stepCount(other), 0);
    EXPECT_TRUE(db->evals(other).empty());
    EXPECT_TRUE(db->events(other).empty());
    EXPECT_EQ(db->stepCount(f.run), 5);
    EXPECT_EQ(db->experiment(f.experiment)->run_count, 1);

    db->deleteExperiment(f.experiment);
    EXPECT_TRUE(db->experiments().empty());
    EXPECT_TRUE(db->runs().empty());
    EXPECT_EQ(db->stepCount(f.run), 0);
    EXPECT_TRUE(db->events(f.run).empty());
    expectStoreError(StoreError::Kind::NotFound, [&] { db->deleteRun(f.run); });
    expectStoreError(StoreError::Kind::NotFound,
                     [&] { db->finishRun(f.run, RunStatus::Failed, ""); });
    expectStoreError(StoreError::Kind::NotFound,
                     [&] { db->createRun(f.experiment, "fp32", 0, 1, "{}", 1); });
}

TEST_F(StoreTest, ExperimentsNewestFirst) {
    auto db = Database::open(file("order.db"));
    const int64_t a = db->createExperiment("a", "{}");
    const int64_t b = db->createExperiment("b", "{}");
    const auto list = db->experiments();
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0].id, b);
    EXPECT_EQ(list[1].id, a);
}

TEST_F(StoreTest, CsvHasOneLinePerStoredValue) {
    auto db = Database::open(file("csv.db"));
    const auto f = addRun(*db, "fp32, \"quoted\"");
    db->insertSteps(f.run, makeSteps(1, 7));
    db->insertEvals(f.run, {{7, 448, 0.5, 0.9, 2.0}});
    db->insertEvents(
        f.run, {{5, EventKind::SkippedStep, "s", 32768.0}, {6, EventKind::Warning, "w", 0.0}});
    std::ostringstream out;
    const int64_t lines = ampbench::store::exportCsv(*db, {f.run}, out);
    EXPECT_EQ(lines, 7 * 11 + 1 * 2 + 2);

    std::istringstream in(out.str());
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "run_id,experiment,arm,seed,table,step,samples,metric,value");
    int64_t data = 0;
    while (std::getline(in, line))
        ++data;
    EXPECT_EQ(data, lines);
    const std::string text = out.str();
    EXPECT_NE(text.find(std::to_string(f.run) +
                        ",\"fp32, \"\"quoted\"\"\",amp-fp16,42,step,1,64,loss,2.5\n"),
              std::string::npos)
        << text.substr(0, 300);
    EXPECT_NE(text.find(",event,5,,skipped_step,32768\n"), std::string::npos);
    EXPECT_NE(text.find(",step,5,320,grad_norm,inf\n"), std::string::npos);

    expectStoreError(StoreError::Kind::NotFound, [&] {
        std::ostringstream sink;
        ampbench::store::exportCsv(*db, {f.run + 100}, sink);
    });
}

TEST_F(StoreTest, JsonExportParses) {
    auto db = Database::open(file("json.db"));
    const auto f = addRun(*db);
    db->markRunning(f.run, R"({"device":"cpu"})");
    db->insertSteps(f.run, makeSteps(1, 6));
    db->insertEvals(f.run, {{6, 384, 0.5, 0.9, 2.0}});
    db->insertEvents(f.run, {{5, EventKind::SkippedStep, "s", 32768.0}});
    std::ostringstream out;
    ampbench::store::exportJson(*db, {f.run}, out);
    const auto doc = nlohmann::json::parse(out.str());
    ASSERT_EQ(doc.at("runs").size(), 1u);
    const auto& run = doc["runs"][0];
    EXPECT_EQ(run.at("arm"), "amp-fp16");
    EXPECT_EQ(run.at("seed"), 42u);
    EXPECT_EQ(run.at("status"), "running");
    EXPECT_EQ(run.at("env").at("device"), "cpu");
    EXPECT_EQ(run.at("spec").at("precision"), "amp-fp16");
    EXPECT_EQ(run.at("steps").size(), 6u);
    EXPECT_EQ(run.at("steps")[4].at("grad_norm"), "inf");
    EXPECT_EQ(run.at("evals").size(), 1u);
    EXPECT_EQ(run.at("events")[0].at("kind"), "skipped_step");
}

// A database of schema 1 (before the max-batch tables) is migrated in place and
// keeps its rows.
TEST(StoreMigration, Version1IsMigratedKeepingRows) {
    auto path = (std::filesystem::temp_directory_path() /
                 ("ampbench-v1-" + std::to_string(::getpid()) + ".db"))
                    .string();
    std::filesystem::remove(path);
    {
        auto db = Database::open(path);
        auto e = db->createExperiment("old", "{}");
        db->createRun(e, "fp32", 0, 1, "{}", 10);
    }
    {
        // Turn it back into what version 1 wrote.
        sqlite3* raw = nullptr;
        ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
        ASSERT_EQ(sqlite3_exec(raw,
                               (std::string(ampbench::test::kBackToSchema5) +
                                "DROP TABLE batch_trials; DROP TABLE batch_searches; "
                                "ALTER TABLE experiments DROP COLUMN tags; "
                                "ALTER TABLE experiments DROP COLUMN trashed_at; "
                                "CREATE TABLE runs_v1 (id INTEGER PRIMARY KEY, experiment_id "
                                "INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE, "
                                "arm TEXT NOT NULL, arm_index INTEGER NOT NULL DEFAULT 0, seed "
                                "INTEGER NOT NULL DEFAULT 0, spec_json TEXT NOT NULL DEFAULT '{}', "
                                "env_json TEXT NOT NULL DEFAULT '', status TEXT NOT NULL DEFAULT "
                                "'queued', error TEXT NOT NULL DEFAULT '', notes TEXT NOT NULL "
                                "DEFAULT '', started_at TEXT NOT NULL DEFAULT '', ended_at TEXT "
                                "NOT NULL DEFAULT '', planned_steps INTEGER NOT NULL DEFAULT 0, "
                                "owner_pid INTEGER, owner_host TEXT, created_at TEXT NOT NULL); "
                                "INSERT INTO runs_v1 SELECT id, experiment_id, arm, arm_index, "
                                "seed, spec_json, env_json, status, error, notes, started_at, "
                                "ended_at, planned_steps, owner_pid, owner_host, created_at FROM "
                                "runs; DROP TABLE runs; ALTER TABLE runs_v1 RENAME TO runs; "
                                "CREATE INDEX runs_by_experiment ON runs(experiment_id, "
                                "arm_index); CREATE INDEX runs_by_status ON runs(status); "
                                "PRAGMA user_version = 1;")
                                   .c_str(),
                               nullptr, nullptr, nullptr),
                  SQLITE_OK);
        sqlite3_close(raw);
    }
    auto db = Database::open(path);
    EXPECT_EQ(db->experiments().size(), 1u);
    EXPECT_EQ(db->runs().size(), 1u);
    ampbench::store::BatchSearchStore searches(*db);
    ampbench::store::BatchSearchRow row;
    row.arm = "fp32";
    row.precision = "fp32";
    row.device = "cpu";
    row.spec_json = "{}";
    auto id = searches.create(row);
    searches.addTrial(id, 0, {64, "fits", 1000, 1.5, ""});
    EXPECT_EQ(searches.searches().at(0).trials.size(), 1u);
    db.reset();
    std::filesystem::remove(path);
}

// A rerun is linked to the run it repeats; deleting that run keeps the rerun and
// forgets the link. Each run keeps the record of the files it read.
TEST_F(StoreTest, RerunsAreLinkedAndOutliveTheirOriginal) {
    auto db = Database::open(file("rerun.db"));
    const auto f = addRun(*db);
    const int64_t again = db->createExperiment("again", "{}");
    const int64_t rerun =
        db->createRun(again, "fp32", 0, 1, "{}", 10, R"([{"field":"data.path"}])", f.run);
    EXPECT_EQ(db->run(rerun)->rerun_of, f.run);
    EXPECT_EQ(db->run(rerun)->inputs_json, R"([{"field":"data.path"}])");
    EXPECT_EQ(db->run(f.run)->rerun_of, 0);
    ASSERT_EQ(db->rerunsOf(f.experiment).size(), 1u);
    EXPECT_EQ(db->rerunsOf(f.experiment).front().id, rerun);
    EXPECT_TRUE(db->rerunsOf(again).empty());
    db->deleteExperiment(f.experiment);
    ASSERT_TRUE(db->run(rerun));
    EXPECT_EQ(db->run(rerun)->rerun_of, 0);
}
