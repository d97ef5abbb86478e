#pragma once
// Turns a database of this build back into an older schema, for the migration tests,
// and reaches a database file with SQLite itself, past the store.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace ampbench::test {

/// Runs `sql` on the file at `path` through its own connection.
inline void rawExec(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    const std::string message = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << message;
}

/// The single integer `sql` selects from the file at `path` (-1 when none).
inline int64_t rawCount(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    int64_t n = -1;
    sqlite3_exec(
        db, sql.c_str(),
        [](void* out, int, char** values, char**) {
            *static_cast<int64_t*>(out) = values[0] ? std::stoll(values[0]) : -1;
            return 0;
        },
        &n, nullptr);
    sqlite3_close(db);
    return n;
}

/// Schema 11: the numerics table as it was before formats (schema 12): no format,
/// saturated or scale columns, and kind only 'grad' or 'activation'. Schemas 10 and 11
/// changed no table.
#define AMPBENCH_BACK_TO_SCHEMA_11                                                         \
    "CREATE TABLE numerics_v11 (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE "    \
    "CASCADE, step INTEGER NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('grad', "          \
    "'activation')), name TEXT NOT NULL, absmax REAL, underflow_subnormal REAL, "          \
    "underflow_normal REAL, headroom_log2 REAL, nonfinite INTEGER NOT NULL DEFAULT 0, "    \
    "numel INTEGER NOT NULL DEFAULT 0, loss_scale REAL, dtype TEXT NOT NULL DEFAULT '', "  \
    "PRIMARY KEY (run_id, kind, name, step)) WITHOUT ROWID; "                              \
    "INSERT INTO numerics_v11 SELECT run_id, step, kind, name, absmax, "                   \
    "underflow_subnormal, underflow_normal, headroom_log2, nonfinite, numel, loss_scale, " \
    "dtype FROM numerics WHERE kind <> 'cast'; "                                           \
    "DROP TABLE numerics; ALTER TABLE numerics_v11 RENAME TO numerics; "                   \
    "CREATE INDEX numerics_by_run_step ON numerics(run_id, step); "
constexpr const char* kBackToSchema11 = AMPBENCH_BACK_TO_SCHEMA_11 "PRAGMA user_version = 11; ";

/// Schema 8: the database's id and the origin databases of imported rows (schema 9) go;
/// the origin indexes are keyed by label and id again.
#define AMPBENCH_BACK_TO_SCHEMA_8                                                            \
    AMPBENCH_BACK_TO_SCHEMA_11                                                               \
    "DROP INDEX experiments_by_origin; DROP INDEX runs_by_origin; "                          \
    "ALTER TABLE experiments DROP COLUMN origin_database; "                                  \
    "ALTER TABLE runs DROP COLUMN origin_database; "                                         \
    "CREATE UNIQUE INDEX experiments_by_origin ON experiments(origin, origin_id) "           \
    "WHERE origin <> ''; "                                                                   \
    "CREATE UNIQUE INDEX runs_by_origin ON runs(origin, origin_run_id) WHERE origin <> ''; " \
    "DROP TABLE database_info; "
constexpr const char* kBackToSchema8 = AMPBENCH_BACK_TO_SCHEMA_8 "PRAGMA user_version = 8; ";

/// Schema 7: the numerics' index by step of schema 8 goes.
constexpr const char* kBackToSchema7 =
    AMPBENCH_BACK_TO_SCHEMA_8 "DROP INDEX numerics_by_run_step; PRAGMA user_version = 7; ";

/// Schema 6: the per-layer numerics of schema 7 (and their index) go.
constexpr const char* kBackToSchema6 =
    AMPBENCH_BACK_TO_SCHEMA_8 "DROP TABLE numerics; PRAGMA user_version = 6; ";

/// Schema 5: the numerics, and the sequence numbers, their indexes and the origins of
/// schema 6 go.
constexpr const char* kBackToSchema5 = AMPBENCH_BACK_TO_SCHEMA_8
    "DROP TABLE numerics; "
    "DROP INDEX steps_by_seq; DROP INDEX evals_by_seq; DROP INDEX events_by_seq; "
    "DROP INDEX experiments_by_origin; DROP INDEX runs_by_origin; "
    "ALTER TABLE steps DROP COLUMN seq; ALTER TABLE evals DROP COLUMN seq; "
    "ALTER TABLE events DROP COLUMN seq; "
    "ALTER TABLE experiments DROP COLUMN origin; ALTER TABLE experiments DROP COLUMN origin_id; "
    "ALTER TABLE runs DROP COLUMN origin; ALTER TABLE runs DROP COLUMN origin_run_id; "
    "PRAGMA user_version = 5; ";

}  // namespace ampbench::test
