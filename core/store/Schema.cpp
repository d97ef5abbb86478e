#include "core/store/private/Schema.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <thread>

#include "core/store/Database.h"
#include "core/store/StoreError.h"

namespace ampbench::store::schema {
namespace {

// Every table any schema version has created; a file with application_id 0
// holding other tables belongs to some other program.
constexpr std::array<const char*, 9> kOurTables = {
    "batch_searches", "batch_trials", "experiments", "runs",         "steps",
    "evals",          "events",       "numerics",    "database_info"};

// v0 -> v1: everything.
void createV1(sqlite3* db, const std::string& path) {
    exec(db, path, R"sql(
CREATE TABLE experiments (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    spec_json   TEXT NOT NULL DEFAULT '{}',
    notes       TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL
);
CREATE TABLE runs (
    id             INTEGER PRIMARY KEY,
    experiment_id  INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    arm            TEXT NOT NULL,
    arm_index      INTEGER NOT NULL DEFAULT 0,
    seed           INTEGER NOT NULL DEFAULT 0,
    spec_json      TEXT NOT NULL DEFAULT '{}',
    env_json       TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL DEFAULT 'queued',
    error          TEXT NOT NULL DEFAULT '',
    notes          TEXT NOT NULL DEFAULT '',
    started_at     TEXT NOT NULL DEFAULT '',
    ended_at       TEXT NOT NULL DEFAULT '',
    planned_steps  INTEGER NOT NULL DEFAULT 0,
    owner_pid      INTEGER,
    owner_host     TEXT,
    created_at     TEXT NOT NULL
);
CREATE INDEX runs_by_experiment ON runs(experiment_id, arm_index);
CREATE INDEX runs_by_status ON runs(status);
CREATE TABLE steps (
    run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step           INTEGER NOT NULL,
    samples        INTEGER NOT NULL,
    loss           REAL,
    lr             REAL,
    loss_scale     REAL,
    skipped        INTEGER NOT NULL DEFAULT 0,
    grad_norm      REAL,
    step_ms        REAL,
    data_wait_ms   REAL,
    timed          INTEGER NOT NULL DEFAULT 1,
    mem_allocated  INTEGER NOT NULL DEFAULT 0,
    mem_reserved   INTEGER NOT NULL DEFAULT 0,
    mem_peak       INTEGER NOT NULL DEFAULT 0,
    wall_s         REAL,
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
CREATE TABLE evals (
    run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step          INTEGER NOT NULL,
    samples       INTEGER NOT NULL,
    val_loss      REAL,
    val_accuracy  REAL,
    wall_s        REAL,
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
CREATE TABLE events (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step     INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    message  TEXT NOT NULL DEFAULT '',
    value    REAL
);
CREATE INDEX events_by_run_step ON events(run_id, step);
)sql",
         "creating the schema (version 1)");
}

// Version 2: results of the max-batch finder.
void createV2(sqlite3* db, const std::string& path) {
    exec(db, path, R"sql(
CREATE TABLE batch_searches (
    id             INTEGER PRIMARY KEY,
    experiment_id  INTEGER REFERENCES experiments(id) ON DELETE CASCADE,
    arm            TEXT NOT NULL,
    precision      TEXT NOT NULL,
    checkpointing  INTEGER NOT NULL DEFAULT 0,
    device         TEXT NOT NULL,
    budget_bytes   INTEGER NOT NULL DEFAULT 0,
    margin         REAL NOT NULL,
    max_batch      INTEGER NOT NULL DEFAULT 0,
    safe_batch     INTEGER NOT NULL DEFAULT 0,
    first_failure  INTEGER NOT NULL DEFAULT 0,
    peak_at_max    INTEGER NOT NULL DEFAULT 0,
    status         TEXT NOT NULL,
    note           TEXT NOT NULL DEFAULT '',
    spec_json      TEXT NOT NULL,
    created_at     TEXT NOT NULL
);
CREATE TABLE batch_trials (
    search_id   INTEGER NOT NULL REFERENCES batch_searches(id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    batch       INTEGER NOT NULL,
    outcome     TEXT NOT NULL,
    peak_bytes  INTEGER NOT NULL DEFAULT 0,
    step_ms     REAL,
    message     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (search_id, idx)
) WITHOUT ROWID;
CREATE INDEX batch_searches_by_experiment ON batch_searches(experiment_id);
)sql",
         "adding the max-batch tables (version 2)");
}

// Version 3: owners of queued runs and of searches, and a token that tells a
// live owner from a later process that got the same pid; why a run failed, as a kind.
void createV3(sqlite3* db, const std::string& path) {
    exec(db, path, R"sql(
ALTER TABLE runs ADD COLUMN owner_token TEXT;
ALTER TABLE runs ADD COLUMN failure TEXT NOT NULL DEFAULT '';
ALTER TABLE batch_searches ADD COLUMN owner_pid INTEGER;
ALTER TABLE batch_searches ADD COLUMN owner_host TEXT;
ALTER TABLE batch_searches ADD COLUMN owner_token TEXT;
)sql",
         "adding process owners (version 3)");
}

// Version 4: what a run needs to be rerun (checksums of the files it read) and the
// run a rerun repeats.
void createV4(sqlite3* db, const std::string& path) {
    exec(db, path, R"sql(
ALTER TABLE runs ADD COLUMN inputs_json TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN rerun_of INTEGER REFERENCES runs(id) ON DELETE SET NULL;
CREATE INDEX runs_by_rerun_of ON runs(rerun_of);
)sql",
         "adding rerun records (version 4)");
}

// Version 5: what the user says about rows: a run's label, tags of experiments and
// runs (comma-separated), and the trash (the time an experiment or run was moved
// there; empty while it is not). Rows in the trash are kept until it is emptied.
void createV5(sqlite3* db, const std::string& path) {
    exec(db, path, R"sql(
ALTER TABLE experiments ADD COLUMN tags TEXT NOT NULL DEFAULT '';
ALTER TABLE experiments ADD COLUMN trashed_at TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN label TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN trashed_at TEXT NOT NULL DEFAULT '';
)sql",
         "adding run labels, tags and the trash (version 5)");
}

// Version 6: the record stream. Every step, evaluation and event of a run gets a
// run-scoped sequence number (1, 2, 3 ... in commit order) that a stream carries and
// an ingest keys on; rows of older files are numbered per run: steps by step, then
// evaluations by step, then events by id. Experiments and runs read from another
// machine's stream remember where they came from (origin label and the id there).
void createV6(sqlite3* db, const std::string& path) {
    exec(db, path, R"sql(
ALTER TABLE steps ADD COLUMN seq INTEGER;
ALTER TABLE evals ADD COLUMN seq INTEGER;
ALTER TABLE events ADD COLUMN seq INTEGER;
ALTER TABLE experiments ADD COLUMN origin TEXT NOT NULL DEFAULT '';
ALTER TABLE experiments ADD COLUMN origin_id INTEGER;
ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN origin_run_id INTEGER;
CREATE TEMP TABLE seq_backfill AS
    SELECT run_id, t, k, ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY t, k) AS seq FROM (
        SELECT run_id, 0 AS t, step AS k FROM steps
        UNION ALL SELECT run_id, 1, step FROM evals
        UNION ALL SELECT run_id, 2, id FROM events);
CREATE UNIQUE INDEX temp.seq_backfill_by_row ON seq_backfill(run_id, t, k);
UPDATE steps SET seq = b.seq FROM seq_backfill b
    WHERE b.run_id = steps.run_id AND b.t = 0 AND b.k = steps.step;
UPDATE evals SET seq = b.seq FROM seq_backfill b
    WHERE b.run_id = evals.run_id AND b.t = 1 AND b.k = evals.step;
UPDATE events SET seq = b.seq FROM seq_backfill b
    WHERE b.run_id = events.run_id AND b.t = 2 AND b.k = events.id;
DROP TABLE temp.seq_backfill;
CREATE UNIQUE INDEX steps_by_seq ON steps(run_id, seq);
CREATE UNIQUE INDEX evals_by_seq ON evals(run_id, seq);
CREATE UNIQUE INDEX events_by_seq ON events(run_id, seq);
CREATE UNIQUE INDEX experiments_by_origin ON experiments(origin, origin_id) WHERE origin <> '';
CREATE UNIQUE INDEX runs_by_origin ON runs(origin, origin_run_id) WHERE origin <> '';
)sql",
         "numbering records and adding origins (version 6)");
}

// Version 7: per-layer numerics. Every N optimizer steps, one row per parameter's
// gradient and per module's output: where its values sit in fp16's range at the
// loss scale in use (absmax, shares under the smallest subnormal and normal,
// headroom to overflow in powers of two, non-finite values).
void createV7(sqlite3* db, const std::string& path) {
    exec(db, path, R"sql(
CREATE TABLE numerics (
    run_id               INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step                 INTEGER NOT NULL,
    kind                 TEXT NOT NULL CHECK (kind IN ('grad', 'activation')),
    name                 TEXT NOT NULL,
    absmax               REAL,
    underflow_subnormal  REAL,
    underflow_normal     REAL,
    headroom_log2        REAL,
    nonfinite            INTEGER NOT NULL DEFAULT 0,
    numel                INTEGER NOT NULL DEFAULT 0,
    loss_scale           REAL,
    dtype                TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, kind, name, step)
) WITHOUT ROWID;
)sql",
         "adding per-layer numerics (version 7)");
}

// Version 8: the numerics of a run by step, for a follower reading the steps since
// its last poll (the primary key orders them by tensor first).
void createV8(sqlite3* db, const std::string& path) {
    exec(db, path, "CREATE INDEX numerics_by_run_step ON numerics(run_id, step);",
         "indexing the per-layer numerics by step (version 8)");
}

// Version 9: where imported rows come from, beyond a label. Every database gets a
// random id of its own (the streams it writes carry it), and experiments and runs
// read from a stream remember the id of the database they came from (empty: a stream
// that carried none), so two machines under one label (both "localhost") never share
// a row.
void createV9(sqlite3* db, const std::string& path) {
    exec(db, path, R"sql(
CREATE TABLE database_info (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO database_info(key, value) VALUES('database_id', lower(hex(randomblob(16))));
ALTER TABLE experiments ADD COLUMN origin_database TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN origin_database TEXT NOT NULL DEFAULT '';
DROP INDEX experiments_by_origin;
DROP INDEX runs_by_origin;
CREATE UNIQUE INDEX experiments_by_origin ON experiments(origin, origin_database, origin_id)
    WHERE origin <> '';
CREATE UNIQUE INDEX runs_by_origin ON runs(origin, origin_database, origin_run_id)
    WHERE origin <> '';
)sql",
         "giving the database an id and imported rows their database (version 9)");
}

// Schema 10 changes no table: events may be of kind device_busy (the device time of
// one step's work), which a build of schema 9 cannot read; the version tells it so
// before it reads any.
void createV10(sqlite3*, const std::string&) {}

// Schema 11 changes no table either: events may be of kind alone_timing (an arm timed
// alone before packed runs trained), which a build of schema 10 cannot read.
void createV11(sqlite3*, const std::string&) {}

// Schema 12: per-layer numerics in the format each tensor is cast to. A row names its
// format (rows before were all measured against fp16), the share of values past the
// format's largest (saturated) and the per-tensor scale taken before the cast; kind
// may be 'cast' (a tensor as an FP8 layer casts it). SQLite cannot change a CHECK in
// place: the table is made anew and its rows copied.
void createV12(sqlite3* db, const std::string& path) {
    exec(db, path, R"sql(
CREATE TABLE numerics_v12 (
    run_id               INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step                 INTEGER NOT NULL,
    kind                 TEXT NOT NULL CHECK (kind IN ('grad', 'activation', 'cast')),
    name                 TEXT NOT NULL,
    absmax               REAL,
    underflow_subnormal  REAL,
    underflow_normal     REAL,
    headroom_log2        REAL,
    nonfinite            INTEGER NOT NULL DEFAULT 0,
    numel                INTEGER NOT NULL DEFAULT 0,
    loss_scale           REAL,
    dtype                TEXT NOT NULL DEFAULT '',
    format               TEXT NOT NULL DEFAULT 'fp16',
    saturated            REAL NOT NULL DEFAULT 0,
    scale                REAL NOT NULL DEFAULT 1,
    PRIMARY KEY (run_id, kind, name, step)
) WITHOUT ROWID;
INSERT INTO numerics_v12(run_id, step, kind, name, absmax, underflow_subnormal,
                         underflow_normal, headroom_log2, nonfinite, numel, loss_scale, dtype)
    SELECT run_id, step, kind, name, absmax, underflow_subnormal, underflow_normal,
           headroom_log2, nonfinite, numel, loss_scale, dtype FROM numerics;
DROP TABLE numerics;
ALTER TABLE numerics_v12 RENAME TO numerics;
CREATE INDEX numerics_by_run_step ON numerics(run_id, step);
)sql",
         "measuring per-layer numerics in each tensor's format (version 12)");
}

using Migration = void (*)(sqlite3*, const std::string&);
// kMigrations[n] takes a database from version n to n + 1.
constexpr std::array<Migration, 12> kMigrations = {&createV1, &createV2,  &createV3,  &createV4,
                                                   &createV5, &createV6,  &createV7,  &createV8,
                                                   &createV9, &createV10, &createV11, &createV12};
// A file of the newest schema is opened as such: never one migration short of it.
static_assert(kMigrations.size() == Database::kSchemaVersion,
              "every schema version has its migration, and Database opens at the newest");

int64_t pragmaInt(sqlite3* db, const std::string& path, const char* sql, const char* what) {
    Statement st(db, path, sql, what);
    if (!st.step())
        throwIo(db, path, what);
    return st.i64(0);
}

int32_t bigEndian32(const unsigned char* p) {
    return static_cast<int32_t>((uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) |
                                (uint32_t(p[2]) << 8) | uint32_t(p[3]));
}

struct CloseDb {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};

}  // namespace

std::string nowIso() {
    using namespace std::chrono;
    const auto now = system_clock::now();
    const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count();
    const std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[40];
    const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(ms % 1000));
    return buf;
}

std::string recoveryAdvice(const std::string& path) {
    return "copy what is still readable into a new file with the sqlite3 shell: sqlite3 " + path +
           " .recover | sqlite3 recovered.db";
}

[[noreturn]] static void throwCode(int code, const std::string& reason, const std::string& path,
                                   const std::string& what) {
    switch (code & 0xff) {
        case SQLITE_NOTADB:
            throw StoreError(StoreError::Kind::NotADatabase,
                             path + " is not a usable SQLite database (" + reason + ", while " +
                                 what + "); it was left untouched");
        case SQLITE_CORRUPT:
            throw StoreError(
                StoreError::Kind::Corrupt,
                path + " is damaged (" + reason + ", while " + what + "); " + recoveryAdvice(path));
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            throw StoreError(StoreError::Kind::Busy,
                             path + ": " + what + " failed: " + reason +
                                 " (another program holds a lock on the database)");
        default:
            throw StoreError(StoreError::Kind::Io, path + ": " + what + " failed: " + reason);
    }
}

void throwIo(sqlite3* db, const std::string& path, const std::string& what) {
    const int code = db ? sqlite3_extended_errcode(db) : SQLITE_ERROR;
    const std::string reason = db ? sqlite3_errmsg(db) : "no connection";
    throwCode(code, reason, path, what);
}

void exec(sqlite3* db, const std::string& path, const std::string& sql, const char* what) {
    char* err = nullptr;
    if (const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err); rc != SQLITE_OK) {
        const std::string reason = err ? err : sqlite3_errmsg(db);
        sqlite3_free(err);
        throwCode(sqlite3_extended_errcode(db), reason, path, what);
    }
}

void useWal(sqlite3* db, const std::string& path) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    for (;;) {
        const int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
        if (rc == SQLITE_OK)
            return;
        const int primary = rc & 0xff;
        if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
            std::chrono::steady_clock::now() >= deadline)
            throwIo(db, path, "switching to WAL mode");
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

Identity inspect(sqlite3* db, const std::string& path) {
    // One snapshot for all three reads: read one by one, another program's first
    // transaction could land between them, and its new tables would show without
    // the application id it set with them.
    const ReadSnapshot snapshot(db, path);
    Identity id;
    id.application_id = static_cast<int32_t>(
        pragmaInt(db, path, "PRAGMA application_id", "reading the application id"));
    id.user_version =
        static_cast<int>(pragmaInt(db, path, "PRAGMA user_version", "reading the schema version"));
    Statement st(db, path,
                 "SELECT name FROM sqlite_schema WHERE type = 'table' "
                 "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
                 "listing tables");
    while (st.step()) {
        std::string name = st.text(0);
        if (std::find(kOurTables.begin(), kOurTables.end(), name) == kOurTables.end())
            id.foreign_tables.push_back(name);
        id.tables.push_back(std::move(name));
    }
    return id;
}

void checkIdentity(const Identity& id, const std::string& path, int highest) {
    if (id.application_id != 0 && id.application_id != kApplicationId) {
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%08X", static_cast<uint32_t>(id.application_id));
        throw StoreError(StoreError::Kind::ForeignDatabase,
                         path + " is an SQLite database of another program (application id " + hex +
                             "), not an ampbench database; it was left untouched");
    }
    // A workbench database sets its application id in the transaction that creates
    // its tables: without it, any table or schema version belongs to someone else,
    // even tables that happen to share our names.
    if (id.application_id == 0 && id.foreign_tables.empty() &&
        (!id.tables.empty() || id.user_version != 0)) {
        std::string list;
        for (size_t i = 0; i < id.tables.size() && i < 5; ++i)
            list += (i ? ", " : "") + id.tables[i];
        throw StoreError(StoreError::Kind::ForeignDatabase,
                         path + " is an SQLite database of another program (" +
                             (list.empty() ? "schema version " + std::to_string(id.user_version)
                                           : "tables " + list) +
                             ", but no ampbench application id), not an ampbench database; it "
                             "was left untouched");
    }
    if (id.application_id == 0 && !id.foreign_tables.empty()) {
        std::string list;
        for (size_t i = 0; i < id.foreign_tables.size() && i < 5; ++i)
            list += (i ? ", " : "") + id.foreign_tables[i];
        if (id.foreign_tables.size() > 5)
            list += ", ...";
        throw StoreError(StoreError::Kind::ForeignDatabase,
                         path + " is an SQLite database of another program (it holds tables " +
                             list + "), not an ampbench database; it was left untouched");
    }
    if (id.user_version > highest) {
        throw StoreError(StoreError::Kind::NewerSchema,
                         path + " was written by a newer ampbench (schema " +
                             std::to_string(id.user_version) + ", this build reads up to " +
                             std::to_string(highest) + "); it was left untouched");
    }
}

void throwOpen(sqlite3* db, const std::string& path, int rc) {
    std::string reason = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    const int err = db ? sqlite3_system_errno(db) : 0;
    if (err != 0)
        reason += std::string(" (") + std::strerror(err) + ")";
    if ((rc & 0xff) == SQLITE_NOTADB) {
        throw StoreError(StoreError::Kind::NotADatabase, path + " is not an SQLite database (" +
                                                             reason + "); it was left untouched");
    }
    throw StoreError(StoreError::Kind::CannotOpen, "cannot open " + path + ": " + reason);
}

bool checkExistingFile(const std::string& path, int highest, bool deep) {
    // The header is read through SQLite's own descriptor, never one of ours: closing
    // any descriptor of a file drops every POSIX lock this process holds on it, SQLite's
    // included, and another process ending later then takes itself for the last user and
    // deletes the WAL with commits this process has not checkpointed. SQLite shares its
    // locks per file within the process and defers closing a descriptor while they are
    // held. Opening a connection reads nothing; the header is read without a lock.
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    std::unique_ptr<sqlite3, CloseDb> db(raw);
    if (rc != SQLITE_OK)
        throwOpen(raw, path, rc);
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_file* file = nullptr;
    if (sqlite3_file_control(raw, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK ||
        file == nullptr || file->pMethods == nullptr) {
        throw StoreError(StoreError::Kind::CannotOpen,
                         "cannot open " + path + ": " + "SQLite gave no handle to its file");
    }
    sqlite3_int64 size = 0;
    if (file->pMethods->xFileSize(file, &size) != SQLITE_OK)
        throwIo(raw, path, "reading the file's size");
    if (size == 0)
        return false;
    unsigned char h[100] = {};
    const int n = static_cast<int>(std::min<sqlite3_int64>(size, sizeof h));
    // A short read fills the rest with zeros and is told by the size above.
    const int read = file->pMethods->xRead(file, h, n, 0);
    if (read != SQLITE_OK && read != SQLITE_IOERR_SHORT_READ)
        throwIo(raw, path, "reading the file's header");
    if (n < 16 || std::memcmp(h, "SQLite format 3\0", 16) != 0) {
        throw StoreError(StoreError::Kind::NotADatabase,
                         path +
                             " is not an SQLite database (its first bytes are not "
                             "\"SQLite format 3\"); it was left untouched");
    }
    if (n == 100) {
        // The header's copy of these pragmas; a WAL may hold newer ones, read below.
        Identity id;
        id.user_version = bigEndian32(h + 60);
        id.application_id = bigEndian32(h + 68);
        checkIdentity(id, path, highest);
    }
    if (!deep)
        return true;
    sqlite3_busy_timeout(raw, kBusyTimeoutMs);
    checkIdentity(inspect(raw, path), path, highest);
    return true;
}

void migrate(sqlite3* db, const std::string& path, int from, int to) {
    if (to > static_cast<int>(kMigrations.size())) {
        throw StoreError(StoreError::Kind::Io, path + ": no migration to schema " +
                                                   std::to_string(to) + " in this build");
    }
    for (int v = from; v < to; ++v)
        kMigrations[static_cast<size_t>(v)](db, path);
    exec(db, path, "PRAGMA application_id = " + std::to_string(kApplicationId),
         "setting the application id");
    exec(db, path, "PRAGMA user_version = " + std::to_string(to), "setting the schema version");
}

}  // namespace ampbench::store::schema
