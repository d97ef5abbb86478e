#include "core/store/Database.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>

#include "core/run/FileKind.h"
#include "core/store/ImportStore.h"
#include "core/store/OutputFile.h"
#include "core/store/RecordStore.h"
#include "core/store/private/MappedFault.h"
#include "core/store/private/Owner.h"
#include "core/store/private/Schema.h"

namespace ampbench::store {

namespace {

namespace fs = std::filesystem;
using run::EvalRecord;
using run::EventRecord;
using run::StepRecord;
using schema::ImplicitTransaction;
using schema::nowIso;
using schema::Statement;

constexpr const char* kInterruptedError = "the process writing this run ended without finishing it";
constexpr const char* kNeverStarted = "never started: the process that queued it ended";

[[noreturn]] void fail(StoreError::Kind kind, const std::string& message) {
    throw StoreError(kind, message);
}

run::RunStatus parseStatus(const std::string& text, const std::string& path, int64_t run) {
    try {
        return run::runStatusFromString(text);
    } catch (const std::invalid_argument& e) {
        fail(StoreError::Kind::Io,
             path + ": run " + std::to_string(run) + " has an unreadable status: " + e.what());
    }
}

constexpr const char* kRunColumns =
    "SELECT r.id, r.experiment_id, e.name, r.arm, r.arm_index, r.seed, r.spec_json, "
    "r.env_json, r.status, r.error, r.notes, r.started_at, r.ended_at, r.planned_steps, "
    "(SELECT MAX(s.step) FROM steps s WHERE s.run_id = r.id), r.owner_pid, r.owner_host, ";
constexpr const char* kRunFrom = " FROM runs r JOIN experiments e ON e.id = r.experiment_id ";

/// A run whose owner has died reads as interrupted before any writer records it,
/// so a reader never shows a dead run as running (or a dead queue as pending).
void showDeadOwner(RunRow& r, const Statement& st, int pid_col) {
    const bool running = r.status == run::RunStatus::Running;
    if (!running && r.status != run::RunStatus::Queued)
        return;
    const std::optional<int64_t> pid =
        st.isNull(pid_col) ? std::nullopt : std::optional<int64_t>(st.i64(pid_col));
    if (owner::gone(pid, st.text(pid_col + 1), st.text(pid_col + 2), running)) {
        r.status = run::RunStatus::Interrupted;
        r.failure = run::FailureKind::Interrupted;
        r.error = running ? kInterruptedError : kNeverStarted;
    }
}

/// Tags as stored ("a, b"); read leniently, since they were checked when written.
std::vector<std::string> storedTags(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos)
            comma = text.size();
        const std::string tag = text.substr(start, comma - start);
        const auto first = tag.find_first_not_of(' ');
        if (first != std::string::npos)
            out.push_back(tag.substr(first, tag.find_last_not_of(' ') - first + 1));
        start = comma + 1;
    }
    return out;
}

RunRow readRun(const Statement& st, const std::string& path) {
    RunRow r;
    r.id = st.i64(0);
    r.experiment_id = st.i64(1);
    r.experiment_name = st.text(2);
    r.arm = st.text(3);
    r.arm_index = static_cast<int>(st.i64(4));
    r.seed = static_cast<uint64_t>(st.i64(5));
    r.spec_json = st.text(6);
    r.env_json = st.text(7);
    r.status = parseStatus(st.text(8), path, r.id);
    r.error = st.text(9);
    r.notes = st.text(10);
    r.started_at = st.text(11);
    r.ended_at = st.text(12);
    r.planned_steps = st.i64(13);
    r.last_step = st.isNull(14) ? 0 : st.i64(14);
    r.failure = run::failureKindFromString(st.text(18));
    r.inputs_json = st.text(19);
    r.rerun_of = st.isNull(20) ? 0 : st.i64(20);
    r.label = st.text(21);
    r.tags = storedTags(st.text(22));
    r.trashed_at = st.text(23);
    r.experiment_trashed = st.i64(24) != 0;
    r.origin = st.text(25);
    r.origin_run_id = st.isNull(26) ? 0 : st.i64(26);
    showDeadOwner(r, st, 15);
    return r;
}

ExperimentRow readExperiment(const Statement& st) {
    ExperimentRow e;
    e.id = st.i64(0);
    e.name = st.text(1);
    e.spec_json = st.text(2);
    e.notes = st.text(3);
    e.created_at = st.text(4);
    e.run_count = static_cast<int>(st.i64(5));
    e.tags = storedTags(st.text(6));
    e.trashed_at = st.text(7);
    e.origin = st.text(8);
    e.origin_id = st.isNull(9) ? 0 : st.i64(9);
    return e;
}

/// True when nobody may write at `path` now: no -wal file beside it, and the file
/// or its folder is not writable (a read-only folder, file or file system).
bool readOnlyPlace(const std::string& path) {
    std::error_code ec;
    if (fs::exists(path + "-wal", ec))
        return false;
    const fs::path parent = fs::path(path).parent_path();
    const std::string folder = parent.empty() ? "." : parent.string();
    return ::access(path.c_str(), W_OK) != 0 || ::access(folder.c_str(), W_OK) != 0;
}

/// file: URI with immutable=1; '%', '?' and '#' in the path are escaped.
std::string immutableUri(const std::string& path) {
    std::string uri = "file:";
    for (char c : path) {
        if (c == '%' || c == '?' || c == '#') {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
            uri += buf;
        } else {
            uri += c;
        }
    }
    return uri + "?immutable=1";
}

}  // namespace

Database::Database(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {
    guardDatabase(path_);
}

Database::~Database() {
    sqlite3_close_v2(db_);
    releaseDatabase(path_);
}

std::unique_ptr<Database> Database::open(const std::string& path, Mode mode) {
    if (path.empty())
        fail(StoreError::Kind::CannotOpen, "no database file was given");
    std::error_code ec;
    const bool exists = fs::exists(path, ec);
    if (ec)
        fail(StoreError::Kind::CannotOpen, "cannot open " + path + ": " + ec.message());
    if (exists && fs::is_directory(path, ec))
        fail(StoreError::Kind::CannotOpen, "cannot open " + path + ": it is a folder, not a file");
    if (exists && !fs::is_regular_file(path, ec)) {
        // Opening a FIFO blocks until a writer comes; a device is no database either.
        fail(StoreError::Kind::CannotOpen, "cannot open " + path + ": it is " +
                                               run::describeSpecialFile(path) +
                                               ", not a database file; it was left untouched");
    }
    if (!exists && mode == Mode::ReadOnly) {
        fail(
            StoreError::Kind::CannotOpen,
            "cannot open " + path + ": the file does not exist (opened read-only, so not created)");
    }
    if (!exists) {
        const fs::path parent = fs::path(path).parent_path();
        if (!parent.empty() && !fs::exists(parent, ec)) {
            fs::create_directories(parent, ec);
            if (ec) {
                fail(StoreError::Kind::CannotOpen, "cannot create the folder " + parent.string() +
                                                       " for " + path + ": " + ec.message());
            }
        }
    } else if (schema::checkExistingFile(path, kSchemaVersion, mode == Mode::ReadWrite) &&
               mode == Mode::ReadWrite) {
        if (::access(path.c_str(), W_OK) != 0) {
            fail(StoreError::Kind::CannotOpen, "cannot open " + path +
                                                   " for writing: " + std::strerror(errno) +
                                                   " (it can still be opened read-only)");
        }
    }

    int flags = mode == Mode::ReadOnly ? SQLITE_OPEN_READONLY
                                       : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    std::string name = path;
    if (mode == Mode::ReadOnly && readOnlyPlace(path)) {
        // A reader of a WAL database creates -wal and -shm files beside it: impossible
        // in a read-only folder, and left behind next to a read-only file. Where no
        // -wal exists and nobody may write here, the file cannot change while we read
        // it, so it is opened as immutable and nothing is created.
        name = immutableUri(path);
        flags |= SQLITE_OPEN_URI;
    }
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
    std::unique_ptr<Database> db(new Database(path, raw));  // closes raw even on failure
    if (rc != SQLITE_OK)
        schema::throwOpen(raw, path, rc);
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, schema::kBusyTimeoutMs);
    fault::watchMappedFiles();
    db->prepareSchema(mode);
    if (mode == Mode::ReadWrite)
        db->recoverInterrupted();
    return db;
}

void Database::prepareSchema(Mode mode) {
    schema::exec(db_, path_, "PRAGMA foreign_keys = ON", "enabling foreign keys");
    // Checked again on this connection before its first write.
    schema::Identity id = schema::inspect(db_, path_);
    schema::checkIdentity(id, path_, kSchemaVersion);
    schema_version_ = id.user_version;
    if (mode == Mode::ReadOnly) {
        if (id.user_version == 0 && id.tables.empty()) {
            fail(StoreError::Kind::CannotOpen, "cannot open " + path_ +
                                                   " read-only: it is empty (no ampbench tables "
                                                   "yet); open it read-write once to create them");
        }
        if (id.user_version < kOldestReadable) {
            fail(StoreError::Kind::CannotOpen,
                 "cannot open " + path_ + " read-only: it holds schema " +
                     std::to_string(id.user_version) + " and needs upgrading to schema " +
                     std::to_string(kSchemaVersion) + "; open it read-write once");
        }
        return;
    }
    schema::useWal(db_, path_);
    schema::exec(db_, path_, "PRAGMA synchronous = NORMAL", "setting synchronous mode");
    if (id.user_version == kSchemaVersion)
        return;

    ImplicitTransaction tx(db_, path_);
    id = schema::inspect(db_, path_);  // another process may have migrated meanwhile
    schema::checkIdentity(id, path_, kSchemaVersion);
    if (id.user_version < kSchemaVersion)
        schema::migrate(db_, path_, id.user_version, kSchemaVersion);
    tx.commit();
    schema_version_ = kSchemaVersion;
}

void Database::requireIntact() const {
    Statement st(db_, path_, "PRAGMA quick_check(5)", "checking the file's integrity");
    std::string problems;
    while (st.step()) {
        const std::string line = st.text(0);
        if (line != "ok")
            problems += (problems.empty() ? "" : "; ") + line;
    }
    if (!problems.empty()) {
        fail(StoreError::Kind::Corrupt, path_ + " is damaged (" + problems +
                                            "); nothing was written to it. " +
                                            schema::recoveryAdvice(path_));
    }
}

void Database::recoverInterrupted() {
    struct Dead {
        int64_t id;
        bool running;
    };
    std::vector<Dead> runs;
    std::vector<int64_t> searches;
    const std::string host = owner::hostName();
    {
        Statement st(db_, path_,
                     "SELECT id, status = 'running', owner_pid, owner_token FROM runs "
                     "WHERE status IN ('running', 'queued') AND owner_host = ?1",
                     "looking for interrupted runs");
        st.bindText(1, host);
        while (st.step()) {
            const bool running = st.i64(1) != 0;
            const auto pid = st.isNull(2) ? std::nullopt : std::optional<int64_t>(st.i64(2));
            if (owner::gone(pid, host, st.text(3), running))
                runs.push_back({st.i64(0), running});
        }
    }
    {
        Statement st(db_, path_,
                     "SELECT id, owner_pid, owner_token FROM batch_searches "
                     "WHERE status = 'running' AND (owner_host = ?1 OR owner_host IS NULL)",
                     "looking for interrupted max-batch searches");
        st.bindText(1, host);
        while (st.step()) {
            // Searches from before schema 3 have no owner: they ran on this machine
            // or another, and none can still be running after an upgrade.
            const auto pid = st.isNull(1) ? std::nullopt : std::optional<int64_t>(st.i64(1));
            if (owner::gone(pid, host, st.text(2), true))
                searches.push_back(st.i64(0));
        }
    }
    if (runs.empty() && searches.empty())
        return;
    ImplicitTransaction tx(db_, path_);
    Statement up(db_, path_,
                 "UPDATE runs SET status = 'interrupted', error = ?2, failure = 'interrupted' "
                 "WHERE id = ?1 AND status = ?3",
                 "marking interrupted runs");
    int changed = 0;
    for (const Dead& d : runs) {
        up.bindInt(1, d.id).bindText(2, d.running ? kInterruptedError : kNeverStarted);
        up.bindText(3, d.running ? "running" : "queued").run();
        changed += sqlite3_changes(db_);
    }
    Statement search(db_, path_,
                     "UPDATE batch_searches SET status = 'interrupted', note = ?2 "
                     "WHERE id = ?1 AND status = 'running'",
                     "marking interrupted max-batch searches");
    for (int64_t id : searches)
        search.bindInt(1, id).bindText(2, kInterruptedError).run();
    tx.commit();
    recovered_ = changed;
}

// Schema 2 (read-only opens) has no owner tokens (owners are told by pid alone)
// and no failure kinds; schemas before 4 no rerun records, before 5 no labels,
// tags or trash.
std::string Database::runSelect() const {
    return std::string(kRunColumns) +
           (schema_version_ >= 3 ? "r.owner_token, r.failure, " : "NULL, '', ") +
           (schema_version_ >= 4 ? "r.inputs_json, r.rerun_of, " : "'', NULL, ") +
           (schema_version_ >= 5 ? "r.label, r.tags, r.trashed_at, e.trashed_at <> '', "
                                 : "'', '', '', 0, ") +
           (schema_version_ >= 6 ? "r.origin, r.origin_run_id" : "'', NULL") + kRunFrom;
}

// An experiment's run count leaves out runs in the trash.
std::string Database::experimentSelect() const {
    return std::string(
               "SELECT e.id, e.name, e.spec_json, e.notes, e.created_at, "
               "(SELECT COUNT(*) FROM runs r WHERE r.experiment_id = e.id") +
           notTrashed("r") + "), " +
           (schema_version_ >= 5 ? "e.tags, e.trashed_at, " : "'', '', ") +
           (schema_version_ >= 6 ? "e.origin, e.origin_id" : "'', NULL") + " FROM experiments e ";
}

std::string Database::notTrashed(const char* alias) const {
    return schema_version_ >= 5 ? std::string(" AND ") + alias + ".trashed_at = '' "
                                : std::string(" ");
}

// --- experiments and runs ---

int64_t Database::createExperiment(const std::string& name, const std::string& spec_json) {
    Statement st(
        db_, path_,
        "INSERT INTO experiments(name, spec_json, notes, created_at) VALUES(?1, ?2, '', ?3)",
        "creating experiment \"" + name + "\"");
    st.bindText(1, name).bindText(2, spec_json).bindText(3, nowIso()).run();
    return sqlite3_last_insert_rowid(db_);
}

int64_t Database::createRun(int64_t experiment_id, const std::string& arm, int arm_index,
                            uint64_t seed, const std::string& arm_json, int64_t planned_steps,
                            const std::string& inputs_json, int64_t rerun_of) {
    if (!experiment(experiment_id)) {
        fail(StoreError::Kind::NotFound,
             path_ + " has no experiment " + std::to_string(experiment_id) + " to add a run to");
    }
    Statement st(db_, path_,
                 "INSERT INTO runs(experiment_id, arm, arm_index, seed, spec_json, status, "
                 "planned_steps, created_at, owner_pid, owner_host, owner_token, inputs_json, "
                 "rerun_of) VALUES(?1, ?2, ?3, ?4, ?5, 'queued', ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                 "creating a run of experiment " + std::to_string(experiment_id));
    st.bindInt(1, experiment_id).bindText(2, arm).bindInt(3, arm_index);
    st.bindInt(4, static_cast<int64_t>(seed)).bindText(5, arm_json).bindInt(6, planned_steps);
    st.bindText(7, nowIso()).bindInt(8, owner::currentPid()).bindText(9, owner::hostName());
    st.bindText(10, owner::currentToken()).bindText(11, inputs_json);
    if (rerun_of > 0)
        st.bindInt(12, rerun_of);
    st.run();
    return sqlite3_last_insert_rowid(db_);
}

namespace {
/// Runs an UPDATE/DELETE with ?1 = id first bound; NotFound when no row matched.
void changeOne(sqlite3* db, const std::string& path, Statement& st, const std::string& what) {
    st.run();
    if (sqlite3_changes(db) == 0)
        fail(StoreError::Kind::NotFound, path + " has no " + what);
}
}  // namespace

void Database::markRunning(int64_t run_id, const std::string& env_json) {
    Statement st(db_, path_,
                 "UPDATE runs SET status = 'running', started_at = ?2, ended_at = '', error = '', "
                 "failure = '', "
                 "env_json = ?3, owner_pid = ?4, owner_host = ?5, owner_token = ?6 WHERE id = ?1",
                 "marking run " + std::to_string(run_id) + " running");
    st.bindInt(1, run_id).bindText(2, nowIso()).bindText(3, env_json);
    st.bindInt(4, owner::currentPid()).bindText(5, owner::hostName());
    st.bindText(6, owner::currentToken());
    changeOne(db_, path_, st, "run " + std::to_string(run_id));
}

void Database::finishRun(int64_t run_id, run::RunStatus status, const std::string& error,
                         run::FailureKind failure) {
    Statement st(
        db_, path_,
        "UPDATE runs SET status = ?2, error = ?3, ended_at = ?4, failure = ?5 WHERE id = ?1",
        "recording the end of run " + std::to_string(run_id));
    st.bindInt(1, run_id).bindText(2, run::toString(status)).bindText(3, error);
    st.bindText(4, nowIso()).bindText(5, run::toString(failure));
    changeOne(db_, path_, st, "run " + std::to_string(run_id));
}

bool Database::endedWithoutWriter(const RunRow& r) {
    if (r.status == run::RunStatus::Running || r.status == run::RunStatus::Queued)
        return true;
    return r.status == run::RunStatus::Interrupted && r.failure == run::FailureKind::Interrupted &&
           (r.error == kInterruptedError || r.error == kNeverStarted);
}

void Database::resumeRun(int64_t run_id, run::RunStatus status) {
    if (status != run::RunStatus::Running && status != run::RunStatus::Queued) {
        fail(StoreError::Kind::Io, path_ + ": run " + std::to_string(run_id) +
                                       " can only be resumed as running or queued, not " +
                                       run::toString(status));
    }
    // Only the text the writer's death left is replaced: an end some process
    // recorded (finished, failed, a requeue) stays as it is.
    Statement st(db_, path_,
                 "UPDATE runs SET status = ?2, ended_at = '', error = '', failure = '', "
                 "owner_pid = ?3, owner_host = ?4, owner_token = ?5 WHERE id = ?1 AND "
                 "(status IN ('running', 'queued') OR (status = 'interrupted' AND "
                 "failure = 'interrupted' AND error IN (?6, ?7)))",
                 "resuming run " + std::to_string(run_id));
    st.bindInt(1, run_id).bindText(2, run::toString(status)).bindInt(3, owner::currentPid());
    st.bindText(4, owner::hostName()).bindText(5, owner::currentToken());
    st.bindText(6, kInterruptedError).bindText(7, kNeverStarted).run();
    if (sqlite3_changes(db_) == 0) {
        const auto row = run(run_id);
        if (!row)
            fail(StoreError::Kind::NotFound, path_ + " has no run " + std::to_string(run_id));
        fail(StoreError::Kind::InUse, path_ + ": run " + std::to_string(run_id) + " ended " +
                                          run::toString(row->status) +
                                          " and is not resumed: " + row->error);
    }
}

void Database::renameExperiment(int64_t experiment_id, const std::string& name) {
    Statement st(db_, path_, "UPDATE experiments SET name = ?2 WHERE id = ?1",
                 "renaming experiment " + std::to_string(experiment_id));
    st.bindInt(1, experiment_id).bindText(2, name);
    changeOne(db_, path_, st, "experiment " + std::to_string(experiment_id));
}

void Database::setExperimentNotes(int64_t experiment_id, const std::string& notes) {
    Statement st(db_, path_, "UPDATE experiments SET notes = ?2 WHERE id = ?1",
                 "saving notes of experiment " + std::to_string(experiment_id));
    st.bindInt(1, experiment_id).bindText(2, notes);
    changeOne(db_, path_, st, "experiment " + std::to_string(experiment_id));
}

void Database::setExperimentSpec(int64_t experiment_id, const std::string& spec_json) {
    Statement st(db_, path_, "UPDATE experiments SET spec_json = ?2 WHERE id = ?1",
                 "saving the spec of experiment " + std::to_string(experiment_id));
    st.bindInt(1, experiment_id).bindText(2, spec_json);
    changeOne(db_, path_, st, "experiment " + std::to_string(experiment_id));
}

void Database::setRunNotes(int64_t run_id, const std::string& notes) {
    Statement st(db_, path_, "UPDATE runs SET notes = ?2 WHERE id = ?1",
                 "saving notes of run " + std::to_string(run_id));
    st.bindInt(1, run_id).bindText(2, notes);
    changeOne(db_, path_, st, "run " + std::to_string(run_id));
}

// Rows of runs, steps, evals and events go with them through ON DELETE CASCADE.
void Database::deleteExperiment(int64_t experiment_id) {
    Statement st(db_, path_, "DELETE FROM experiments WHERE id = ?1",
                 "deleting experiment " + std::to_string(experiment_id));
    st.bindInt(1, experiment_id);
    changeOne(db_, path_, st, "experiment " + std::to_string(experiment_id));
}

void Database::deleteRun(int64_t run_id) {
    Statement st(db_, path_, "DELETE FROM runs WHERE id = ?1",
                 "deleting run " + std::to_string(run_id));
    st.bindInt(1, run_id);
    changeOne(db_, path_, st, "run " + std::to_string(run_id));
}

// --- record rows and origins: forwards ---

int64_t Database::insertSteps(int64_t run_id, const std::vector<StepRecord>& rows) {
    return RecordStore(*this).insertSteps(run_id, rows);
}

int64_t Database::insertEvals(int64_t run_id, const std::vector<EvalRecord>& rows) {
    return RecordStore(*this).insertEvals(run_id, rows);
}

int64_t Database::insertEvents(int64_t run_id, const std::vector<EventRecord>& rows) {
    return RecordStore(*this).insertEvents(run_id, rows);
}

std::vector<StepRecord> Database::steps(int64_t run_id, int64_t after_step, int64_t limit) const {
    return RecordStore(*this).steps(run_id, after_step, limit);
}

std::vector<EvalRecord> Database::evals(int64_t run_id, int64_t after_step) const {
    return RecordStore(*this).evals(run_id, after_step);
}

std::vector<EventRecord> Database::events(int64_t run_id) const {
    return RecordStore(*this).events(run_id);
}

int64_t Database::stepCount(int64_t run_id) const {
    return RecordStore(*this).stepCount(run_id);
}

int64_t Database::lastSeq(int64_t run_id) const {
    return RecordStore(*this).lastSeq(run_id);
}

std::vector<SequencedRecord> Database::recordsSince(int64_t run_id, int64_t after_seq,
                                                    int64_t limit) const {
    return RecordStore(*this).recordsSince(run_id, after_seq, limit);
}

std::optional<int64_t> Database::experimentFromOrigin(const std::string& origin, int64_t id) const {
    return ImportStore(*this).experimentFromOrigin(origin, id);
}

std::optional<int64_t> Database::runFromOrigin(const std::string& origin, int64_t id) const {
    return ImportStore(*this).runFromOrigin(origin, id);
}

// --- the connection ---

static_assert(Database::kLockWaitMs == schema::kBusyTimeoutMs, "the connection's usual lock wait");

void Database::setLockWait(int milliseconds) {
    sqlite3_busy_timeout(db_, milliseconds);
}

std::string Database::databaseId() const {
    if (schema_version_ < 9)
        return {};
    Statement st(db_, path_, "SELECT value FROM database_info WHERE key = 'database_id'",
                 "reading the database's id");
    return st.step() ? st.text(0) : std::string();
}

// --- reading ---

std::vector<ExperimentRow> Database::experiments() const {
    Statement st(
        db_, path_,
        experimentSelect() + "WHERE 1" + notTrashed("e") + "ORDER BY e.created_at DESC, e.id DESC",
        "listing experiments");
    std::vector<ExperimentRow> out;
    while (st.step())
        out.push_back(readExperiment(st));
    return out;
}

std::optional<ExperimentRow> Database::experiment(int64_t id) const {
    Statement st(db_, path_, experimentSelect() + "WHERE e.id = ?1",
                 "reading experiment " + std::to_string(id));
    st.bindInt(1, id);
    if (!st.step())
        return std::nullopt;
    return readExperiment(st);
}

// All runs leave out those in the trash and those of experiments in it; the runs of
// one experiment asked for by id (in the trash or not) leave out those trashed alone.
std::vector<RunRow> Database::runs(std::optional<int64_t> experiment_id) const {
    const std::string sql =
        runSelect() +
        (experiment_id ? std::string("WHERE r.experiment_id = ?1") : "WHERE 1" + notTrashed("e")) +
        notTrashed("r") + "ORDER BY r.id";
    Statement st(db_, path_, sql, "listing runs");
    if (experiment_id)
        st.bindInt(1, *experiment_id);
    std::vector<RunRow> out;
    while (st.step())
        out.push_back(readRun(st, path_));
    return out;
}

std::optional<RunRow> Database::run(int64_t id) const {
    Statement st(db_, path_, runSelect() + "WHERE r.id = ?1", "reading run " + std::to_string(id));
    st.bindInt(1, id);
    if (!st.step())
        return std::nullopt;
    return readRun(st, path_);
}

std::vector<RunRow> Database::rerunsOf(int64_t experiment_id) const {
    if (schema_version_ < 4)
        return {};
    Statement st(db_, path_,
                 runSelect() +
                     "WHERE r.rerun_of IN (SELECT o.id FROM runs o WHERE o.experiment_id = ?1)" +
                     notTrashed("r") + notTrashed("e") + "ORDER BY r.id",
                 "listing reruns of experiment " + std::to_string(experiment_id));
    st.bindInt(1, experiment_id);
    std::vector<RunRow> out;
    while (st.step())
        out.push_back(readRun(st, path_));
    return out;
}

// data_version moves on other connections' commits; total_changes on our own.
int64_t Database::dataVersion() const {
    Statement st(db_, path_, "PRAGMA data_version", "reading the data version");
    st.step();
    return st.i64(0) + static_cast<int64_t>(sqlite3_total_changes64(db_));
}

// --- transactions ---

void Database::begin() {
    schema::exec(db_, path_, "BEGIN IMMEDIATE", "starting a transaction");
}

void Database::commit() {
    schema::exec(db_, path_, "COMMIT", "committing");
}

void Database::rollback() {
    if (sqlite3_get_autocommit(db_) == 0)
        schema::exec(db_, path_, "ROLLBACK", "rolling back");
}

}  // namespace ampbench::store
