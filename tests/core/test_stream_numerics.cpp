// Per-layer numerics on the record stream: a step's group through encode/decode bit
// for bit, bad groups named by line and field, tail sending each step's numerics
// before its row (and after a resume only the steps not held), the ingest idempotent,
// and the recorder's listener hearing them with the rows.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

#include "ScratchDir.h"
#include "StreamTestSupport.h"
#include "core/store/Database.h"
#include "core/store/NumericsStore.h"
#include "core/store/RecordStore.h"
#include "core/store/RunRecorder.h"
#include "core/stream/Ingestor.h"
#include "core/stream/RecordStream.h"
#include "core/stream/Tail.h"

namespace fs = std::filesystem;
using ampbench::store::Database;
using ampbench::store::NumericsStore;
using ampbench::store::RecordStore;
using ampbench::store::SequencedRecord;
using namespace ampbench::run;
using namespace ampbench::stream;

namespace {

using ampbench::test::kInf;
using ampbench::test::kNaN;

/// A step's records: a gradient, a tensor an FP8 layer cast (overflowed: inf absmax,
/// -inf headroom; e4m3, a saturated share, a scale) and an activation, with digits
/// that need all 17, a denormal share and an all-zero headroom.
std::vector<NumericsRecord> numericsOf(int64_t step) {
    NumericsRecord grad;
    grad.step = step;
    grad.kind = NumericsKind::Grad;
    grad.name = "head.weight";
    grad.absmax = 1.0 / 3.0 * static_cast<double>(step);
    grad.underflow_subnormal = 5e-324;
    grad.underflow_normal = 0.1 + 0.2;
    grad.headroom_log2 = std::log2(65504.0 / grad.absmax);
    grad.numel = (int64_t{1} << 53) + 1;
    grad.loss_scale = 65536.0;
    grad.dtype = "float16";
    NumericsRecord broken = grad;
    broken.kind = NumericsKind::Cast;
    broken.name = "blocks.0.qkv:weight \"q\" ✓";
    broken.format = "e4m3";
    broken.saturated = 1.0 / 3.0;
    broken.scale = 0.1 + 0.2;
    broken.absmax = kInf;
    broken.headroom_log2 = -kInf;
    broken.underflow_normal = kNaN;
    broken.nonfinite = 3;
    NumericsRecord act = grad;
    act.kind = NumericsKind::Activation;
    act.name = "blocks.0.qkv";
    act.absmax = 0.0;
    act.headroom_log2 = kInf;
    act.loss_scale = 1.0;
    act.dtype = "bfloat16";
    return {grad, broken, act};
}

void expectSameNumerics(const NumericsRecord& a, const NumericsRecord& b) {
    EXPECT_EQ(a.step, b.step);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.name, b.name);
    EXPECT_BITS(a.absmax, b.absmax);
    EXPECT_BITS(a.underflow_subnormal, b.underflow_subnormal);
    EXPECT_BITS(a.underflow_normal, b.underflow_normal);
    EXPECT_BITS(a.saturated, b.saturated);
    EXPECT_BITS(a.headroom_log2, b.headroom_log2);
    EXPECT_EQ(a.format, b.format);
    EXPECT_BITS(a.scale, b.scale);
    EXPECT_EQ(a.nonfinite, b.nonfinite);
    EXPECT_EQ(a.numel, b.numel);
    EXPECT_BITS(a.loss_scale, b.loss_scale);
    EXPECT_EQ(a.dtype, b.dtype);
}

StepRecord stepOf(int64_t n) {
    StepRecord s;
    s.step = n;
    s.samples = n * 64;
    s.loss = 2.3 / static_cast<double>(n);
    s.lr = 0.1;
    s.loss_scale = 65536.0;
    return s;
}

std::string errorOf(const std::string& line) {
    try {
        decode(line, 4);
    } catch (const StreamError& e) {
        EXPECT_EQ(e.line(), 4);
        return e.what();
    }
    return "(decoded)";
}

/// The line numbers (0-based) of the stream's numerics records.
std::vector<size_t> numericsLines(const std::vector<std::string>& lines) {
    std::vector<size_t> at;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (std::holds_alternative<NumericsGroup>(decode(lines[i], static_cast<int64_t>(i + 1))))
            at.push_back(i);
    }
    return at;
}

class StreamNumerics : public ampbench::test::ScratchDirTest {
  protected:
    /// A run of `steps` steps written ten a transaction, as the recorder writes them,
    /// with numerics at steps 10 and 20 committed with (the transaction of) their step.
    int64_t runWithNumerics(Database& db, int64_t steps, RunStatus status = RunStatus::Finished) {
        const int64_t exp = db.createExperiment("remote exp", "{}");
        const int64_t run = db.createRun(exp, "amp", 1, 42, "{}", steps);
        db.markRunning(run, R"({"device":"cuda:0"})");
        for (int64_t from = 1; from <= steps; from += 10) {
            std::vector<StepRecord> batch;
            for (int64_t n = from; n < from + 10 && n <= steps; ++n)
                batch.push_back(stepOf(n));
            db.begin();
            db.insertSteps(run, batch);
            db.insertEvals(run, {{batch.back().step, batch.back().samples, 0.5, 0.9, 1.5}});
            if (batch.back().step % 10 == 0 && batch.back().step <= 20)
                NumericsStore(db).insert(run, numericsOf(batch.back().step));
            db.commit();
        }
        if (status != RunStatus::Running)
            db.finishRun(run, status, "");
        return run;
    }

    /// What `tail` writes for the run: header, experiment, run, rows, numerics, status.
    static std::vector<std::string> streamOf(const Database& db, int64_t run, int64_t since = 0) {
        std::vector<std::string> lines{encode(makeHeader(R"({"hostname":"gpu-box"})"))};
        Tail tail(db, {run}, since);
        auto sink = [&](const Record& r) { lines.push_back(encode(r)); };
        tail.poll(sink);
        tail.closeAll(sink);
        return lines;
    }

    static Ingestor& ingest(Ingestor& in, const std::vector<std::string>& lines) {
        for (const auto& l : lines)
            in.feed(l);
        in.finish();
        return in;
    }

    static void expectSameNumericsRows(const Database& a, int64_t run_a, const Database& b,
                                       int64_t run_b) {
        const auto theirs = NumericsStore(a).rows(run_a);
        const auto mine = NumericsStore(b).rows(run_b);
        ASSERT_EQ(theirs.size(), mine.size());
        for (size_t i = 0; i < theirs.size(); ++i)
            expectSameNumerics(theirs[i], mine[i]);
    }

    fs::path dir_;
};

}  // namespace

TEST(RecordStreamNumerics, GroupRoundTripsBitForBit) {
    const NumericsGroup g{7, 100, numericsOf(100)};
    const std::string line = encode(g);
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    EXPECT_NE(line.find(R"("type":"numerics")"), std::string::npos) << line;
    EXPECT_NE(line.find(R"("absmax":"Infinity")"), std::string::npos) << line;
    EXPECT_NE(line.find(R"("headroom_log2":"-Infinity")"), std::string::npos) << line;
    EXPECT_NE(line.find(R"("underflow_normal":"NaN")"), std::string::npos) << line;
    const auto back = std::get<NumericsGroup>(decode(line, 1));
    EXPECT_EQ(back.run, 7);
    EXPECT_EQ(back.step, 100);
    ASSERT_EQ(back.rows.size(), g.rows.size());
    for (size_t i = 0; i < g.rows.size(); ++i)
        expectSameNumerics(back.rows[i], g.rows[i]);
    // The rows carry no step of their own: each reads back as the group's.
    auto other = g;
    other.rows[1].step = 3;
    EXPECT_EQ(std::get<NumericsGroup>(decode(encode(other), 1)).rows[1].step, 100);
    EXPECT_TRUE(std::get<NumericsGroup>(decode(encode(NumericsGroup{7, 1, {}}), 1)).rows.empty());
}

TEST(RecordStreamNumerics, BadGroupsNameTheirLineAndField) {
    EXPECT_EQ(errorOf(R"({"type":"numerics","run":7,"step":1})"),
              "line 4: numerics record: \"rows\" is missing");
    EXPECT_EQ(errorOf(R"({"type":"numerics","step":1,"rows":[]})"),
              "line 4: numerics record: \"run\" is missing");
    EXPECT_EQ(errorOf(R"({"type":"numerics","run":7,"step":0,"rows":[]})"),
              "line 4: numerics record: \"step\" must be 1 or more, not 0");
    EXPECT_EQ(errorOf(R"({"type":"numerics","run":7,"step":1,"rows":{}})"),
              "line 4: numerics record: \"rows\" must be a list, not {}");
    EXPECT_EQ(errorOf(R"({"type":"numerics","run":7,"step":1,"rows":[3]})"),
              "line 4: numerics record: rows[0] must be an object, not 3");
    std::string line = encode(NumericsGroup{7, 5, numericsOf(5)});
    const auto absmax = line.rfind(R"("absmax":)");
    line.replace(absmax, std::strlen(R"("absmax")"), R"("absmix")");
    EXPECT_EQ(errorOf(line), "line 4: numerics record: rows[2]: \"absmax\" is missing");
    line = encode(NumericsGroup{7, 5, numericsOf(5)});
    line.replace(line.find(R"("kind":"grad")"), std::strlen(R"("kind":"grad")"),
                 R"("kind":"weight")");
    EXPECT_EQ(errorOf(line), "line 4: numerics record: rows[0]: unknown numerics kind \"weight\"");
    line = encode(NumericsGroup{7, 5, numericsOf(5)});
    line.replace(line.find(R"("nonfinite":0)"), std::strlen(R"("nonfinite":0)"),
                 R"("nonfinite":"0")");
    EXPECT_EQ(errorOf(line),
              "line 4: numerics record: rows[0]: \"nonfinite\" must be a whole number, not \"0\"");
}

// A stream from a writer before formats has no "format", "saturated" or "scale": its
// rows read as they were measured, against fp16, nothing saturated, no scale.
TEST(RecordStreamNumerics, RowsWithoutFormatReadAsFp16) {
    std::string line = encode(NumericsGroup{7, 5, numericsOf(5)});
    EXPECT_NE(line.find(R"("format":"e4m3")"), std::string::npos) << line;
    for (const char* key : {"format", "saturated", "scale"}) {
        const std::string quoted = std::string("\"") + key + "\":";
        for (auto at = line.find(quoted); at != std::string::npos; at = line.find(quoted)) {
            const auto end = line.find_first_of(",}", line.find(':', at) + 1);
            line.erase(at, end + 1 - at);  // the key, its value and the comma after it
        }
    }
    ASSERT_EQ(line.find("saturated"), std::string::npos) << line;
    const auto back = std::get<NumericsGroup>(decode(line, 1));
    ASSERT_EQ(back.rows.size(), 3u);
    for (const auto& r : back.rows) {
        EXPECT_EQ(r.format, "fp16");
        EXPECT_EQ(r.saturated, 0.0);
        EXPECT_EQ(r.scale, 1.0);
    }
    EXPECT_EQ(back.rows[1].kind, NumericsKind::Cast);
    EXPECT_EQ(back.rows[1].absmax, kInf);  // the rest as it was
}

// A format this build does not know, a saturated share outside 0…1 and a scale that
// is not a positive number are named with the line and row.
TEST(RecordStreamNumerics, BadFormatSaturationOrScaleIsNamed) {
    const std::string good = encode(NumericsGroup{7, 5, numericsOf(5)});
    auto with = [&](const std::string& from, const std::string& to) {
        std::string line = good;
        const auto at = line.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        return line.replace(at, from.size(), to);
    };
    EXPECT_EQ(errorOf(with(R"("format":"e4m3")", R"("format":"e3m4")")),
              "line 4: numerics record: rows[1]: unknown number format \"e3m4\" (known: e4m3, "
              "e5m2, fp16, bf16, fp32)");
    EXPECT_EQ(errorOf(with(R"("format":"fp16")", R"("format":16)")),
              "line 4: numerics record: rows[0]: \"format\" must be a string, not 16");
    EXPECT_EQ(errorOf(with(R"("saturated":0.0,)", R"("saturated":1.5,)")),
              "line 4: numerics record: rows[0]: \"saturated\" is a share of the values, from 0 "
              "to 1, not 1.5");
    EXPECT_EQ(
        errorOf(with(R"("scale":1.0,)", R"("scale":0,)")),
        "line 4: numerics record: rows[0]: \"scale\" must be a positive finite number, not 0");
    EXPECT_EQ(errorOf(with(R"("scale":1.0,)", R"("scale":"Infinity",)")),
              "line 4: numerics record: rows[0]: \"scale\" must be a positive finite number, not "
              "\"Infinity\"");
}

TEST(RecordStreamNumerics, GroupsAreOnePerStepInStepOrder) {
    auto rows = numericsOf(20);
    const auto ten = numericsOf(10);
    rows.insert(rows.end(), ten.begin(), ten.end());
    const auto groups = numericsGroups(4, rows);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].step, 10);
    EXPECT_EQ(groups[1].step, 20);
    EXPECT_EQ(groups[0].run, 4);
    ASSERT_EQ(groups[1].rows.size(), 3u);
    EXPECT_EQ(groups[1].rows[2].kind, NumericsKind::Activation);  // order kept within a step
}

// Tailed into a second database, the run's numerics equal the source's; each step's
// group is sent once, just before its step row.
TEST_F(StreamNumerics, TailedRunHasTheSourcesNumerics) {
    auto remote = Database::open(file("remote.db"));
    const int64_t run = runWithNumerics(*remote, 30);
    const auto lines = streamOf(*remote, run);
    const auto at = numericsLines(lines);
    ASSERT_EQ(at.size(), 2u);
    for (size_t i = 0; i < at.size(); ++i) {
        const auto group = std::get<NumericsGroup>(decode(lines[at[i]], 1));
        EXPECT_EQ(group.step, 10 * static_cast<int64_t>(i + 1));
        EXPECT_EQ(group.rows.size(), 3u);
        const auto next = std::get<RowRecord>(decode(lines[at[i] + 1], 1));
        EXPECT_EQ(std::get<StepRecord>(next.row.record).step, group.step);
    }

    auto local = Database::open(file("local.db"));
    Ingestor in(*local, "gpu");
    ingest(in, lines);
    EXPECT_TRUE(in.problems().empty()) << in.problems().front().message;
    EXPECT_EQ(in.counts().numerics_added, 6);
    EXPECT_EQ(in.counts().numerics_present, 0);
    const auto mine = local->runFromOrigin("gpu", run);
    ASSERT_TRUE(mine);
    EXPECT_EQ(NumericsStore(*local).count(*mine), 6);
    expectSameNumericsRows(*remote, run, *local, *mine);
}

// Resumed after step 15's row, the stream holds step 20's group and not step 10's.
TEST_F(StreamNumerics, TailSinceAStepSendsOnlyTheLaterGroups) {
    auto remote = Database::open(file("remote.db"));
    const int64_t run = runWithNumerics(*remote, 30);
    int64_t seq_of_15 = 0;
    for (const auto& r : remote->recordsSince(run, 0)) {
        if (const auto* s = std::get_if<StepRecord>(&r.record); s && s->step == 15)
            seq_of_15 = r.seq;
    }
    ASSERT_GT(seq_of_15, 0);
    EXPECT_EQ(RecordStore(*remote).stepAtSeq(run, seq_of_15), 15);
    EXPECT_EQ(RecordStore(*remote).stepAtSeq(run, 0), 0);
    EXPECT_EQ(NumericsStore(*remote).rowsOfSteps(run, 15, 20).size(), 3u);
    EXPECT_TRUE(NumericsStore(*remote).rowsOfSteps(run, 20, 30).empty());

    const auto lines = streamOf(*remote, run, seq_of_15);
    const auto at = numericsLines(lines);
    ASSERT_EQ(at.size(), 1u);
    EXPECT_EQ(std::get<NumericsGroup>(decode(lines[at[0]], 1)).step, 20);

    // Resumed after step 9's row (steps 1-10 are seqs 1-10): step 10's group too.
    const int64_t before_10 = 9;
    EXPECT_EQ(RecordStore(*remote).stepAtSeq(run, before_10), 9);
    EXPECT_EQ(numericsLines(streamOf(*remote, run, before_10)).size(), 2u);
}

// A resumed or replayed stream: the second ingest adds nothing.
TEST_F(StreamNumerics, IngestTwiceAddsNothingTheSecondTime) {
    auto remote = Database::open(file("remote.db"));
    const int64_t run = runWithNumerics(*remote, 30);
    const auto lines = streamOf(*remote, run);
    auto local = Database::open(file("local.db"));
    Ingestor first(*local, "gpu");
    ingest(first, lines);
    Ingestor second(*local, "gpu");
    ingest(second, lines);
    EXPECT_TRUE(second.problems().empty());
    EXPECT_EQ(second.counts().rows_added, 0);
    EXPECT_EQ(second.counts().numerics_added, 0);
    EXPECT_EQ(second.counts().numerics_present, 6);
    const auto mine = *local->runFromOrigin("gpu", run);
    EXPECT_EQ(NumericsStore(*local).count(mine), 6);
    expectSameNumericsRows(*remote, run, *local, mine);
}

TEST_F(StreamNumerics, MalformedGroupIsReportedByLineAndSkipped) {
    auto remote = Database::open(file("remote.db"));
    const int64_t run = runWithNumerics(*remote, 30);
    auto lines = streamOf(*remote, run);
    const auto at = numericsLines(lines);
    ASSERT_EQ(at.size(), 2u);
    lines[at[0]] =
        R"({"type":"numerics","run":)" + std::to_string(run) + R"(,"step":10,"rows":[{}]})";
    auto local = Database::open(file("local.db"));
    Ingestor in(*local, "gpu");
    ingest(in, lines);
    ASSERT_EQ(in.problems().size(), 1u);
    EXPECT_EQ(in.problems()[0].kind, IngestProblem::Kind::Malformed);
    EXPECT_EQ(in.problems()[0].line, static_cast<int64_t>(at[0] + 1));
    EXPECT_NE(in.problems()[0].message.find("rows[0]: \"kind\" is missing"), std::string::npos)
        << in.problems()[0].message;
    EXPECT_NE(in.problems()[0].message.find("skipped"), std::string::npos);
    const auto mine = *local->runFromOrigin("gpu", run);
    const auto rows = NumericsStore(*local).rows(mine);
    ASSERT_EQ(rows.size(), 3u);  // step 20's; every other record came
    EXPECT_EQ(rows[0].step, 20);
    EXPECT_EQ(local->lastSeq(mine), remote->lastSeq(run));
}

TEST_F(StreamNumerics, GroupOfAnUnknownRunIsReported) {
    auto local = Database::open(file("local.db"));
    Ingestor in(*local, "gpu");
    in.feed(encode(makeHeader("")));
    in.feed(encode(NumericsGroup{9, 10, numericsOf(10)}));
    in.finish();
    ASSERT_EQ(in.problems().size(), 1u);
    EXPECT_EQ(in.problems()[0].kind, IngestProblem::Kind::Orphan);
    EXPECT_EQ(in.problems()[0].line, 2);
    EXPECT_NE(in.problems()[0].message.find("step 10 of run 9"), std::string::npos)
        << in.problems()[0].message;
}

// A run that ended between a step's numerics and its row (the step failed): its
// numerics are sent before its status all the same.
TEST_F(StreamNumerics, EndedRunSendsNumericsOfAStepWithoutARow) {
    auto remote = Database::open(file("remote.db"));
    const int64_t run = runWithNumerics(*remote, 10, RunStatus::Running);
    NumericsStore(*remote).insert(run, numericsOf(11));
    const auto running = streamOf(*remote, run);
    EXPECT_EQ(numericsLines(running).size(), 1u);  // step 11 waits for its row
    remote->finishRun(run, RunStatus::Failed, "out of memory", FailureKind::OutOfMemory);
    const auto ended = streamOf(*remote, run);
    const auto at = numericsLines(ended);
    ASSERT_EQ(at.size(), 2u);
    EXPECT_EQ(std::get<NumericsGroup>(decode(ended[at[1]], 1)).step, 11);
    EXPECT_TRUE(std::holds_alternative<StatusRecord>(decode(ended[at[1] + 1], 1)));
}

// The recorder's listener hears a flush's numerics before its rows (what `run
// --stream` writes), and a replay of the same step observed again is no new row.
TEST_F(StreamNumerics, RecorderTellsTheListenerTheNumericsFirst) {
    auto db = Database::open(file("a.db"));
    const int64_t exp = db->createExperiment("e", "{}");
    const int64_t run = db->createRun(exp, "amp", 0, 1, "{}", 10);
    struct Heard : ampbench::store::RecordListener {
        std::vector<std::string> calls;
        std::vector<NumericsRecord> numerics;
        void numericsCommitted(int64_t, const std::vector<NumericsRecord>& r) override {
            calls.push_back("numerics");
            numerics.insert(numerics.end(), r.begin(), r.end());
        }
        void rowsCommitted(int64_t, const std::vector<SequencedRecord>&) override {
            calls.push_back("rows");
        }
    } heard;
    db->setRecordListener(&heard);
    {
        ampbench::store::RunRecorder rec(*db, run, std::chrono::hours(1));
        rec.onStart({});
        rec.onStep(stepOf(1));
        rec.onNumerics(numericsOf(2));
        rec.onStep(stepOf(2));
        rec.onFinish({});
    }
    db->setRecordListener(nullptr);
    EXPECT_EQ(heard.calls, (std::vector<std::string>{"numerics", "rows"}));
    ASSERT_EQ(heard.numerics.size(), 3u);
    EXPECT_EQ(NumericsStore(*db).count(run), 3);
    EXPECT_EQ(NumericsStore(*db).insert(run, numericsOf(2)), 0);
    EXPECT_EQ(NumericsStore(*db).insert(run, numericsOf(3)), 3);
    EXPECT_EQ(NumericsStore(*db).count(run), 6);
}
