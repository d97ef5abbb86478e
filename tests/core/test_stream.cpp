// The record stream: every record type through encode/decode bit for bit, bad lines
// named by number, the store's sequence numbers (recorder, migration), and the
// ingest: idempotent, gaps reported, unknown versions refused, malformed lines skipped.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "ScratchDir.h"
#include "StoreDowngrade.h"
#include "StreamTestSupport.h"
#include "core/store/Database.h"
#include "core/store/RunRecorder.h"
#include "core/stream/Ingestor.h"
#include "core/stream/RecordStream.h"
#include "core/stream/Tail.h"

namespace fs = std::filesystem;
using ampbench::store::Database;
using ampbench::store::SequencedRecord;
using namespace ampbench::run;
using namespace ampbench::stream;

namespace {

using ampbench::test::kInf;
using ampbench::test::kNaN;

StepRecord stepOf(int64_t n) {
    StepRecord s;
    s.step = n;
    s.samples = n * 64;
    s.loss = 2.3 / static_cast<double>(n) + 0.1;  // digits that need all 17
    s.lr = 0.1 + 0.2;
    s.loss_scale = 65536.0;
    s.skipped = n % 7 == 0;
    s.grad_norm = n % 3 == 0 ? kNaN : 1.0 / 3.0 * n;  // NaN on thinned steps
    s.step_ms = 1e-300 * n;
    s.data_wait_ms = 5e-324;  // the smallest denormal
    s.timed = n > 2;
    s.mem_allocated = (int64_t{1} << 53) + 1 + n;  // beyond a double's integers
    s.mem_reserved = 2000 + n;
    s.mem_peak = std::numeric_limits<int64_t>::max() - n;
    s.wall_s = 0.001 * n;
    return s;
}

void expectSameStep(const StepRecord& a, const StepRecord& b) {
    EXPECT_EQ(a.step, b.step);
    EXPECT_EQ(a.samples, b.samples);
    EXPECT_BITS(a.loss, b.loss);
    EXPECT_BITS(a.lr, b.lr);
    EXPECT_BITS(a.loss_scale, b.loss_scale);
    EXPECT_EQ(a.skipped, b.skipped);
    EXPECT_BITS(a.grad_norm, b.grad_norm);
    EXPECT_BITS(a.step_ms, b.step_ms);
    EXPECT_BITS(a.data_wait_ms, b.data_wait_ms);
    EXPECT_EQ(a.timed, b.timed);
    EXPECT_EQ(a.mem_allocated, b.mem_allocated);
    EXPECT_EQ(a.mem_reserved, b.mem_reserved);
    EXPECT_EQ(a.mem_peak, b.mem_peak);
    EXPECT_BITS(a.wall_s, b.wall_s);
}

Record roundTrip(const Record& r) {
    const std::string line = encode(r);
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    return decode(line, 1);
}

class StreamStore : public ampbench::test::ScratchDirTest {
  protected:
    /// A finished run with `steps` steps, two evaluations and two events, written as
    /// the recorder writes them (several batches). Returns its id.
    int64_t trainedRun(Database& db, int64_t steps, RunStatus status = RunStatus::Finished) {
        const int64_t exp = db.createExperiment("remote exp", R"({"name":"remote exp"})");
        const int64_t run = db.createRun(exp, "amp", 1, 42, R"({"name":"amp","lr":0.1})", steps,
                                         R"([{"field":"data.dir"}])");
        db.markRunning(run, R"({"device":"cuda:0","hostname":"gpu-box"})");
        for (int64_t from = 1; from <= steps; from += 10) {
            std::vector<StepRecord> batch;
            for (int64_t n = from; n < from + 10 && n <= steps; ++n)
                batch.push_back(stepOf(n));
            db.begin();
            db.insertSteps(run, batch);
            if (from == 1)
                db.insertEvents(run, {{3, EventKind::SkippedStep, "inf \"grads\"\n", 32768.0}});
            db.insertEvals(run, {{batch.back().step, batch.back().samples, 0.5, kNaN, 1.5}});
            db.commit();
        }
        db.insertEvents(run, {{steps, EventKind::Info, "done ✓", -kInf}});
        if (status != RunStatus::Running)
            db.finishRun(
                run, status, status == RunStatus::Failed ? "out of memory" : "",
                status == RunStatus::Failed ? FailureKind::OutOfMemory : FailureKind::None);
        return run;
    }

    /// What `tail` writes for these runs: header, experiment, run, rows, status.
    std::vector<std::string> streamOf(const Database& db, std::vector<int64_t> runs,
                                      int64_t since = 0) {
        std::vector<std::string> lines{encode(makeHeader(R"({"hostname":"gpu-box"})"))};
        Tail tail(db, std::move(runs), since);
        auto sink = [&](const Record& r) { lines.push_back(encode(r)); };
        tail.poll(sink);
        tail.closeAll(sink);
        return lines;
    }

    struct Ingested {
        IngestCounts c;
        std::vector<IngestProblem> p;
        const IngestCounts& counts() const { return c; }
        const std::vector<IngestProblem>& problems() const { return p; }
    };
    static Ingested ingestAll(Database& db, const std::vector<std::string>& lines,
                              const std::string& origin = "gpu") {
        Ingestor in(db, origin);
        for (const auto& l : lines)
            in.feed(l);
        in.finish();
        return {in.counts(), in.problems()};
    }

    fs::path dir_;
};

/// Every row of two runs equal, field by field and bit for bit, with the same seqs.
void expectSameRows(const Database& a, int64_t run_a, const Database& b, int64_t run_b) {
    const auto x = a.recordsSince(run_a, 0);
    const auto y = b.recordsSince(run_b, 0);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(x[i].seq, y[i].seq);
        ASSERT_EQ(x[i].record.index(), y[i].record.index()) << "seq " << x[i].seq;
        if (const auto* s = std::get_if<StepRecord>(&x[i].record)) {
            expectSameStep(*s, std::get<StepRecord>(y[i].record));
        } else if (const auto* e = std::get_if<EvalRecord>(&x[i].record)) {
            const auto& f = std::get<EvalRecord>(y[i].record);
            EXPECT_EQ(e->step, f.step);
            EXPECT_EQ(e->samples, f.samples);
            EXPECT_BITS(e->val_loss, f.val_loss);
            EXPECT_BITS(e->val_accuracy, f.val_accuracy);
            EXPECT_BITS(e->wall_s, f.wall_s);
        } else {
            const auto& v = std::get<EventRecord>(x[i].record);
            const auto& w = std::get<EventRecord>(y[i].record);
            EXPECT_EQ(v.step, w.step);
            EXPECT_EQ(v.kind, w.kind);
            EXPECT_EQ(v.message, w.message);
            EXPECT_BITS(v.value, w.value);
        }
    }
}

}  // namespace

TEST(RecordStream, EveryRecordTypeRoundTripsBitForBit) {
    const Header h = makeHeader(R"({"hostname":"gpu","device":"cuda:0"})");
    const auto h2 = std::get<Header>(roundTrip(h));
    EXPECT_EQ(h2.stream_version, kStreamVersion);
    EXPECT_EQ(h2.ampbench_version, h.ampbench_version);
    EXPECT_EQ(h2.ampbench_commit, h.ampbench_commit);
    EXPECT_EQ(nlohmann::json::parse(h2.environment_json),
              nlohmann::json::parse(h.environment_json));

    ampbench::store::ExperimentRow e;
    e.id = 3;
    e.name = "fp32 vs \"amp\" \\ ✓";            // control characters are refused: names' rules
    e.spec_json = R"({"a": 1, "b":[1.5e-7]})";  // kept as text, spacing and all
    e.created_at = "2024-01-02T03:04:05.678Z";
    const auto e2 = std::get<ampbench::store::ExperimentRow>(roundTrip(e));
    EXPECT_EQ(e2.id, e.id);
    EXPECT_EQ(e2.name, e.name);
    EXPECT_EQ(e2.spec_json, e.spec_json);
    EXPECT_EQ(e2.created_at, e.created_at);

    ampbench::store::RunRow r;
    r.id = 7;
    r.experiment_id = 3;
    r.arm = "amp-accum4";
    r.arm_index = 2;
    r.seed = 0x7FFFFFFFFFFFFFFFull;  // the largest seed (config::kMaxSeed)
    r.spec_json = R"({"lr":0.1})";
    r.env_json = R"({"device":"cuda:0"})";
    r.planned_steps = 500;
    r.inputs_json = "[]";
    r.status = RunStatus::Failed;
    r.failure = FailureKind::NonFinite;
    r.error = "loss became NaN at step 12";
    r.started_at = "s";
    r.ended_at = "e";
    const auto r2 = std::get<ampbench::store::RunRow>(roundTrip(r));
    EXPECT_EQ(r2.id, r.id);
    EXPECT_EQ(r2.experiment_id, r.experiment_id);
    EXPECT_EQ(r2.arm, r.arm);
    EXPECT_EQ(r2.arm_index, r.arm_index);
    EXPECT_EQ(r2.seed, r.seed);
    EXPECT_EQ(r2.spec_json, r.spec_json);
    EXPECT_EQ(r2.env_json, r.env_json);
    EXPECT_EQ(r2.planned_steps, r.planned_steps);
    EXPECT_EQ(r2.inputs_json, r.inputs_json);
    EXPECT_EQ(r2.status, r.status);
    EXPECT_EQ(r2.failure, r.failure);
    EXPECT_EQ(r2.error, r.error);
    EXPECT_EQ(r2.started_at, r.started_at);
    EXPECT_EQ(r2.ended_at, r.ended_at);

    for (int64_t n = 1; n <= 12; ++n) {
        StepRecord s = stepOf(n);
        if (n == 4)
            s.loss = kInf;
        if (n == 5)
            s.loss = -kInf;
        if (n == 6)
            s.wall_s = -0.0;
        const auto back = std::get<RowRecord>(roundTrip(RowRecord{7, {100 + n, s}}));
        EXPECT_EQ(back.run, 7);
        EXPECT_EQ(back.row.seq, 100 + n);
        expectSameStep(std::get<StepRecord>(back.row.record), s);
    }
    const EvalRecord ev{96, 6144, 0.1 + 0.7, kNaN, 12.25};
    const auto ev2 =
        std::get<EvalRecord>(std::get<RowRecord>(roundTrip(RowRecord{7, {5, ev}})).row.record);
    EXPECT_EQ(ev2.step, ev.step);
    EXPECT_EQ(ev2.samples, ev.samples);
    EXPECT_BITS(ev2.val_loss, ev.val_loss);
    EXPECT_BITS(ev2.val_accuracy, ev.val_accuracy);
    EXPECT_BITS(ev2.wall_s, ev.wall_s);

    const EventRecord v{12, EventKind::OutOfMemory, "CUDA \"out\" of memory\n\ttried 2 GiB", kInf};
    const auto v2 =
        std::get<EventRecord>(std::get<RowRecord>(roundTrip(RowRecord{7, {6, v}})).row.record);
    EXPECT_EQ(v2.step, v.step);
    EXPECT_EQ(v2.kind, v.kind);
    EXPECT_EQ(v2.message, v.message);
    EXPECT_BITS(v2.value, v.value);

    const StatusRecord st{7, RunStatus::Cancelled, FailureKind::Cancelled, "stopped", 99};
    const auto st2 = std::get<StatusRecord>(roundTrip(st));
    EXPECT_EQ(st2.run, 7);
    EXPECT_EQ(st2.status, st.status);
    EXPECT_EQ(st2.failure, st.failure);
    EXPECT_EQ(st2.error, st.error);
    EXPECT_EQ(st2.last_seq, 99);
}

// NaN and the infinities are written as strings (JSON has no such numbers); null, as
// other writers may put, reads as NaN.
TEST(RecordStream, NonFiniteNumbersAreStringsAndNullReadsAsNaN) {
    StepRecord s = stepOf(3);  // NaN grad norm
    s.loss = -kInf;
    const std::string line = encode(RowRecord{1, {1, s}});
    EXPECT_NE(line.find(R"("grad_norm":"NaN")"), std::string::npos) << line;
    EXPECT_NE(line.find(R"("loss":"-Infinity")"), std::string::npos) << line;
    auto j = nlohmann::json::parse(line);
    j["grad_norm"] = nullptr;
    const auto back = std::get<StepRecord>(std::get<RowRecord>(decode(j.dump(), 1)).row.record);
    EXPECT_TRUE(std::isnan(back.grad_norm));
}

TEST(RecordStream, BadLinesNameTheirNumberAndWhatIsWrong) {
    auto problem = [](const std::string& line) {
        try {
            decode(line, 17);
        } catch (const StreamError& e) {
            EXPECT_EQ(e.line(), 17);
            return std::string(e.what());
        }
        ADD_FAILURE() << "accepted: " << line;
        return std::string();
    };
    const std::string good = encode(RowRecord{1, {4, stepOf(4)}});
    EXPECT_NE(problem("{\"type\":\"step\",").find("line 17: not valid JSON"), std::string::npos);
    EXPECT_NE(problem("[1,2]").find("not a JSON object"), std::string::npos);
    EXPECT_NE(problem("{\"seq\":1}").find("no \"type\""), std::string::npos);
    EXPECT_NE(problem("{\"type\":\"checkpoint\"}").find("unknown record type \"checkpoint\""),
              std::string::npos);
    auto j = nlohmann::json::parse(good);
    j.erase("loss");
    EXPECT_NE(problem(j.dump()).find("step record: \"loss\" is missing"), std::string::npos);
    j = nlohmann::json::parse(good);
    j["samples"] = "many";
    EXPECT_NE(problem(j.dump()).find("\"samples\" must be a whole number, not \"many\""),
              std::string::npos);
    j = nlohmann::json::parse(good);
    j["seq"] = 0;
    EXPECT_NE(problem(j.dump()).find("\"seq\" must be 1 or more"), std::string::npos);
    j = nlohmann::json::parse(good);
    j["loss"] = "lots";
    EXPECT_NE(problem(j.dump()).find("\"loss\" must be a number"), std::string::npos);
    EXPECT_NE(problem(R"({"type":"status","run":1,"status":"exploded","failure":"","error":"",)"
                      R"("last_seq":3})")
                  .find("unknown status \"exploded\""),
              std::string::npos);
    EXPECT_NE(problem(R"({"type":"step","loss":1e400})").find("too large"), std::string::npos);
}

// Rows get 1, 2, 3 ... per run in commit order (steps, evaluations, events of one
// write), continuing after the run's last; another run counts on its own.
TEST_F(StreamStore, RecorderNumbersRowsAndTellsTheListenerWhatItStored) {
    auto db = Database::open(file("a.db"));
    const int64_t exp = db->createExperiment("e", "{}");
    const int64_t run = db->createRun(exp, "fp32", 0, 1, "{}", 10);
    const int64_t other = db->createRun(exp, "amp", 1, 1, "{}", 10);
    db->insertSteps(other, {stepOf(1)});
    struct Heard : ampbench::store::RecordListener {
        std::vector<SequencedRecord> rows;
        int started = 0, finished = 0;
        void runStarted(int64_t) override { ++started; }
        void rowsCommitted(int64_t, const std::vector<SequencedRecord>& r) override {
            rows.insert(rows.end(), r.begin(), r.end());
        }
        void runFinished(int64_t) override { ++finished; }
    } heard;
    db->setRecordListener(&heard);
    db->insertEvents(run, {{0, EventKind::Info, "before the recorder", 0}});  // seq 1
    {
        // One write at the end: steps, then evaluations, then events, after seq 1.
        ampbench::store::RunRecorder rec(*db, run, std::chrono::hours(1));
        rec.onStart({});
        rec.onEvent({0, EventKind::Info, "start", 0});
        rec.onStep(stepOf(1));
        rec.onStep(stepOf(2));
        rec.onEval({2, 128, 0.5, 0.9, 1.0});
        rec.onStep(stepOf(3));
        rec.onFinish({});
    }
    EXPECT_EQ(heard.started, 1);
    EXPECT_EQ(heard.finished, 1);
    const auto stored = db->recordsSince(run, 1);
    ASSERT_EQ(stored.size(), 5u);
    ASSERT_EQ(heard.rows.size(), 5u);
    for (size_t i = 0; i < stored.size(); ++i) {
        EXPECT_EQ(stored[i].seq, static_cast<int64_t>(i + 2));
        EXPECT_EQ(heard.rows[i].seq, stored[i].seq);
        EXPECT_EQ(heard.rows[i].record.index(), stored[i].record.index());
        EXPECT_EQ(stored[i].record.index(), i < 3 ? 0u : i == 3 ? 1u : 2u) << i;
    }
    EXPECT_EQ(db->lastSeq(run), 6);
    EXPECT_EQ(db->lastSeq(other), 1);
    const auto tail = db->recordsSince(run, 3, 2);
    ASSERT_EQ(tail.size(), 2u);
    EXPECT_EQ(tail[0].seq, 4);
    EXPECT_EQ(tail[1].seq, 5);
}

// A file of schema 5 keeps every row when migrated, and each run's rows are numbered
// steps by step, then evaluations, then events by id; new rows follow on.
TEST_F(StreamStore, Schema5IsMigratedKeepingRowsAndNumberingThem) {
    const std::string path = file("old.db");
    int64_t a = 0, b = 0;
    {
        auto db = Database::open(path);
        a = trainedRun(*db, 25);
        b = trainedRun(*db, 5);
        db->setRunLabel(a, "kept");
    }
    {
        sqlite3* raw = nullptr;
        ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
        char* err = nullptr;
        const int rc = sqlite3_exec(raw, ampbench::test::kBackToSchema5, nullptr, nullptr, &err);
        const std::string message = err ? err : "";
        sqlite3_free(err);
        sqlite3_close(raw);
        ASSERT_EQ(rc, SQLITE_OK) << message;
    }
    {
        auto reader = Database::open(path, Database::Mode::ReadOnly);
        EXPECT_EQ(reader->schemaVersion(), 5);
        EXPECT_EQ(reader->stepCount(a), 25);
        EXPECT_THROW(reader->lastSeq(a), ampbench::store::StoreError);
    }
    auto db = Database::open(path);
    EXPECT_EQ(db->schemaVersion(), Database::kSchemaVersion);
    EXPECT_EQ(db->run(a)->label, "kept");
    const auto rows = db->recordsSince(a, 0);
    // 25 steps, 3 evaluations (steps 10, 20, 25), 2 events.
    ASSERT_EQ(rows.size(), 30u);
    for (size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].seq, static_cast<int64_t>(i + 1));
        if (i < 25) {
            ASSERT_TRUE(std::holds_alternative<StepRecord>(rows[i].record)) << i;
            expectSameStep(std::get<StepRecord>(rows[i].record),
                           stepOf(static_cast<int64_t>(i + 1)));
        } else if (i < 28) {
            EXPECT_TRUE(std::holds_alternative<EvalRecord>(rows[i].record)) << i;
        } else {
            EXPECT_TRUE(std::holds_alternative<EventRecord>(rows[i].record)) << i;
        }
    }
    EXPECT_EQ(std::get<EventRecord>(rows[28].record).message, "inf \"grads\"\n");
    EXPECT_EQ(db->lastSeq(b), 5 + 1 + 2);
    db->insertSteps(a, {stepOf(26)});
    EXPECT_EQ(db->lastSeq(a), 31);
}

// Reading a stream twice adds nothing the second time; the local rows equal the
// remote ones bit for bit with the same sequence numbers, and the run's status and
// fields arrive. An imported run has no owner here, so it is never taken for interrupted.
TEST_F(StreamStore, IngestTwiceGivesTheSameRows) {
    auto remote = Database::open(file("remote.db"));
    const int64_t a = trainedRun(*remote, 40);
    const int64_t b = trainedRun(*remote, 12, RunStatus::Failed);
    const auto lines = streamOf(*remote, {a, b});

    auto local = Database::open(file("local.db"));
    local->createExperiment("already here", "{}");  // local ids differ from the remote's
    const auto first = ingestAll(*local, lines);
    EXPECT_TRUE(first.problems().empty()) << first.problems().front().message;
    EXPECT_EQ(first.counts().experiments, 2);
    EXPECT_EQ(first.counts().runs, 2);
    EXPECT_EQ(first.counts().rows_added, remote->lastSeq(a) + remote->lastSeq(b));
    EXPECT_EQ(first.counts().statuses, 2);

    const auto second = ingestAll(*local, lines);
    EXPECT_TRUE(second.problems().empty());
    EXPECT_EQ(second.counts().experiments, 0);
    EXPECT_EQ(second.counts().runs, 0);
    EXPECT_EQ(second.counts().rows_added, 0);
    EXPECT_EQ(second.counts().rows_present, first.counts().rows_added);
    EXPECT_EQ(local->experiments().size(), 3u);
    ASSERT_EQ(local->runs().size(), 2u);

    for (int64_t remote_id : {a, b}) {
        const auto id = local->runFromOrigin("gpu", remote_id);
        ASSERT_TRUE(id);
        expectSameRows(*remote, remote_id, *local, *id);
        const auto mine = local->run(*id);
        const auto theirs = remote->run(remote_id);
        EXPECT_EQ(mine->status, theirs->status);
        EXPECT_EQ(mine->failure, theirs->failure);
        EXPECT_EQ(mine->error, theirs->error);
        EXPECT_EQ(mine->arm, theirs->arm);
        EXPECT_EQ(mine->seed, theirs->seed);
        EXPECT_EQ(mine->spec_json, theirs->spec_json);
        EXPECT_EQ(mine->env_json, theirs->env_json);
        EXPECT_EQ(mine->inputs_json, theirs->inputs_json);
        EXPECT_EQ(mine->started_at, theirs->started_at);
        EXPECT_EQ(mine->origin, "gpu");
        EXPECT_EQ(mine->origin_run_id, remote_id);
        EXPECT_EQ(local->experiment(mine->experiment_id)->spec_json,
                  remote->experiment(theirs->experiment_id)->spec_json);
        EXPECT_EQ(local->steps(*id).size(), remote->steps(remote_id).size());
    }
    // Another origin is another machine: its runs are new rows.
    const auto elsewhere = ingestAll(*local, lines, "other-gpu");
    EXPECT_EQ(elsewhere.counts().runs, 2);
    EXPECT_EQ(local->runs().size(), 4u);
}

// A running run imported, then read again with a reopened connection, stays running
// (no local process owns it); its status record later ends it.
TEST_F(StreamStore, ImportedRunningRunIsNotInterruptedHere) {
    auto remote = Database::open(file("remote.db"));
    const int64_t a = trainedRun(*remote, 10, RunStatus::Running);
    {
        auto local = Database::open(file("local.db"));
        ingestAll(*local, streamOf(*remote, {a}));
    }
    auto local = Database::open(file("local.db"));
    EXPECT_EQ(local->recoveredRuns(), 0);
    const auto id = local->runFromOrigin("gpu", a);
    EXPECT_EQ(local->run(*id)->status, RunStatus::Running);
    remote->finishRun(a, RunStatus::Finished, "");
    ingestAll(*local, streamOf(*remote, {a}, remote->lastSeq(a)));
    EXPECT_EQ(local->run(*id)->status, RunStatus::Finished);
}

// Rows missing in the middle: the gap is named (run and range), the rows after it are
// kept, and a later stream that holds them fills it.
TEST_F(StreamStore, GapIsReportedRowsAfterItKeptAndFilledLater) {
    auto remote = Database::open(file("remote.db"));
    const int64_t a = trainedRun(*remote, 30);
    auto lines = streamOf(*remote, {a});
    // header, experiment, run, then rows seq 1.. : drop seqs 5 to 8
    auto cut = lines;
    cut.erase(cut.begin() + 3 + 4, cut.begin() + 3 + 8);
    auto local = Database::open(file("local.db"));
    const auto in = ingestAll(*local, cut);
    ASSERT_EQ(in.problems().size(), 1u);
    const auto& p = in.problems().front();
    EXPECT_EQ(p.kind, IngestProblem::Kind::Gap);
    EXPECT_EQ(p.line, 3 + 4 + 1);
    EXPECT_NE(p.message.find("run " + std::to_string(a) + " of gpu"), std::string::npos)
        << p.message;
    EXPECT_NE(p.message.find("records 5-8 missing"), std::string::npos) << p.message;
    EXPECT_NE(p.message.find("were kept"), std::string::npos) << p.message;
    const int64_t id = *local->runFromOrigin("gpu", a);
    EXPECT_EQ(static_cast<int64_t>(local->recordsSince(id, 0).size()), remote->lastSeq(a) - 4);
    EXPECT_EQ(local->lastSeq(id), remote->lastSeq(a));

    const auto again = ingestAll(*local, lines);
    EXPECT_TRUE(again.problems().empty());
    EXPECT_EQ(again.counts().rows_added, 4);
    expectSameRows(*remote, a, *local, id);

    // The stream's end cut off: the status record says what never came.
    auto local2 = Database::open(file("local2.db"));
    auto early = lines;
    early.erase(early.end() - 4, early.end() - 1);  // the last rows, not the status
    const auto in2 = ingestAll(*local2, early);
    ASSERT_EQ(in2.problems().size(), 1u);
    EXPECT_NE(in2.problems()[0].message.find("never arrived"), std::string::npos);
}

// Resuming with --since N after the rows already here: no duplicates, no gap.
TEST_F(StreamStore, ResumeAfterTheLastSeqHereHasNoDuplicatesAndNoGap) {
    auto remote = Database::open(file("remote.db"));
    const int64_t a = trainedRun(*remote, 50, RunStatus::Running);
    auto local = Database::open(file("local.db"));
    auto part = streamOf(*remote, {a});
    part.resize(3 + 20);  // header, experiment, run, 20 rows: the connection dropped
    ingestAll(*local, part);
    const auto since = lastSeqFromOrigin(*local, "gpu", a);
    ASSERT_TRUE(since);
    EXPECT_EQ(*since, 20);
    remote->finishRun(a, RunStatus::Finished, "");
    const auto rest = ingestAll(*local, streamOf(*remote, {a}, *since));
    EXPECT_TRUE(rest.problems().empty());
    EXPECT_EQ(rest.counts().rows_present, 0);
    EXPECT_EQ(rest.counts().rows_added, remote->lastSeq(a) - 20);
    expectSameRows(*remote, a, *local, *local->runFromOrigin("gpu", a));
}

TEST_F(StreamStore, UnknownVersionIsRefusedNamingBothVersions) {
    auto remote = Database::open(file("remote.db"));
    auto lines = streamOf(*remote, {trainedRun(*remote, 5)});
    auto header = nlohmann::json::parse(lines[0]);
    header["stream_version"] = 2;
    lines[0] = header.dump();
    auto local = Database::open(file("local.db"));
    Ingestor in(*local, "gpu");
    EXPECT_FALSE(in.feed(lines[0]));
    EXPECT_FALSE(in.feed(lines[1]));
    in.finish();
    EXPECT_TRUE(in.refused());
    ASSERT_EQ(in.problems().size(), 1u);
    EXPECT_EQ(in.problems()[0].kind, IngestProblem::Kind::Refused);
    EXPECT_NE(in.problems()[0].message.find("version 2"), std::string::npos);
    EXPECT_NE(in.problems()[0].message.find("reads version 1"), std::string::npos);
    EXPECT_TRUE(local->experiments().empty());
}

TEST_F(StreamStore, NotAStreamIsRefusedAtItsFirstLine) {
    auto local = Database::open(file("local.db"));
    Ingestor in(*local, "gpu");
    EXPECT_FALSE(in.feed("experiment 3 'smoke': 3 runs on cpu"));
    EXPECT_TRUE(in.refused());
    EXPECT_EQ(in.problems().at(0).line, 1);
    EXPECT_NE(in.problems()[0].message.find("not a record stream"), std::string::npos);
}

// A malformed line is reported with its number and skipped; what follows is read.
TEST_F(StreamStore, MalformedLineIsReportedAndSkipped) {
    auto remote = Database::open(file("remote.db"));
    const int64_t a = trainedRun(*remote, 10);
    auto lines = streamOf(*remote, {a});
    lines.insert(lines.begin() + 5, "{\"type\":\"step\",\"run\":1,\"seq\":");
    lines.insert(lines.begin() + 6, "");  // blank lines are no problem
    auto local = Database::open(file("local.db"));
    const auto in = ingestAll(*local, lines);
    ASSERT_EQ(in.problems().size(), 1u);
    EXPECT_EQ(in.problems()[0].kind, IngestProblem::Kind::Malformed);
    EXPECT_EQ(in.problems()[0].line, 6);
    EXPECT_NE(in.problems()[0].message.find("skipped"), std::string::npos);
    expectSameRows(*remote, a, *local, *local->runFromOrigin("gpu", a));
}

// Rows of a run the stream never introduced (and this database does not know) are
// reported, not guessed into some run.
TEST_F(StreamStore, RowsOfAnUnknownRunAreReported) {
    auto local = Database::open(file("local.db"));
    Ingestor in(*local, "gpu");
    in.feed(encode(makeHeader("")));
    in.feed(encode(RowRecord{9, {1, stepOf(1)}}));
    in.finish();
    ASSERT_EQ(in.problems().size(), 1u);
    EXPECT_EQ(in.problems()[0].kind, IngestProblem::Kind::Orphan);
    EXPECT_NE(in.problems()[0].message.find("run 9"), std::string::npos);
}

// A run followed from queued: its run record comes again once it runs (with the
// environment it runs in), so the local copy has it.
TEST_F(StreamStore, TailWritesTheRunAgainWhenItStarts) {
    auto remote = Database::open(file("remote.db"));
    const int64_t exp = remote->createExperiment("e", "{}");
    const int64_t run = remote->createRun(exp, "fp32", 0, 1, "{}", 10);
    std::vector<std::string> lines{encode(makeHeader(""))};
    Tail tail(*remote, {run});
    auto sink = [&](const Record& r) { lines.push_back(encode(r)); };
    EXPECT_FALSE(tail.poll(sink));
    EXPECT_EQ(lines.size(), 3u);  // header, experiment, run (queued)
    remote->markRunning(run, R"({"device":"cuda:0"})");
    remote->insertSteps(run, {stepOf(1)});
    EXPECT_FALSE(tail.poll(sink));
    remote->finishRun(run, RunStatus::Finished, "");
    EXPECT_TRUE(tail.poll(sink));
    EXPECT_EQ(lines.size(), 3u + 1 + 1 + 1 + 1);  // run (running), step, run (finished), status
    auto local = Database::open(file("local.db"));
    const auto in = ingestAll(*local, lines);
    EXPECT_TRUE(in.problems().empty());
    const auto mine = local->run(*local->runFromOrigin("gpu", run));
    EXPECT_EQ(mine->env_json, R"({"device":"cuda:0"})");
    EXPECT_EQ(mine->status, RunStatus::Finished);
    EXPECT_EQ(mine->started_at, remote->run(run)->started_at);
}
