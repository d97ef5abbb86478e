// The record field tables (run/RecordFields.h) against what is derived from them: every
// declared field has its column in the schema the field names, and every record kind
// comes back field for field through the stream and through the store.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <type_traits>

#include "ScratchDir.h"
#include "StoreDowngrade.h"
#include "core/run/RecordFields.h"
#include "core/store/Database.h"
#include "core/store/NumericsStore.h"
#include "core/store/RecordStore.h"
#include "core/stream/RecordStream.h"

namespace {

using ampbench::store::Database;
using ampbench::store::NumericsStore;
using ampbench::store::RecordStore;
using ampbench::store::SequencedRecord;
using namespace ampbench::run;
namespace stream = ampbench::stream;

/// The columns of `table` in the file at `path`, read past the store.
std::set<std::string> columnsOf(const std::string& path, const std::string& table) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    std::set<std::string> out;
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(
        sqlite3_prepare_v2(db, ("PRAGMA table_info(" + table + ")").c_str(), -1, &st, nullptr),
        SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        out.insert(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/// Each field of `fields` whose column a file of `schema` has (RecordField::since) is
/// in `table`, and each it lacks is not.
template <class R>
void expectColumns(const std::string& path, const std::string& table,
                   const std::vector<RecordField<R>>& fields, int schema) {
    const std::set<std::string> columns = columnsOf(path, table);
    ASSERT_FALSE(columns.empty()) << table << " is missing from " << path;
    for (const auto& f : fields) {
        if (f.since <= schema) {
            EXPECT_TRUE(columns.count(f.name))
                << table << " has no column " << f.name << " at schema " << schema;
        } else {
            EXPECT_FALSE(columns.count(f.name))
                << table << "." << f.name << " is declared from schema " << f.since
                << " but a file of schema " << schema << " has it";
        }
    }
}

/// A value other than the enumeration's default.
EventKind otherThanDefault(EventKind) {
    return EventKind::AloneTiming;
}
NumericsKind otherThanDefault(NumericsKind) {
    return NumericsKind::Cast;
}

/// A record whose every field differs from its default (and from another salt's), with
/// values any reader accepts: doubles in (0, 0.5], a known number format.
template <class R>
R sample(int salt) {
    R r;
    int i = 0;
    visitFields(recordFields<R>(), r, [&](const auto& f, auto& value) {
        using T = std::decay_t<decltype(value)>;
        ++i;
        if constexpr (std::is_same_v<T, double>) {
            value = 1.0 / (3.0 * (i + salt));
        } else if constexpr (std::is_same_v<T, bool>) {
            value = !value;
        } else if constexpr (std::is_same_v<T, std::string>) {
            value = std::string(f.name) + "-" + std::to_string(salt);
        } else if constexpr (std::is_enum_v<T>) {
            value = otherThanDefault(value);
        } else {
            value = 1000 * salt + i;
        }
    });
    if constexpr (std::is_same_v<R, NumericsRecord>)
        r.format = "e4m3";
    return r;
}

/// Every field of `got` equals `want`'s (NaN equal to NaN), naming the field that does not.
template <class R>
void expectSameFields(const R& want, const R& got, const std::string& where) {
    for (const auto& f : recordFields<R>()) {
        std::visit(
            [&](auto member) {
                using T = std::decay_t<decltype(want.*member)>;
                if constexpr (std::is_same_v<T, double>) {
                    EXPECT_TRUE(want.*member == got.*member ||
                                (std::isnan(want.*member) && std::isnan(got.*member)))
                        << where << ": " << f.name << " is " << got.*member << ", not "
                        << want.*member;
                } else if constexpr (std::is_enum_v<T>) {
                    EXPECT_EQ(EnumText<T>::text(want.*member), EnumText<T>::text(got.*member))
                        << where << ": " << f.name;
                } else {
                    EXPECT_EQ(want.*member, got.*member) << where << ": " << f.name;
                }
            },
            f.member);
    }
}

/// The sample differs from the default in every field, so a field lost on the way
/// (left at its default) shows.
template <class R>
void expectEveryFieldSet(const R& r) {
    const R blank;
    for (const auto& f : recordFields<R>()) {
        std::visit(
            [&](auto member) {
                EXPECT_FALSE(r.*member == blank.*member) << f.name << " is left at its default";
            },
            f.member);
    }
}

template <class R>
std::set<std::string> names(const std::vector<RecordField<R>>& fields) {
    std::set<std::string> out;
    for (const auto& f : fields)
        out.insert(f.name);
    return out;
}

std::set<std::string> keysOf(const nlohmann::json& j) {
    std::set<std::string> out;
    for (const auto& item : j.items())
        out.insert(item.key());
    return out;
}

class RecordFieldsTest : public ampbench::test::ScratchDirTest {};

TEST(RecordFields, NamesAreUniqueInEachRecord) {
    EXPECT_EQ(names(stepFields()).size(), stepFields().size());
    EXPECT_EQ(names(evalFields()).size(), evalFields().size());
    EXPECT_EQ(names(eventFields()).size(), eventFields().size());
    EXPECT_EQ(names(numericsFields()).size(), numericsFields().size());
}

TEST_F(RecordFieldsTest, EveryDeclaredFieldHasItsColumnAfterTheMigrations) {
    const std::string path = file("new.db");
    { Database::open(path); }  // every migration, from an empty file
    expectColumns(path, "steps", stepFields(), Database::kSchemaVersion);
    expectColumns(path, "evals", evalFields(), Database::kSchemaVersion);
    expectColumns(path, "events", eventFields(), Database::kSchemaVersion);
    expectColumns(path, "numerics", numericsFields(), Database::kSchemaVersion);
}

// A field's `since` is what an older file (read-only) is read by: too low and its
// reads fail on such a file, too high and they drop what it holds.
TEST_F(RecordFieldsTest, EachFieldIsInTheSchemasFromTheOneItNames) {
    const std::string path = file("old.db");
    { Database::open(path); }
    ampbench::test::rawExec(path, ampbench::test::kBackToSchema11);
    expectColumns(path, "numerics", numericsFields(), 11);
    {
        auto reader = Database::open(path, Database::Mode::ReadOnly);
        EXPECT_TRUE(NumericsStore(*reader).rows(1).empty());
    }
    { Database::open(path); }  // migrated again
    expectColumns(path, "numerics", numericsFields(), Database::kSchemaVersion);

    const std::string older = file("schema5.db");
    { Database::open(older); }
    ampbench::test::rawExec(older, ampbench::test::kBackToSchema5);
    expectColumns(older, "steps", stepFields(), 5);
    expectColumns(older, "evals", evalFields(), 5);
    expectColumns(older, "events", eventFields(), 5);
}

TEST(RecordFields, EveryRecordKindRoundTripsThroughTheStreamFieldByField) {
    const auto row = [](const auto& record) {
        using R = std::decay_t<decltype(record)>;
        expectEveryFieldSet(record);
        stream::RowRecord r;
        r.run = 7;
        r.row = SequencedRecord{42, record};
        const std::string line = stream::encode(r);
        std::set<std::string> keys = names(recordFields<R>());
        keys.insert({"type", "run", "seq"});
        EXPECT_EQ(keysOf(nlohmann::json::parse(line)), keys) << line;
        const auto back = std::get<stream::RowRecord>(stream::decode(line, 1));
        EXPECT_EQ(back.run, 7);
        EXPECT_EQ(back.row.seq, 42);
        expectSameFields(record, std::get<R>(back.row.record), line);
    };
    row(sample<StepRecord>(1));
    row(sample<EvalRecord>(2));
    row(sample<EventRecord>(3));

    const NumericsRecord n = sample<NumericsRecord>(4);
    expectEveryFieldSet(n);
    const std::string line = stream::encode(stream::NumericsGroup{7, n.step, {n}});
    std::set<std::string> keys = names(numericsFields());
    keys.erase("step");  // the record's, not the row's
    EXPECT_EQ(keysOf(nlohmann::json::parse(line)["rows"][0]), keys) << line;
    const auto back = std::get<stream::NumericsGroup>(stream::decode(line, 1));
    ASSERT_EQ(back.rows.size(), 1u);
    expectSameFields(n, back.rows[0], line);
}

// Derived from the tables, the lines are still those every version-1 reader reads:
// keys in order, doubles in their shortest exact form, NaN and infinities as text.
TEST(RecordFields, StreamLinesAreByteForByteThoseOfVersionOne) {
    EventRecord e;
    e.step = 3;
    e.kind = EventKind::SkippedStep;
    e.message = "scale 65536 -> 32768";
    e.value = 32768;
    EXPECT_EQ(stream::encode(stream::RowRecord{7, SequencedRecord{9, e}}),
              "{\"kind\":\"skipped_step\",\"message\":\"scale 65536 -> 32768\",\"run\":7,"
              "\"seq\":9,\"step\":3,\"type\":\"event\",\"value\":32768.0}");
    EvalRecord v;
    v.step = 48;
    v.samples = 3072;
    v.val_loss = 0.1;
    v.val_accuracy = std::numeric_limits<double>::quiet_NaN();
    v.wall_s = 1.5;
    EXPECT_EQ(stream::encode(stream::RowRecord{7, SequencedRecord{10, v}}),
              "{\"run\":7,\"samples\":3072,\"seq\":10,\"step\":48,\"type\":\"eval\","
              "\"val_accuracy\":\"NaN\",\"val_loss\":0.1,\"wall_s\":1.5}");
    NumericsRecord n;
    n.step = 4;
    n.kind = NumericsKind::Activation;
    n.name = "blocks.0.qkv";
    n.absmax = std::numeric_limits<double>::infinity();
    n.underflow_subnormal = 0.25;
    n.underflow_normal = 0.5;
    n.headroom_log2 = -std::numeric_limits<double>::infinity();
    n.nonfinite = 2;
    n.numel = 4096;
    n.loss_scale = 1024;
    n.dtype = "float16";
    EXPECT_EQ(stream::encode(stream::NumericsGroup{7, 4, {n}}),
              "{\"rows\":[{\"absmax\":\"Infinity\",\"dtype\":\"float16\",\"format\":\"fp16\","
              "\"headroom_log2\":\"-Infinity\",\"kind\":\"activation\",\"loss_scale\":1024.0,"
              "\"name\":\"blocks.0.qkv\",\"nonfinite\":2,\"numel\":4096,\"saturated\":0.0,"
              "\"scale\":1.0,\"underflow_normal\":0.5,\"underflow_subnormal\":0.25}],\"run\":7,"
              "\"step\":4,\"type\":\"numerics\"}");
}

// A field a later schema added is absent from an older writer's stream: the record keeps
// its default. A field from the first schema is required, and its absence is named.
TEST(RecordFields, OnlyFieldsALaterSchemaAddedMayBeMissingFromAStream) {
    const NumericsRecord n = sample<NumericsRecord>(5);
    const nlohmann::json whole =
        nlohmann::json::parse(stream::encode(stream::NumericsGroup{7, n.step, {n}}));
    const NumericsRecord blank;
    for (const auto& f : numericsFields()) {
        if (std::string(f.name) == "step")
            continue;
        nlohmann::json j = whole;
        j["rows"][0].erase(f.name);
        if (f.since == 0) {
            try {
                stream::decode(j.dump(), 3);
                ADD_FAILURE() << f.name << " may not be missing";
            } catch (const stream::StreamError& e) {
                EXPECT_EQ(e.problem(),
                          std::string("numerics record: rows[0]: \"") + f.name + "\" is missing");
            }
            continue;
        }
        const auto back = std::get<stream::NumericsGroup>(stream::decode(j.dump(), 3));
        std::visit(
            [&](auto member) { EXPECT_TRUE(back.rows[0].*member == blank.*member) << f.name; },
            f.member);
    }
    for (const auto& f : eventFields()) {
        stream::RowRecord r{7, SequencedRecord{1, sample<EventRecord>(6)}};
        nlohmann::json j = nlohmann::json::parse(stream::encode(r));
        j.erase(f.name);
        EXPECT_THROW(stream::decode(j.dump(), 1), stream::StreamError) << f.name;
    }
}

TEST_F(RecordFieldsTest, EveryRecordKindRoundTripsThroughTheStoreFieldByField) {
    auto db = Database::open(file("store.db"));
    const int64_t exp = db->createExperiment("fields", "{}");
    const int64_t run = db->createRun(exp, "arm", 0, 1, "{}", 10);
    const RecordStore records(*db);
    const StepRecord step = sample<StepRecord>(1);
    const EvalRecord eval = sample<EvalRecord>(2);
    const EventRecord event = sample<EventRecord>(3);
    NumericsRecord numerics = sample<NumericsRecord>(4);
    EXPECT_EQ(records.insertSteps(run, {step}), 1);
    EXPECT_EQ(records.insertEvals(run, {eval}), 2);
    EXPECT_EQ(records.insertEvents(run, {event}), 3);
    EXPECT_EQ(NumericsStore(*db).insert(run, {numerics}), 1);

    ASSERT_EQ(records.steps(run).size(), 1u);
    expectSameFields(step, records.steps(run)[0], "steps()");
    ASSERT_EQ(records.evals(run).size(), 1u);
    expectSameFields(eval, records.evals(run)[0], "evals()");
    ASSERT_EQ(records.events(run).size(), 1u);
    expectSameFields(event, records.events(run)[0], "events()");
    ASSERT_EQ(NumericsStore(*db).rows(run).size(), 1u);
    expectSameFields(numerics, NumericsStore(*db).rows(run)[0], "numerics rows()");

    const auto seq = records.recordsSince(run, 0);
    ASSERT_EQ(seq.size(), 3u);
    expectSameFields(step, std::get<StepRecord>(seq[0].record), "recordsSince step");
    expectSameFields(eval, std::get<EvalRecord>(seq[1].record), "recordsSince eval");
    expectSameFields(event, std::get<EventRecord>(seq[2].record), "recordsSince event");

    // Stored again under their numbers, each is the row there, field for field.
    const auto again = records.insertSequenced(run, seq);
    EXPECT_EQ(again.present, 3);
    EXPECT_TRUE(again.conflicts.empty());
    // A row differing in any one field is not.
    for (const auto& f : stepFields()) {
        std::vector<SequencedRecord> changed = {seq[0]};
        StepRecord& s = std::get<StepRecord>(changed[0].record);
        std::visit(
            [&](auto member) {
                using T = std::decay_t<decltype(s.*member)>;
                if constexpr (std::is_same_v<T, bool>) {
                    s.*member = !(s.*member);
                } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, int64_t>) {
                    s.*member = s.*member + 1;
                }
            },
            f.member);
        EXPECT_EQ(records.insertSequenced(run, changed).conflicts.size(), 1u) << f.name;
    }
}

}  // namespace
