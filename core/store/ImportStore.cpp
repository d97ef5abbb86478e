#include "core/store/ImportStore.h"

#include <sqlite3.h>

#include "core/store/private/Schema.h"

namespace ampbench::store {
namespace {

using schema::nowIso;
using schema::Statement;

std::optional<int64_t> oneId(Statement& st) {
    if (!st.step())
        return std::nullopt;
    return st.i64(0);
}

}  // namespace

void ImportStore::requireOrigins() const {
    if (db_.schemaVersion() < 6) {
        throw StoreError(StoreError::Kind::Io,
                         db_.path() + " holds schema " + std::to_string(db_.schemaVersion()) +
                             ", which has no origins; open it read-write once to upgrade it");
    }
}

std::string ImportStore::sameDatabase(int param) const {
    return db_.schemaVersion() >= 9 ? " AND origin_database = ?" + std::to_string(param) : "";
}

std::optional<int64_t> ImportStore::originLookup(const char* table, const char* id_column,
                                                 const std::string& origin,
                                                 const std::string& database, int64_t id,
                                                 const std::string& what) const {
    requireOrigins();
    if (db_.schemaVersion() < 9 && !database.empty())
        return std::nullopt;  // no row of an older file names a database
    Statement st(db_.handle(), db_.path(),
                 std::string("SELECT id FROM ") + table + " WHERE origin = ?1 AND " + id_column +
                     " = ?2" + sameDatabase(3),
                 "looking up " + what + " from " + origin);
    st.bindText(1, origin).bindInt(2, id);
    if (db_.schemaVersion() >= 9)
        st.bindText(3, database);
    return oneId(st);
}

std::optional<int64_t> ImportStore::experimentFromOrigin(const std::string& origin,
                                                         const std::string& database,
                                                         int64_t id) const {
    return originLookup("experiments", "origin_id", origin, database, id, "an experiment");
}

std::optional<int64_t> ImportStore::runFromOrigin(const std::string& origin,
                                                  const std::string& database, int64_t id) const {
    return originLookup("runs", "origin_run_id", origin, database, id, "a run");
}

std::optional<int64_t> ImportStore::experimentFromOrigin(const std::string& origin,
                                                         int64_t id) const {
    requireOrigins();
    Statement st(db_.handle(), db_.path(),
                 "SELECT id FROM experiments WHERE origin = ?1 AND origin_id = ?2 "
                 "ORDER BY id DESC LIMIT 1",
                 "looking up an experiment from " + origin);
    st.bindText(1, origin).bindInt(2, id);
    return oneId(st);
}

std::optional<int64_t> ImportStore::runFromOrigin(const std::string& origin, int64_t id) const {
    requireOrigins();
    Statement st(db_.handle(), db_.path(),
                 "SELECT id FROM runs WHERE origin = ?1 AND origin_run_id = ?2 "
                 "ORDER BY id DESC LIMIT 1",
                 "looking up a run from " + origin);
    st.bindText(1, origin).bindInt(2, id);
    return oneId(st);
}

void ImportStore::setExperimentOriginDatabase(int64_t experiment_id,
                                              const std::string& database) const {
    requireOrigins();
    Statement st(db_.handle(), db_.path(),
                 "UPDATE experiments SET origin_database = ?2 WHERE id = ?1",
                 "recording where experiment " + std::to_string(experiment_id) + " came from");
    st.bindInt(1, experiment_id).bindText(2, database).run();
}

void ImportStore::setRunOriginDatabase(int64_t run_id, const std::string& database) const {
    requireOrigins();
    Statement st(db_.handle(), db_.path(), "UPDATE runs SET origin_database = ?2 WHERE id = ?1",
                 "recording where run " + std::to_string(run_id) + " came from");
    st.bindInt(1, run_id).bindText(2, database).run();
}

int64_t ImportStore::importExperiment(const ExperimentRow& remote, const std::string& origin,
                                      const std::string& database) const {
    requireOrigins();
    Statement st(db_.handle(), db_.path(),
                 "INSERT INTO experiments(name, spec_json, notes, created_at, origin, origin_id, "
                 "origin_database) VALUES(?1, ?2, '', ?3, ?4, ?5, ?6)",
                 "adding experiment " + std::to_string(remote.id) + " from " + origin);
    st.bindText(1, remote.name).bindText(2, remote.spec_json);
    st.bindText(3, remote.created_at.empty() ? nowIso() : remote.created_at);
    st.bindText(4, origin).bindInt(5, remote.id).bindText(6, database).run();
    return sqlite3_last_insert_rowid(db_.handle());
}

int64_t ImportStore::importRun(const RunRow& remote, int64_t experiment_id,
                               const std::string& origin, const std::string& database) const {
    requireOrigins();
    Statement st(db_.handle(), db_.path(),
                 "INSERT INTO runs(experiment_id, arm, arm_index, seed, spec_json, env_json, "
                 "status, error, failure, started_at, ended_at, planned_steps, inputs_json, "
                 "created_at, origin, origin_run_id, origin_database) VALUES(?1, ?2, ?3, ?4, ?5, "
                 "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
                 "adding run " + std::to_string(remote.id) + " from " + origin);
    st.bindInt(1, experiment_id).bindText(2, remote.arm).bindInt(3, remote.arm_index);
    st.bindInt(4, static_cast<int64_t>(remote.seed)).bindText(5, remote.spec_json);
    st.bindText(6, remote.env_json).bindText(7, run::toString(remote.status));
    st.bindText(8, remote.error).bindText(9, run::toString(remote.failure));
    st.bindText(10, remote.started_at).bindText(11, remote.ended_at);
    st.bindInt(12, remote.planned_steps).bindText(13, remote.inputs_json);
    st.bindText(14, nowIso()).bindText(15, origin).bindInt(16, remote.id);
    st.bindText(17, database).run();
    return sqlite3_last_insert_rowid(db_.handle());
}

void ImportStore::updateImportedRun(int64_t run_id, const RunRow& remote) const {
    requireOrigins();
    Statement st(db_.handle(), db_.path(),
                 "UPDATE runs SET status = ?2, failure = ?3, error = ?4, env_json = ?5, "
                 "started_at = ?6, ended_at = ?7 WHERE id = ?1",
                 "updating run " + std::to_string(run_id));
    st.bindInt(1, run_id).bindText(2, run::toString(remote.status));
    st.bindText(3, run::toString(remote.failure)).bindText(4, remote.error);
    st.bindText(5, remote.env_json).bindText(6, remote.started_at).bindText(7, remote.ended_at);
    st.run();
    if (sqlite3_changes(db_.handle()) == 0)
        throw StoreError(StoreError::Kind::NotFound,
                         db_.path() + " has no run " + std::to_string(run_id));
}

}  // namespace ampbench::store
