#pragma once
// Turns a database of this build back into an older schema, for the migration tests.
namespace ampbench::test {

/// Schema 7: the numerics' index by step of schema 8 goes.
constexpr const char* kBackToSchema7 = "DROP INDEX numerics_by_run_step; PRAGMA user_version = 7; ";

/// Schema 6: the per-layer numerics of schema 7 (and their index) go.
constexpr const char* kBackToSchema6 = "DROP TABLE numerics; PRAGMA user_version = 6; ";

/// Schema 5: the numerics, and the sequence numbers, their indexes and the origins of
/// schema 6 go.
constexpr const char* kBackToSchema5 =
    "DROP TABLE numerics; "
    "DROP INDEX steps_by_seq; DROP INDEX evals_by_seq; DROP INDEX events_by_seq; "
    "DROP INDEX experiments_by_origin; DROP INDEX runs_by_origin; "
    "ALTER TABLE steps DROP COLUMN seq; ALTER TABLE evals DROP COLUMN seq; "
    "ALTER TABLE events DROP COLUMN seq; "
    "ALTER TABLE experiments DROP COLUMN origin; ALTER TABLE experiments DROP COLUMN origin_id; "
    "ALTER TABLE runs DROP COLUMN origin; ALTER TABLE runs DROP COLUMN origin_run_id; "
    "PRAGMA user_version = 5; ";

}  // namespace ampbench::test
