// Experiments and runs: their rows written (created, started, ended, resumed, renamed,
// noted, deleted) and read, and the record rows forwarded to RecordStore and ImportStore.
#include <sqlite3.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/store/Database.h"
#include "core/store/ImportStore.h"
#include "core/store/RecordStore.h"
#include "core/store/private/Owner.h"
#include "core/store/private/Schema.h"

namespace ampbench::store {

namespace {

using owner::kInterruptedError;
using owner::kNeverStarted;
using run::EvalRecord;
using run::EventRecord;
using run::StepRecord;
using schema::nowIso;
using schema::Statement;

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

}  // namespace

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
/// Sets one text column of row ?1 by `sql` ("UPDATE t SET c = ?2 WHERE id = ?1"),
/// `doing` naming the work in an error; NotFound when there is no row `what`.
void setOneText(sqlite3* db, const std::string& path, const char* sql, int64_t id,
                const std::string& text, const std::string& doing, const std::string& what) {
    Statement st(db, path, sql, doing);
    st.bindInt(1, id).bindText(2, text);
    changeOne(db, path, st, what);
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
    setOneText(db_, path_, "UPDATE experiments SET name = ?2 WHERE id = ?1", experiment_id, name,
               "renaming experiment " + std::to_string(experiment_id),
               "experiment " + std::to_string(experiment_id));
}

void Database::setExperimentNotes(int64_t experiment_id, const std::string& notes) {
    setOneText(db_, path_, "UPDATE experiments SET notes = ?2 WHERE id = ?1", experiment_id, notes,
               "saving notes of experiment " + std::to_string(experiment_id),
               "experiment " + std::to_string(experiment_id));
}

void Database::setExperimentSpec(int64_t experiment_id, const std::string& spec_json) {
    setOneText(db_, path_, "UPDATE experiments SET spec_json = ?2 WHERE id = ?1", experiment_id,
               spec_json, "saving the spec of experiment " + std::to_string(experiment_id),
               "experiment " + std::to_string(experiment_id));
}

void Database::setRunNotes(int64_t run_id, const std::string& notes) {
    setOneText(db_, path_, "UPDATE runs SET notes = ?2 WHERE id = ?1", run_id, notes,
               "saving notes of run " + std::to_string(run_id), "run " + std::to_string(run_id));
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

}  // namespace ampbench::store
