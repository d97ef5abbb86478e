#pragma once
// Experiments and runs read from another database (an ingested stream), keyed by their
// origin: a label (`ingest --origin` or the writer's host name), the id of the database
// they came from (schema 9; empty when its stream carried none) and their id there.
#include <cstdint>
#include <optional>
#include <string>

#include "core/store/Database.h"
#include "core/store/Rows.h"

namespace ampbench::store {

/// Reads and writes imported experiments and runs through a Database connection. A
/// file before schema 6 (read-only) has no origins: every call throws StoreError(Io).
class ImportStore {
  public:
    explicit ImportStore(const Database& db) : db_(db) {}

    /// The local experiment or run made from `origin`'s id in database `database`.
    std::optional<int64_t> experimentFromOrigin(const std::string& origin,
                                                const std::string& database, int64_t id) const;
    std::optional<int64_t> runFromOrigin(const std::string& origin, const std::string& database,
                                         int64_t id) const;
    /// The same from any database under that label: the one imported last.
    std::optional<int64_t> experimentFromOrigin(const std::string& origin, int64_t id) const;
    std::optional<int64_t> runFromOrigin(const std::string& origin, int64_t id) const;
    /// The database an experiment or run imported without one came from, once a
    /// stream that names it shows the same rows (what older streams brought).
    void setExperimentOriginDatabase(int64_t experiment_id, const std::string& database) const;
    void setRunOriginDatabase(int64_t run_id, const std::string& database) const;
    /// A new experiment holding `remote`'s name, spec and creation time, marked as
    /// coming from `origin` and `database` (its id there: remote.id).
    int64_t importExperiment(const ExperimentRow& remote, const std::string& origin,
                             const std::string& database = {}) const;
    /// A new run of local experiment `experiment_id` holding `remote`'s fields, marked
    /// as coming from `origin` and `database` (its id there: remote.id). It has no
    /// owner here: no process on this machine trains it, so it is never taken for
    /// interrupted.
    int64_t importRun(const RunRow& remote, int64_t experiment_id, const std::string& origin,
                      const std::string& database = {}) const;
    /// What may change on the other side while it trains: status, failure, error,
    /// environment and the start and end times.
    void updateImportedRun(int64_t run_id, const RunRow& remote) const;

  private:
    void requireOrigins() const;
    /// " AND origin_database = ?N" from schema 9 on (nothing before: no database ids).
    std::string sameDatabase(int param) const;
    /// The row of `table` brought from `origin`'s `database` whose `id_column` is `id`.
    std::optional<int64_t> originLookup(const char* table, const char* id_column,
                                        const std::string& origin, const std::string& database,
                                        int64_t id, const std::string& what) const;

    const Database& db_;
};

}  // namespace ampbench::store
