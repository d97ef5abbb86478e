// The numerics table (schema 7, indexed by step in 8, formats, saturation, scales and
// cast tensors in 12): round trip, replacement, cascade, export, the recorder, and
// files of the schemas before them.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "ScratchDir.h"
#include "StoreDowngrade.h"
#include "core/store/BatchSearchStore.h"
#include "core/store/Database.h"
#include "core/store/Export.h"
#include "core/store/NumericsStore.h"
#include "core/store/RunRecorder.h"

namespace fs = std::filesystem;
using ampbench::store::Database;
using ampbench::store::NumericsStore;
using namespace ampbench::run;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

class NumericsStoreTest : public ampbench::test::ScratchDirTest {};

NumericsRecord row(int64_t step, NumericsKind kind, const std::string& name, double absmax) {
    NumericsRecord r;
    r.step = step;
    r.kind = kind;
    r.name = name;
    r.absmax = absmax;
    r.underflow_subnormal = 0.125;
    r.underflow_normal = 0.375;
    r.headroom_log2 = std::isinf(absmax) ? -kInf : std::log2(65504.0 / absmax);
    r.nonfinite = std::isinf(absmax) ? 3 : 0;
    r.numel = 1000;
    r.loss_scale = 65536.0;
    r.dtype = kind == NumericsKind::Grad ? "float32" : "float16";
    return r;
}

int64_t addRun(Database& db) {
    const int64_t e = db.createExperiment("exp", "{}");
    return db.createRun(e, "amp-fp16", 1, 7, R"({"precision":"amp-fp16"})", 100);
}

using ampbench::test::rawCount;
using ampbench::test::rawExec;

}  // namespace

// Every field comes back, infinities included; a row for the same step, kind and name
// replaces the old one; rows are read by kind; deleting the run deletes them.
TEST_F(NumericsStoreTest, RoundTripReplaceAndCascade) {
    auto db = Database::open(file("n.db"));
    const int64_t run = addRun(*db);
    NumericsStore store(*db);
    ASSERT_TRUE(store.available());
    store.insert(run, {row(10, NumericsKind::Grad, "head.weight", 2.0),
                       row(10, NumericsKind::Activation, "blocks.0.qkv", kInf),
                       row(20, NumericsKind::Grad, "head.weight", 4.0)});
    store.insert(run, {row(20, NumericsKind::Grad, "head.weight", 8.0)});
    EXPECT_EQ(store.count(run), 3);
    const auto all = store.rows(run);
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].kind, NumericsKind::Grad);
    EXPECT_EQ(all[0].step, 10);
    EXPECT_DOUBLE_EQ(all[1].absmax, 8.0);  // replaced
    const auto& a = all[2];
    EXPECT_EQ(a.kind, NumericsKind::Activation);
    EXPECT_EQ(a.name, "blocks.0.qkv");
    EXPECT_EQ(a.absmax, kInf);
    EXPECT_EQ(a.headroom_log2, -kInf);
    EXPECT_EQ(a.nonfinite, 3);
    EXPECT_EQ(a.numel, 1000);
    EXPECT_DOUBLE_EQ(a.underflow_subnormal, 0.125);
    EXPECT_DOUBLE_EQ(a.underflow_normal, 0.375);
    EXPECT_DOUBLE_EQ(a.loss_scale, 65536.0);
    EXPECT_EQ(a.dtype, "float16");
    EXPECT_EQ(store.rows(run, NumericsKind::Activation).size(), 1u);
    db->deleteRun(run);
    EXPECT_EQ(store.count(run), 0);
}

// The recorder writes numerics with the steps, in its batched transaction.
TEST_F(NumericsStoreTest, RecorderWritesThemWithTheSteps) {
    auto db = Database::open(file("r.db"));
    const int64_t run = addRun(*db);
    {
        ampbench::store::RunRecorder rec(*db, run, std::chrono::milliseconds(100000));
        rec.onStart({});
        StepRecord s;
        s.step = 1;
        rec.onStep(s);
        rec.onNumerics(
            {row(1, NumericsKind::Grad, "w", 1.0), row(1, NumericsKind::Grad, "b", 1.0)});
        EXPECT_EQ(rec.pendingRows(), 3u);
        rec.onFinish({});
    }
    EXPECT_EQ(NumericsStore(*db).count(run), 2);
}

// Export: CSV lines "numerics" with KIND:NAME:FIELD metrics, and a JSON array.
TEST_F(NumericsStoreTest, ExportedInCsvAndJson) {
    auto db = Database::open(file("e.db"));
    const int64_t run = addRun(*db);
    NumericsStore(*db).insert(run, {row(5, NumericsKind::Grad, "head.weight", 2.0)});
    std::ostringstream csv;
    const int64_t lines = ampbench::store::exportCsv(*db, {run}, csv);
    EXPECT_EQ(lines, 10);
    EXPECT_NE(csv.str().find(",numerics,5,,grad:head.weight:underflow_subnormal,0.125\n"),
              std::string::npos)
        << csv.str();
    EXPECT_NE(csv.str().find(",numerics,5,,grad:head.weight:format,fp16\n"), std::string::npos);
    EXPECT_NE(csv.str().find(",numerics,5,,grad:head.weight:saturated,0\n"), std::string::npos);
    EXPECT_NE(csv.str().find(",numerics,5,,grad:head.weight:scale,1\n"), std::string::npos);
    std::ostringstream json;
    ampbench::store::exportJson(*db, {run}, json);
    const auto doc = nlohmann::json::parse(json.str());
    const auto& n = doc.at("runs").at(0).at("numerics");
    ASSERT_EQ(n.size(), 1u);
    EXPECT_EQ(n[0].at("name"), "head.weight");
    EXPECT_EQ(n[0].at("kind"), "grad");
    EXPECT_DOUBLE_EQ(n[0].at("headroom_log2").get<double>(), std::log2(65504.0 / 2.0));
}

NumericsRecord castRow(int64_t step, const std::string& name) {
    NumericsRecord r = row(step, NumericsKind::Cast, name, 500.0);
    r.format = "e4m3";
    r.saturated = 0.0625;
    r.scale = 0.75;
    r.headroom_log2 = std::log2(448.0 / 500.0);
    r.dtype = "bfloat16";
    return r;
}

// A cast tensor's row keeps its format, saturated share and scale through the store
// and both exports; a gradient's says fp16 and its defaults.
TEST_F(NumericsStoreTest, FormatSaturationAndScaleOfACastAreKeptAndExported) {
    auto db = Database::open(file("c.db"));
    const int64_t run = addRun(*db);
    NumericsStore store(*db);
    store.insert(run, {row(5, NumericsKind::Grad, "head.weight", 2.0),
                       castRow(5, "blocks.0.qkv:input"), castRow(5, "blocks.0.qkv:weight")});
    const auto casts = store.rows(run, NumericsKind::Cast);
    ASSERT_EQ(casts.size(), 2u);
    EXPECT_EQ(casts[0].name, "blocks.0.qkv:input");
    EXPECT_EQ(casts[0].format, "e4m3");
    EXPECT_DOUBLE_EQ(casts[0].saturated, 0.0625);
    EXPECT_DOUBLE_EQ(casts[0].scale, 0.75);
    EXPECT_DOUBLE_EQ(casts[0].loss_scale, 65536.0);
    const auto all = store.rows(run);
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].kind, NumericsKind::Grad);  // gradients, then casts
    EXPECT_EQ(all[0].format, "fp16");
    EXPECT_DOUBLE_EQ(all[0].scale, 1.0);
    EXPECT_EQ(store.rowsOfSteps(run, 4, 5).size(), 3u);
    std::ostringstream csv;
    EXPECT_EQ(ampbench::store::exportCsv(*db, {run}, csv), 30);
    EXPECT_NE(csv.str().find(",numerics,5,,cast:blocks.0.qkv:input:format,e4m3\n"),
              std::string::npos)
        << csv.str();
    EXPECT_NE(csv.str().find(",numerics,5,,cast:blocks.0.qkv:input:saturated,0.0625\n"),
              std::string::npos);
    EXPECT_NE(csv.str().find(",numerics,5,,cast:blocks.0.qkv:weight:scale,0.75\n"),
              std::string::npos);
    std::ostringstream json;
    ampbench::store::exportJson(*db, {run}, json);
    const auto n = nlohmann::json::parse(json.str()).at("runs").at(0).at("numerics");
    ASSERT_EQ(n.size(), 3u);
    EXPECT_EQ(n[1].at("kind"), "cast");
    EXPECT_EQ(n[1].at("format"), "e4m3");
    EXPECT_DOUBLE_EQ(n[1].at("saturated").get<double>(), 0.0625);
    EXPECT_DOUBLE_EQ(n[1].at("scale").get<double>(), 0.75);
    EXPECT_EQ(n[0].at("format"), "fp16");
}

// A file of schema 11 (numerics without formats, kind only grad or activation) keeps
// every row when opened for writing: they read as measured, against fp16, nothing
// saturated, no scale, and cast rows can be added; read-only it reads the same.
TEST_F(NumericsStoreTest, Schema11RowsMigrateAsFp16AndCastsCanBeAdded) {
    const std::string path = file("v11.db");
    int64_t run = 0;
    {
        auto db = Database::open(path);
        run = addRun(*db);
        NumericsStore(*db).insert(run, {row(10, NumericsKind::Grad, "w", 2.0),
                                        row(10, NumericsKind::Activation, "fc", kInf),
                                        row(20, NumericsKind::Grad, "w", 4.0)});
        StepRecord s;
        s.step = 20;
        s.samples = 640;
        db->insertSteps(run, {s});
    }
    rawExec(path, ampbench::test::kBackToSchema11);
    // The old table refuses a cast row: the downgrade is real.
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    EXPECT_NE(sqlite3_exec(raw,
                           "INSERT INTO numerics(run_id, step, kind, name) VALUES(1, 1, 'cast', "
                           "'x')",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
    auto expectAsMeasured = [&](const Database& db) {
        const auto rows = NumericsStore(db).rows(run);
        ASSERT_EQ(rows.size(), 3u);
        for (const auto& r : rows) {
            EXPECT_EQ(r.format, "fp16") << r.name;
            EXPECT_EQ(r.saturated, 0.0);
            EXPECT_EQ(r.scale, 1.0);
        }
        EXPECT_DOUBLE_EQ(rows[1].absmax, 4.0);
        EXPECT_EQ(rows[2].absmax, kInf);
        EXPECT_EQ(rows[2].headroom_log2, -kInf);
        EXPECT_DOUBLE_EQ(rows[2].loss_scale, 65536.0);
    };
    {
        auto reader = Database::open(path, Database::Mode::ReadOnly);
        EXPECT_EQ(reader->schemaVersion(), 11);
        expectAsMeasured(*reader);
    }
    auto db = Database::open(path);
    EXPECT_EQ(db->schemaVersion(), Database::kSchemaVersion);
    EXPECT_EQ(rawCount(path, "PRAGMA user_version"), Database::kSchemaVersion);
    expectAsMeasured(*db);
    EXPECT_EQ(db->stepCount(run), 1);
    EXPECT_EQ(rawCount(path,
                       "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = "
                       "'numerics_by_run_step'"),
              1);
    EXPECT_EQ(NumericsStore(*db).insert(run, {castRow(20, "fc:input")}), 1);
    const auto casts = NumericsStore(*db).rows(run, NumericsKind::Cast);
    ASSERT_EQ(casts.size(), 1u);
    EXPECT_EQ(casts[0].format, "e4m3");
    EXPECT_DOUBLE_EQ(casts[0].scale, 0.75);
    // Deleting the run still deletes its rows: the new table keeps the cascade.
    db->deleteRun(run);
    EXPECT_EQ(NumericsStore(*db).count(run), 0);
}

// A file of schema 6 keeps every row when it is migrated to the newest schema;
// read-only it is read as it is, with no numerics.
TEST_F(NumericsStoreTest, Schema6IsMigratedKeepingEveryRow) {
    const std::string path = file("v6.db");
    int64_t run = 0;
    {
        auto db = Database::open(path);
        run = addRun(*db);
        std::vector<StepRecord> steps;
        for (int64_t i = 1; i <= 30; ++i) {
            StepRecord s;
            s.step = i;
            s.samples = 64 * i;
            s.loss = 1.0 / static_cast<double>(i);
            steps.push_back(s);
        }
        db->insertSteps(run, steps);
        db->insertEvals(run, {{10, 640, 0.5, 0.75, 1.0}, {30, 1920, 0.25, 0.875, 3.0}});
        db->insertEvents(run, {{12, EventKind::SkippedStep, "inf grads", 32768.0}});
        db->setRunLabel(run, "kept");
        ampbench::store::BatchSearchStore searches(*db);
        ampbench::store::BatchSearchRow search;
        search.arm = "fp32";
        search.precision = "fp32";
        search.device = "cpu";
        search.spec_json = "{}";
        searches.addTrial(searches.create(search), 0, {64, "fits", 1000, 1.5, ""});
    }
    rawExec(path, ampbench::test::kBackToSchema6);
    {
        auto reader = Database::open(path, Database::Mode::ReadOnly);
        EXPECT_EQ(reader->schemaVersion(), 6);
        EXPECT_FALSE(NumericsStore(*reader).available());
        EXPECT_TRUE(NumericsStore(*reader).rows(run).empty());
        EXPECT_EQ(reader->stepCount(run), 30);
    }
    auto db = Database::open(path);
    EXPECT_EQ(db->schemaVersion(), Database::kSchemaVersion);
    EXPECT_EQ(db->experiments().size(), 1u);
    ASSERT_EQ(db->runs().size(), 1u);
    EXPECT_EQ(db->run(run)->label, "kept");
    const auto steps = db->steps(run);
    ASSERT_EQ(steps.size(), 30u);
    EXPECT_DOUBLE_EQ(steps[29].loss, 1.0 / 30.0);
    EXPECT_EQ(db->evals(run).size(), 2u);
    ASSERT_EQ(db->events(run).size(), 1u);
    EXPECT_EQ(db->events(run)[0].message, "inf grads");
    EXPECT_EQ(db->lastSeq(run), 33);
    EXPECT_EQ(ampbench::store::BatchSearchStore(*db).searches().at(0).trials.size(), 1u);
    NumericsStore(*db).insert(run, {row(30, NumericsKind::Grad, "w", 1.0)});
    EXPECT_EQ(NumericsStore(*db).count(run), 1);
}

// A file of schema 7 gets the numerics' index by step (what a follower's poll reads)
// when it is opened for writing, every row kept; read-only it is read as it is.
TEST_F(NumericsStoreTest, Schema7GetsTheIndexByStepKeepingTheRows) {
    const std::string path = file("v7.db");
    const std::string index_count =
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = "
        "'numerics_by_run_step'";
    int64_t run = 0;
    {
        auto db = Database::open(path);
        run = addRun(*db);
        NumericsStore(*db).insert(run, {row(10, NumericsKind::Grad, "w", 1.0),
                                        row(10, NumericsKind::Activation, "fc", 2.0),
                                        row(20, NumericsKind::Grad, "w", 4.0)});
    }
    EXPECT_EQ(rawCount(path, index_count), 1);
    rawExec(path, ampbench::test::kBackToSchema7);
    EXPECT_EQ(rawCount(path, index_count), 0);
    {
        auto reader = Database::open(path, Database::Mode::ReadOnly);
        EXPECT_EQ(reader->schemaVersion(), 7);
        ASSERT_EQ(NumericsStore(*reader).rowsOfSteps(run, 10, 20).size(), 1u);
    }
    auto db = Database::open(path);
    EXPECT_EQ(db->schemaVersion(), Database::kSchemaVersion);
    EXPECT_EQ(rawCount(path, index_count), 1);
    const auto rows = NumericsStore(*db).rowsOfSteps(run, 0, 20);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].name, "w");  // by step, gradients first, then by name
    EXPECT_EQ(rows[1].name, "fc");
    EXPECT_EQ(rows[2].step, 20);
    EXPECT_DOUBLE_EQ(rows[2].absmax, 4.0);
}
