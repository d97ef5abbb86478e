#pragma once
// Turns a database of this build back into schema 5, for the migration tests: the
// sequence numbers, their indexes and the origins of schema 6 go.
namespace ampbench::test {

constexpr const char* kBackToSchema5 =
    "DROP INDEX steps_by_seq; DROP INDEX evals_by_seq; DROP INDEX events_by_seq; "
    "DROP INDEX experiments_by_origin; DROP INDEX runs_by_origin; "
    "ALTER TABLE steps DROP COLUMN seq; ALTER TABLE evals DROP COLUMN seq; "
    "ALTER TABLE events DROP COLUMN seq; "
    "ALTER TABLE experiments DROP COLUMN origin; ALTER TABLE experiments DROP COLUMN origin_id; "
    "ALTER TABLE runs DROP COLUMN origin; ALTER TABLE runs DROP COLUMN origin_run_id; "
    "PRAGMA user_version = 5; ";

}  // namespace ampbench::test
