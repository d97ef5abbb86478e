// What an ingest refuses to believe: streams of two databases under one host name
// stay apart (and older streams without a database id still ingest), records that
// contradict the rows here are reported and skipped while identical re-sends stay
// quiet, two ingests of one stream at once store each row once, a held lock is waited
// out as training waits it out, and numbers and names beyond their fields are refused.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "ScratchDir.h"
#include "StoreDowngrade.h"
#include "core/store/Database.h"
#include "core/store/ImportStore.h"
#include "core/store/RunRecorder.h"
#include "core/store/StoreError.h"
#include "core/stream/Ingestor.h"
#include "core/stream/RecordStream.h"
#include "core/stream/Tail.h"

using ampbench::store::Database;
using ampbench::store::ImportStore;
using ampbench::store::SequencedRecord;
using ampbench::store::StoreError;
using namespace ampbench::run;
using namespace ampbench::stream;

namespace {

constexpr int64_t kTop = std::numeric_limits<int64_t>::max();

StepRecord stepOf(int64_t n) {
    StepRecord s;
    s.step = n;
    s.samples = n * 32;
    s.loss = 2.0 / static_cast<double>(n);
    s.lr = 0.1;
    s.loss_scale = 1.0;
    s.grad_norm = 0.5 * static_cast<double>(n);
    s.step_ms = 3.0;
    s.data_wait_ms = 0.25;
    s.timed = true;
    s.wall_s = 0.01 * static_cast<double>(n);
    return s;
}

std::string withField(const std::string& line, const std::string& key, const nlohmann::json& v) {
    auto j = nlohmann::json::parse(line);
    j[key] = v;
    return j.dump();
}

class StreamConsistency : public ampbench::test::ScratchDirTest {
  protected:
    /// An experiment `name` with one run of `steps` steps (an evaluation every 10, an
    /// event at the end), as a server records it. Returns the run's id.
    static int64_t trainedRun(Database& db, int64_t steps, const std::string& name = "exp",
                              RunStatus status = RunStatus::Finished) {
        const int64_t exp = db.createExperiment(name, R"({"name":")" + name + R"("})");
        const int64_t run =
            db.createRun(exp, "amp", 0, 7, R"({"name":"amp","arm":")" + name + R"("})", steps);
        db.markRunning(run, R"({"hostname":"localhost"})");
        for (int64_t n = 1; n <= steps; ++n) {
            db.insertSteps(run, {stepOf(n)});
            if (n % 10 == 0)
                db.insertEvals(run, {{n, n * 32, 0.5, 0.75, 0.01 * static_cast<double>(n)}});
        }
        db.insertEvents(run, {{steps, EventKind::Info, "done", 0.0}});
        if (status != RunStatus::Running)
            db.finishRun(run, status, "");
        return run;
    }

    /// What `tail` of this database writes (host name "localhost"), with the
    /// database's id in its header or, as older builds wrote it, without.
    static std::vector<std::string> streamOf(const Database& db, std::vector<int64_t> runs,
                                             bool with_id = true, int64_t since = 0) {
        std::vector<std::string> lines{encode(
            makeHeader(R"({"hostname":"localhost"})", with_id ? db.databaseId() : std::string()))};
        Tail tail(db, std::move(runs), since);
        auto sink = [&](const Record& r) { lines.push_back(encode(r)); };
        tail.poll(sink);
        tail.closeAll(sink);
        return lines;
    }

    struct Result {
        IngestCounts counts;
        std::vector<IngestProblem> problems;
        std::string all() const {
            std::string out;
            for (const auto& p : problems)
                out += "line " + std::to_string(p.line) + ": " + p.message + "\n";
            return out;
        }
        size_t count(IngestProblem::Kind kind) const {
            return static_cast<size_t>(
                std::count_if(problems.begin(), problems.end(),
                              [&](const IngestProblem& p) { return p.kind == kind; }));
        }
    };
    static Result ingest(Database& db, const std::vector<std::string>& lines,
                         const std::string& origin = {}) {
        Ingestor in(db, origin);
        for (const auto& l : lines)
            in.feed(l);
        in.finish();
        return {in.counts(), in.problems()};
    }

    /// The rows of two runs as stream lines (exact: every field, the seq too).
    static std::vector<std::string> rowsOf(const Database& db, int64_t run) {
        std::vector<std::string> out;
        for (const auto& r : db.recordsSince(run, 0))
            out.push_back(encode(RowRecord{1, r}));
        return out;
    }
};

// --- origins ---

// Two servers whose streams both say "localhost" and use the same ids (experiment 1,
// run 1): each keeps its own experiment and run here, row for row.
TEST_F(StreamConsistency, TwoDatabasesUnderOneHostNameStayApart) {
    auto a = Database::open(file("a.db"));
    auto b = Database::open(file("b.db"));
    const int64_t run_a = trainedRun(*a, 30, "on a");
    const int64_t run_b = trainedRun(*b, 12, "on b");
    ASSERT_EQ(run_a, run_b);
    ASSERT_FALSE(a->databaseId().empty());
    ASSERT_NE(a->databaseId(), b->databaseId());

    auto local = Database::open(file("local.db"));
    const auto first = ingest(*local, streamOf(*a, {run_a}));
    const auto second = ingest(*local, streamOf(*b, {run_b}));
    EXPECT_TRUE(first.problems.empty()) << first.all();
    EXPECT_TRUE(second.problems.empty()) << second.all();
    EXPECT_EQ(second.counts.experiments, 1);
    EXPECT_EQ(second.counts.runs, 1);
    ASSERT_EQ(local->runs().size(), 2u);
    const auto mine_a = ImportStore(*local).runFromOrigin("localhost", a->databaseId(), run_a);
    const auto mine_b = ImportStore(*local).runFromOrigin("localhost", b->databaseId(), run_b);
    ASSERT_TRUE(mine_a && mine_b);
    EXPECT_NE(*mine_a, *mine_b);
    EXPECT_EQ(rowsOf(*local, *mine_a), rowsOf(*a, run_a));
    EXPECT_EQ(rowsOf(*local, *mine_b), rowsOf(*b, run_b));
    EXPECT_EQ(local->experiment(local->run(*mine_b)->experiment_id)->name, "on b");

    // Both again, one after the other in one input: nothing new, nothing mixed.
    auto both = streamOf(*a, {run_a});
    const auto more = streamOf(*b, {run_b});
    both.insert(both.end(), more.begin(), more.end());
    const auto again = ingest(*local, both);
    EXPECT_TRUE(again.problems.empty()) << again.all();
    EXPECT_EQ(again.counts.rows_added, 0);
    EXPECT_EQ(again.counts.rows_present,
              static_cast<int64_t>(rowsOf(*a, run_a).size() + rowsOf(*b, run_b).size()));
    EXPECT_EQ(local->runs().size(), 2u);
}

// Streams of two databases in one input, into an empty database: two experiments.
TEST_F(StreamConsistency, StreamsOfTwoDatabasesInOneInputStayApart) {
    auto a = Database::open(file("a.db"));
    auto b = Database::open(file("b.db"));
    const int64_t run = trainedRun(*a, 20, "on a");
    trainedRun(*b, 20, "on b");
    auto lines = streamOf(*a, {run});
    const auto more = streamOf(*b, {run});
    lines.insert(lines.end(), more.begin(), more.end());
    auto local = Database::open(file("local.db"));
    Ingestor in(*local, "gpu");
    for (const auto& l : lines)
        in.feed(l);
    in.finish();
    EXPECT_TRUE(in.problems().empty());
    EXPECT_EQ(in.counts().runs, 2);
    ASSERT_EQ(in.sources().size(), 2u);
    EXPECT_EQ(in.sources()[1].database, b->databaseId());
    EXPECT_EQ(rowsOf(*local, *ImportStore(*local).runFromOrigin("gpu", a->databaseId(), run)),
              rowsOf(*a, run));
    EXPECT_EQ(rowsOf(*local, *ImportStore(*local).runFromOrigin("gpu", b->databaseId(), run)),
              rowsOf(*b, run));
}

// Streams of older builds carry no database id: they map by label and ids as before,
// twice in a row adding nothing.
TEST_F(StreamConsistency, StreamsWithoutADatabaseIdIngestAsBefore) {
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 25);
    const auto lines = streamOf(*a, {run}, /*with_id=*/false);
    EXPECT_EQ(nlohmann::json::parse(lines[0]).count("database_id"), 0u);
    auto local = Database::open(file("local.db"));
    const auto first = ingest(*local, lines);
    const auto second = ingest(*local, lines);
    EXPECT_TRUE(first.problems.empty()) << first.all();
    EXPECT_TRUE(second.problems.empty()) << second.all();
    EXPECT_EQ(second.counts.rows_added, 0);
    EXPECT_EQ(second.counts.rows_present, first.counts.rows_added);
    const auto mine = ImportStore(*local).runFromOrigin("localhost", std::string(), run);
    ASSERT_TRUE(mine);
    EXPECT_EQ(rowsOf(*local, *mine), rowsOf(*a, run));
    EXPECT_EQ(local->runFromOrigin("localhost", run), mine);
}

// A run read first from an older build's stream, then resumed from the same server
// now naming its database: the same run continues, and it remembers the database.
TEST_F(StreamConsistency, AnOlderStreamResumedWithTheDatabaseIdContinuesTheSameRun) {
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 40, "exp", RunStatus::Running);
    auto part = streamOf(*a, {run}, /*with_id=*/false);
    part.resize(3 + 15);  // header, experiment, run, 15 rows: the connection dropped
    auto local = Database::open(file("local.db"));
    ingest(*local, part);
    a->finishRun(run, RunStatus::Finished, "");
    const auto since = lastSeqFromOrigin(*local, "localhost", run);
    ASSERT_EQ(since.value_or(-1), 15);
    const auto rest = ingest(*local, streamOf(*a, {run}, /*with_id=*/true, *since));
    EXPECT_TRUE(rest.problems.empty()) << rest.all();
    EXPECT_EQ(rest.counts.runs, 0);
    EXPECT_EQ(rest.counts.experiments, 0);
    ASSERT_EQ(local->runs().size(), 1u);
    const auto mine = ImportStore(*local).runFromOrigin("localhost", a->databaseId(), run);
    ASSERT_TRUE(mine);
    EXPECT_EQ(rowsOf(*local, *mine), rowsOf(*a, run));
    EXPECT_EQ(local->run(*mine)->status, RunStatus::Finished);
}

// Two older servers under one label with the same ids but other experiments: the
// second is refused, not appended to the first's run.
TEST_F(StreamConsistency, OlderStreamsOfTwoDatabasesUnderOneLabelAreRefusedNotMerged) {
    auto a = Database::open(file("a.db"));
    auto b = Database::open(file("b.db"));
    const int64_t run = trainedRun(*a, 20, "on a");
    trainedRun(*b, 30, "on b");
    auto local = Database::open(file("local.db"));
    ingest(*local, streamOf(*a, {run}, false));
    const auto second = ingest(*local, streamOf(*b, {run}, false));
    ASSERT_GE(second.count(IngestProblem::Kind::Conflict), 1u) << second.all();
    EXPECT_NE(second.problems[0].message.find("two databases under one origin"), std::string::npos)
        << second.all();
    EXPECT_NE(second.problems[0].message.find("--origin"), std::string::npos);
    EXPECT_EQ(second.counts.rows_added, 0);
    EXPECT_EQ(second.counts.rows_refused, static_cast<int64_t>(rowsOf(*b, run).size()));
    ASSERT_EQ(local->runs().size(), 1u);
    EXPECT_EQ(rowsOf(*local, local->runs()[0].id), rowsOf(*a, run));
    // Under a label of its own it is read in full.
    const auto apart = ingest(*local, streamOf(*b, {run}, false), "box-b");
    EXPECT_TRUE(apart.problems.empty()) << apart.all();
    EXPECT_EQ(rowsOf(*local, *local->runFromOrigin("box-b", run)), rowsOf(*b, run));
}

// Schema 9 gives every database an id, kept from open to open; a file of schema 8
// has none read-only and gets one on its next read-write open, rows kept.
TEST_F(StreamConsistency, EveryDatabaseGetsAnIdOfItsOwnOnItsNextReadWriteOpen) {
    const std::string path = file("old.db");
    int64_t run = 0;
    std::string first;
    {
        auto db = Database::open(path);
        run = trainedRun(*db, 5);
        first = db->databaseId();
        EXPECT_EQ(first.size(), 32u);
    }
    EXPECT_EQ(Database::open(path, Database::Mode::ReadOnly)->databaseId(), first);
    ampbench::test::rawExec(path, ampbench::test::kBackToSchema8);
    {
        auto reader = Database::open(path, Database::Mode::ReadOnly);
        EXPECT_EQ(reader->schemaVersion(), 8);
        EXPECT_EQ(reader->databaseId(), "");
        // A stream of the old file falls back to the label alone.
        EXPECT_EQ(nlohmann::json::parse(streamOf(*reader, {run})[0]).count("database_id"), 0u);
    }
    auto db = Database::open(path);
    EXPECT_EQ(db->schemaVersion(), Database::kSchemaVersion);
    EXPECT_EQ(db->databaseId().size(), 32u);
    EXPECT_EQ(db->lastSeq(run), 5 + 0 + 1);
    EXPECT_EQ(Database::open(path)->databaseId(), db->databaseId());
}

// --- records that contradict what is here ---

// Another record at a seq the run holds: reported with its line, the stored one kept.
// The same record again is no problem.
TEST_F(StreamConsistency, ARecordReusingASeqWithOtherContentIsReportedAndTheStoredOneKept) {
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 12);
    auto local = Database::open(file("local.db"));
    const auto lines = streamOf(*a, {run});
    ASSERT_TRUE(ingest(*local, lines).problems.empty());
    const int64_t mine = *ImportStore(*local).runFromOrigin("localhost", a->databaseId(), run);
    const auto before = rowsOf(*local, mine);

    StepRecord changed = stepOf(5);
    changed.loss = 99.0;
    const std::vector<std::string> again{
        lines[0],
        lines[1],
        lines[2],
        encode(RowRecord{run, {5, changed}}),                                    // line 4
        encode(RowRecord{run, {6, EventRecord{6, EventKind::Info, "x", 0.0}}}),  // a step's seq
        encode(RowRecord{run, {7, stepOf(7)}}),                                  // identical
        encode(RowRecord{run, {a->lastSeq(run) + 1, stepOf(3)}}),  // stored as record 3
    };
    const auto r = ingest(*local, again);
    ASSERT_EQ(r.count(IngestProblem::Kind::Conflict), 3u) << r.all();
    EXPECT_EQ(r.problems[0].line, 4);
    EXPECT_NE(r.problems[0].message.find("record 5 is a step (step 5) here"), std::string::npos)
        << r.all();
    EXPECT_EQ(r.problems[1].line, 5);
    EXPECT_NE(r.problems[1].message.find("an event (info at step 6"), std::string::npos) << r.all();
    EXPECT_NE(r.problems[2].message.find("stored here as record 3"), std::string::npos) << r.all();
    EXPECT_EQ(r.counts.rows_present, 1);
    EXPECT_EQ(r.counts.rows_refused, 3);
    EXPECT_EQ(r.counts.rows_added, 0);
    EXPECT_EQ(rowsOf(*local, mine), before);
}

// Within one stream too: an event and a step both new, under one seq.
TEST_F(StreamConsistency, TwoNewRecordsUnderOneSeqKeepTheFirst) {
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 3);
    auto lines = streamOf(*a, {run});
    lines.resize(3);  // header, experiment, run
    lines.push_back(encode(RowRecord{run, {1, stepOf(1)}}));
    lines.push_back(encode(RowRecord{run, {1, EventRecord{1, EventKind::Warning, "w", 1.0}}}));
    lines.push_back(encode(RowRecord{run, {2, stepOf(2)}}));
    auto local = Database::open(file("local.db"));
    const auto r = ingest(*local, lines);
    ASSERT_EQ(r.problems.size(), 1u) << r.all();
    EXPECT_EQ(r.problems[0].kind, IngestProblem::Kind::Conflict);
    EXPECT_EQ(r.problems[0].line, 5);
    const int64_t mine = *ImportStore(*local).runFromOrigin("localhost", a->databaseId(), run);
    EXPECT_EQ(local->steps(mine).size(), 2u);
    EXPECT_TRUE(local->events(mine).empty());
}

// After a run's final status, rows beyond what it counted are reported and skipped;
// rows it counted (a replay) are still welcome.
TEST_F(StreamConsistency, RowsAfterARunsFinalStatusAreReportedAndSkipped) {
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 10);
    const int64_t last = a->lastSeq(run);
    auto lines = streamOf(*a, {run});
    ASSERT_EQ(std::get<StatusRecord>(decode(lines.back(), 1)).last_seq, last);
    lines.push_back(encode(RowRecord{run, {3, stepOf(3)}}));  // counted: a replay
    lines.push_back(encode(RowRecord{run, {last + 1, stepOf(11)}}));
    auto local = Database::open(file("local.db"));
    const auto r = ingest(*local, lines);
    ASSERT_EQ(r.problems.size(), 1u) << r.all();
    EXPECT_EQ(r.problems[0].kind, IngestProblem::Kind::Conflict);
    EXPECT_EQ(r.problems[0].line, static_cast<int64_t>(lines.size()));
    EXPECT_NE(r.problems[0].message.find("after the run's final status"), std::string::npos)
        << r.all();
    EXPECT_EQ(local->lastSeq(*ImportStore(*local).runFromOrigin("localhost", a->databaseId(), run)),
              last);
}

// A status that counts fewer records than are here is reported and not applied.
TEST_F(StreamConsistency, AStatusCountingFewerRecordsThanAreHereIsNotApplied) {
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 20, "exp", RunStatus::Running);
    auto local = Database::open(file("local.db"));
    auto lines = streamOf(*a, {run});
    lines.pop_back();  // the running status
    ASSERT_TRUE(ingest(*local, lines).problems.empty());
    const std::vector<std::string> status{
        lines[0], encode(StatusRecord{run, RunStatus::Finished, FailureKind::None, "", 10})};
    const auto r = ingest(*local, status);
    ASSERT_EQ(r.problems.size(), 1u) << r.all();
    EXPECT_EQ(r.problems[0].kind, IngestProblem::Kind::Conflict);
    EXPECT_NE(r.problems[0].message.find("counts 10 records, but records up to " +
                                         std::to_string(a->lastSeq(run)) + " are here"),
              std::string::npos)
        << r.all();
    EXPECT_EQ(r.counts.statuses, 0);
    const auto mine =
        local->run(*ImportStore(*local).runFromOrigin("localhost", a->databaseId(), run));
    EXPECT_EQ(mine->status, RunStatus::Running);
}

// --- two ingests at once, and a held lock ---

// Two ingests of one stream started together (each its own connection): both
// succeed, and every experiment, run and row is stored once.
TEST_F(StreamConsistency, TwoIngestsOfOneStreamAtOnceStoreEachRowOnce) {
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 300);
    const auto lines = streamOf(*a, {run});
    for (int attempt = 0; attempt < 5; ++attempt) {
        const std::string path = file("local" + std::to_string(attempt) + ".db");
        Database::open(path);
        std::atomic<int> ready{0};
        std::string errors[2];
        Result results[2];
        auto one = [&](int i) {
            try {
                auto db = Database::open(path);
                ++ready;
                while (ready.load() < 2)
                    std::this_thread::yield();
                results[i] = ingest(*db, lines);
            } catch (const std::exception& e) {
                errors[i] = e.what();
            }
        };
        std::thread t0(one, 0), t1(one, 1);
        t0.join();
        t1.join();
        for (int i = 0; i < 2; ++i) {
            EXPECT_EQ(errors[i], "") << "attempt " << attempt;
            EXPECT_TRUE(results[i].problems.empty()) << results[i].all();
        }
        EXPECT_EQ(results[0].counts.experiments + results[1].counts.experiments, 1);
        EXPECT_EQ(results[0].counts.runs + results[1].counts.runs, 1);
        EXPECT_EQ(results[0].counts.rows_added + results[1].counts.rows_added, a->lastSeq(run));
        auto local = Database::open(path, Database::Mode::ReadOnly);
        ASSERT_EQ(local->runs().size(), 1u);
        EXPECT_EQ(rowsOf(*local, local->runs()[0].id), rowsOf(*a, run));
    }
}

/// Holds the write lock of a database from a connection of its own until released.
class HeldLock {
  public:
    explicit HeldLock(const std::string& path) {
        EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
        EXPECT_EQ(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    }
    ~HeldLock() { release(); }
    void release() {
        if (db_) {
            sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
            sqlite3_close(db_);
            db_ = nullptr;
        }
    }

  private:
    sqlite3* db_ = nullptr;
};

// A lock held longer than one try (and than a second) waits: the ingest says what it
// waits for, writes when the lock goes and says so. The lock goes once the ingest has
// said it waits, whenever that is.
TEST_F(StreamConsistency, IngestWaitsOutAHeldLockAndSaysWhatItWaitsFor) {
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 30);
    const auto lines = streamOf(*a, {run});
    auto local = Database::open(file("local.db"));
    IngestLockWait wait;
    wait.policy.try_wait = std::chrono::milliseconds(20);
    wait.policy.max_backoff = std::chrono::milliseconds(100);
    wait.policy.limit = std::chrono::seconds(30);
    std::vector<std::string> heard;
    std::atomic<bool> waiting{false};
    wait.notice = [&](const std::string& m) {
        heard.push_back(m);
        waiting = true;
    };
    Ingestor in(*local, "gpu", wait);
    in.feed(lines[0]);
    in.feed(lines[1]);
    in.feed(lines[2]);
    HeldLock lock(file("local.db"));
    for (size_t i = 3; i < lines.size() - 1; ++i)
        in.feed(lines[i]);  // rows are held until the status record
    std::thread release([&] {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (!waiting && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        lock.release();
    });
    const auto start = std::chrono::steady_clock::now();
    in.feed(lines.back());
    const auto waited = std::chrono::steady_clock::now() - start;
    release.join();
    in.finish();
    EXPECT_GE(waited, std::chrono::seconds(1));  // said after a second of waiting
    EXPECT_TRUE(in.problems().empty());
    ASSERT_EQ(heard.size(), 2u);
    EXPECT_NE(heard[0].find("is locked by another program; waiting up to 30.0 s to write " +
                            std::to_string(a->lastSeq(run)) + " rows"),
              std::string::npos)
        << heard[0];
    EXPECT_NE(heard[1].find("written"), std::string::npos) << heard[1];
    EXPECT_EQ(rowsOf(*local, *local->runFromOrigin("gpu", run)), rowsOf(*a, run));
    EXPECT_EQ(local->run(*local->runFromOrigin("gpu", run))->status, RunStatus::Finished);
}

// The ingest waits as long as a training run waits (ten minutes), then gives up
// naming what was not written; the rows stay held and are written once it can.
TEST_F(StreamConsistency, IngestGivesUpAtTheTrainingLimitNamingWhatWasNotWritten) {
    EXPECT_EQ(IngestLockWait{}.policy.limit, std::chrono::minutes(10));
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 8);
    const auto lines = streamOf(*a, {run});
    auto local = Database::open(file("local.db"));
    IngestLockWait wait;
    wait.policy.try_wait = std::chrono::milliseconds(20);
    wait.policy.limit = std::chrono::milliseconds(300);
    Ingestor in(*local, "gpu", wait);
    for (size_t i = 0; i + 1 < lines.size(); ++i)
        in.feed(lines[i]);
    {
        HeldLock lock(file("local.db"));
        try {
            in.commit();
            FAIL() << "the lock was not noticed";
        } catch (const StoreError& e) {
            EXPECT_EQ(e.kind(), StoreError::Kind::Busy);
            const std::string m = e.what();
            EXPECT_NE(m.find("stayed locked by another program"), std::string::npos) << m;
            EXPECT_NE(m.find(std::to_string(a->lastSeq(run)) + " rows could not be written"),
                      std::string::npos)
                << m;
        }
    }
    in.feed(lines.back());
    in.finish();
    EXPECT_TRUE(in.problems().empty());
    EXPECT_EQ(rowsOf(*local, *local->runFromOrigin("gpu", run)), rowsOf(*a, run));
}

// --- numbers and names beyond their fields ---

// Sequence numbers up to the top of int64: gaps are named without overflow, the
// last one is resumable (tail --since sends what follows it).
TEST_F(StreamConsistency, SequenceNumbersAtTheTopOfInt64AreReportedAndResumable) {
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 1);
    auto lines = streamOf(*a, {run});
    lines.resize(3);
    lines.push_back(encode(RowRecord{run, {1, stepOf(1)}}));
    lines.push_back(encode(RowRecord{run, {kTop - 1, stepOf(2)}}));
    lines.push_back(encode(RowRecord{run, {kTop, stepOf(3)}}));
    lines.push_back(encode(RowRecord{run, {2, stepOf(4)}}));  // fills the gap's start
    lines.push_back(encode(StatusRecord{run, RunStatus::Finished, FailureKind::None, "", kTop}));
    auto local = Database::open(file("local.db"));
    const auto r = ingest(*local, lines);
    ASSERT_EQ(r.problems.size(), 1u) << r.all();
    EXPECT_EQ(r.problems[0].kind, IngestProblem::Kind::Gap);
    EXPECT_NE(r.problems[0].message.find("records 2-9223372036854775805 missing"),
              std::string::npos)
        << r.all();
    const int64_t mine = *ImportStore(*local).runFromOrigin("localhost", a->databaseId(), run);
    EXPECT_EQ(lastSeqFromOrigin(*local, "localhost", run).value_or(-1), kTop);
    std::vector<Record> sent;
    Tail tail(*local, {mine}, kTop - 1);
    tail.poll([&](const Record& rec) { sent.push_back(rec); });
    ASSERT_GE(sent.size(), 3u);
    EXPECT_EQ(std::get<RowRecord>(sent[2]).row.seq, kTop);
    EXPECT_EQ(std::get<StatusRecord>(sent.back()).last_seq, kTop);
}

// A version beyond an int is not version 1: refused, naming it, nothing read after.
TEST_F(StreamConsistency, AStreamVersionBeyondAnIntIsRefusedAsUnknown) {
    for (const std::string version : {"4294967297", "18446744073709551615", "-4294967295"}) {
        const std::string header =
            R"({"type":"header","stream_version":)" + version + R"(,"environment":{}})";
        auto local = Database::open(file("v" + version + ".db"));
        Ingestor in(*local, "gpu");
        EXPECT_FALSE(in.feed(header));
        in.finish();
        EXPECT_TRUE(in.refused());
        ASSERT_EQ(in.problems().size(), 1u);
        EXPECT_NE(in.problems()[0].message.find("version " + version), std::string::npos)
            << in.problems()[0].message;
    }
    // After a good header too: a later header of an unknown version ends the reading.
    auto local = Database::open(file("later.db"));
    Ingestor in(*local, "gpu");
    EXPECT_TRUE(in.feed(encode(makeHeader(""))));
    EXPECT_FALSE(in.feed(R"({"type":"header","stream_version":18446744073709551615})"));
    EXPECT_TRUE(in.refused());
    EXPECT_EQ(in.problems().at(0).kind, IngestProblem::Kind::Refused);
}

// Integers that do not fit their field are refused naming it and its range.
TEST_F(StreamConsistency, IntegersBeyondTheirFieldAreRefusedNamingIt) {
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 2);
    const auto lines = streamOf(*a, {run});
    auto problemOf = [](const std::string& line) {
        try {
            decode(line, 4);
        } catch (const StreamError& e) {
            return std::string(e.what());
        }
        return std::string("(read)");
    };
    EXPECT_EQ(problemOf(withField(lines[2], "arm_index", int64_t{2147483653})),
              "line 4: run record: \"arm_index\" must be a whole number from 0 to 2147483647, "
              "not 2147483653");
    EXPECT_NE(problemOf(withField(lines[2], "arm_index", -1)).find("\"arm_index\" must be"),
              std::string::npos);
    EXPECT_NE(problemOf(withField(lines.back(), "last_seq", -5)).find("\"last_seq\" must be"),
              std::string::npos);
    // A seed is stored as a 64-bit signed integer: one beyond it would read back as
    // another (2^64 - 1 as -1).
    EXPECT_EQ(problemOf(withField(lines[2], "seed", uint64_t{18446744073709551615ull})),
              "line 4: run record: \"seed\" must be a whole number from 0 to "
              "9223372036854775807, not 18446744073709551615");
    // Refused lines are skipped, and so is the run they describe.
    auto local = Database::open(file("local.db"));
    auto bad = lines;
    bad[2] = withField(lines[2], "arm_index", int64_t{2147483653});
    const auto r = ingest(*local, bad);
    EXPECT_EQ(r.count(IngestProblem::Kind::Malformed), 1u) << r.all();
    EXPECT_TRUE(local->runs().empty());
}

// Names from a stream follow the rules for names typed here: at most 200 bytes, no
// control characters; a host name too, when it names the origin.
TEST_F(StreamConsistency, NamesFromAStreamFollowTheRulesForNamesTypedHere) {
    auto a = Database::open(file("a.db"));
    const int64_t run = trainedRun(*a, 2);
    const auto lines = streamOf(*a, {run});
    auto local = Database::open(file("local.db"));

    auto huge = lines;
    huge[1] = withField(lines[1], "name", std::string(10 << 20, 'n'));
    const auto r = ingest(*local, huge);
    ASSERT_GE(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0].kind, IngestProblem::Kind::Malformed);
    EXPECT_NE(
        r.problems[0].message.find("\"name\" must be at most 200 bytes long (it is 10485760)"),
        std::string::npos)
        << r.problems[0].message;
    EXPECT_TRUE(local->experiments().empty());

    auto escape = lines;
    escape[2] = withField(lines[2], "arm", "amp\x1b[31m");
    const auto e = ingest(*local, escape);
    ASSERT_GE(e.problems.size(), 1u);
    EXPECT_NE(e.problems[0].message.find("\"arm\" must not contain control characters"),
              std::string::npos)
        << e.all();
    EXPECT_TRUE(local->runs().empty());

    auto host = lines;
    host[0] = encode(makeHeader(nlohmann::json{{"hostname", std::string(300, 'h')}}.dump()));
    Ingestor in(*local);
    EXPECT_FALSE(in.feed(host[0]));
    EXPECT_TRUE(in.refused());
    EXPECT_NE(in.problems().at(0).message.find("environment.hostname"), std::string::npos);
    // Named with --origin, the host name does not matter.
    EXPECT_TRUE(ingest(*local, host, "gpu").problems.empty());
}

}  // namespace
