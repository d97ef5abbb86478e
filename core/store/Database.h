#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/store/Rows.h"
#include "core/store/StoreError.h"

struct sqlite3;

namespace ampbench::store {

/// One connection to a workbench database (SQLite, WAL mode). Not thread-safe:
/// each thread opens its own. Opening creates the schema in a new file, migrates
/// an older one, marks runs and searches left `running` (or `queued`) by a dead
/// process as `interrupted`, and refuses (StoreError, file untouched) a non-SQLite
/// file, a SQLite file that is not a workbench database, or one from a newer
/// schema. Readers show a run whose owner died as `interrupted` without writing.
/// A read-only open creates no files where nobody may write (read-only folder or file).
class Database {
  public:
    static constexpr int kSchemaVersion = 12;
    /// The oldest schema a read-only connection reads without upgrading it.
    static constexpr int kOldestReadable = 2;

    enum class Mode { ReadWrite, ReadOnly };
    static std::unique_ptr<Database> open(const std::string& path, Mode mode = Mode::ReadWrite);
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    const std::string& path() const { return path_; }
    sqlite3* handle() const { return db_; }
    /// The schema this connection reads (older than kSchemaVersion only read-only).
    int schemaVersion() const { return schema_version_; }
    /// Throws StoreError(Corrupt) naming what is damaged and how to save what is
    /// readable, when SQLite's quick check finds a problem. Writers call it before
    /// their first write, so nothing is added to a damaged file.
    void requireIntact() const;
    /// Runs whose status was changed to `interrupted` when this connection opened.
    int recoveredRuns() const { return recovered_; }

    // --- experiments and runs ---
    int64_t createExperiment(const std::string& name, const std::string& spec_json);
    /// `inputs_json`: checksums of the files the run reads (data::recordInputs);
    /// `rerun_of`: the run this one repeats, 0 for none.
    int64_t createRun(int64_t experiment_id, const std::string& arm, int arm_index, uint64_t seed,
                      const std::string& arm_json, int64_t planned_steps,
                      const std::string& inputs_json = "", int64_t rerun_of = 0);
    void markRunning(int64_t run_id, const std::string& env_json);
    void finishRun(int64_t run_id, run::RunStatus status, const std::string& error,
                   run::FailureKind failure = run::FailureKind::None);
    /// Takes over a run whose writer died before recording its end (it reads
    /// interrupted only for that, see endedWithoutWriter): it reads `status` (running
    /// or queued) again, owned by this process, its start time and environment kept.
    /// StoreError NotFound when no such run, InUse when its end was recorded.
    void resumeRun(int64_t run_id, run::RunStatus status);
    /// Whether `r` reads interrupted only because the process writing it ended
    /// without recording an end (not an end that any process recorded).
    static bool endedWithoutWriter(const RunRow& r);
    void renameExperiment(int64_t experiment_id, const std::string& name);
    void setExperimentNotes(int64_t experiment_id, const std::string& notes);
    /// An experiment that learns its arms as it goes (an advice: each format's
    /// candidates once its max batch is known) stores its spec again.
    void setExperimentSpec(int64_t experiment_id, const std::string& spec_json);
    void setRunNotes(int64_t run_id, const std::string& notes);
    /// Erase for good (emptyTrash uses them); the GUI moves to the trash instead.
    void deleteExperiment(int64_t experiment_id);  ///< with its runs and their rows
    void deleteRun(int64_t run_id);

    // --- the trash: rows in it are hidden from experiments(), runs() and rerunsOf()
    // (experiment(id) and run(id) still read them, marked) and kept until emptyTrash ---
    /// Moves an experiment with its runs to the trash. StoreError: NotFound (no such
    /// experiment, or already in the trash), InUse (a run of it is running or queued).
    void trashExperiment(int64_t experiment_id);
    /// Moves one run to the trash; NotFound or InUse as above.
    void trashRun(int64_t run_id);
    /// Brings an experiment back with the runs that went with it (runs trashed on
    /// their own before stay in the trash). NotFound when it is not in the trash.
    void restoreExperiment(int64_t experiment_id);
    /// Brings a run back; NotFound when it is not in the trash, InUse while its
    /// experiment is (restore that first).
    void restoreRun(int64_t run_id);
    /// Trashed experiments, and trashed runs of experiments that are not, newest first.
    std::vector<TrashRow> trash() const;
    /// Erases every row in the trash for good; returns the experiments and runs
    /// erased (an experiment's runs counted with it).
    int emptyTrash();

    // --- labels and tags ---
    /// A name shown beside the run's arm and seed; empty clears it. std::invalid_argument
    /// for a label with a line break or control character, or over kMaxLabelLength.
    void setRunLabel(int64_t run_id, const std::string& label);
    void setExperimentTags(int64_t experiment_id, const std::vector<std::string>& tags);
    void setRunTags(int64_t run_id, const std::vector<std::string>& tags);
    static constexpr size_t kMaxLabelLength = 80;
    static constexpr size_t kMaxTagLength = 40;
    static constexpr size_t kMaxTags = 20;
    /// "baseline, lr sweep ,Baseline" -> {"baseline", "lr sweep"}: split at commas,
    /// trimmed, blanks and repeats (ignoring case) dropped. std::invalid_argument
    /// naming the tag for a control character, a tag over kMaxTagLength or more
    /// than kMaxTags tags.
    static std::vector<std::string> parseTags(const std::string& text);
    static std::string joinTags(const std::vector<std::string>& tags);  ///< "a, b"

    // --- record rows: thin forwards to RecordStore (RecordStore.h), which holds the
    // steps, evaluations, events and their sequence numbers; see it for what each does ---
    int64_t insertSteps(int64_t run_id, const std::vector<run::StepRecord>& rows);
    int64_t insertEvals(int64_t run_id, const std::vector<run::EvalRecord>& rows);
    int64_t insertEvents(int64_t run_id, const std::vector<run::EventRecord>& rows);
    std::vector<run::StepRecord> steps(int64_t run_id, int64_t after_step = 0,
                                       int64_t limit = 0) const;
    std::vector<run::EvalRecord> evals(int64_t run_id, int64_t after_step = 0) const;
    std::vector<run::EventRecord> events(int64_t run_id) const;
    int64_t stepCount(int64_t run_id) const;
    int64_t lastSeq(int64_t run_id) const;
    std::vector<SequencedRecord> recordsSince(int64_t run_id, int64_t after_seq,
                                              int64_t limit = 0) const;
    /// Forwards to ImportStore (ImportStore.h): the local run or experiment imported
    /// last from `origin`'s id `id`.
    std::optional<int64_t> experimentFromOrigin(const std::string& origin, int64_t id) const;
    std::optional<int64_t> runFromOrigin(const std::string& origin, int64_t id) const;

    /// How long a statement waits for another connection's lock before it fails with
    /// StoreError(Busy); kLockWaitMs unless set. A writer that retries with a policy of
    /// its own (store::LockPolicy) waits less per try.
    void setLockWait(int milliseconds);
    static constexpr int kLockWaitMs = 5000;
    /// The listener hears what a RunRecorder on this connection commits; null for none.
    void setRecordListener(RecordListener* listener) { listener_ = listener; }
    RecordListener* recordListener() const { return listener_; }
    /// This database's own id (random, made with schema 9), which the streams it
    /// writes carry; empty for an older file opened read-only.
    std::string databaseId() const;

    // --- reading ---
    std::vector<ExperimentRow> experiments() const;
    std::optional<ExperimentRow> experiment(int64_t id) const;
    std::vector<RunRow> runs(std::optional<int64_t> experiment_id = std::nullopt) const;
    std::optional<RunRow> run(int64_t id) const;
    /// Runs that repeat a run of this experiment (`ampbench-cli rerun`), oldest first.
    std::vector<RunRow> rerunsOf(int64_t experiment_id) const;
    /// A number that changes whenever any connection commits (PRAGMA data_version);
    /// watchers poll it to skip work when nothing is new.
    int64_t dataVersion() const;

    // --- transactions (used by the batched recorder) ---
    void begin();
    void commit();
    void rollback();

  private:
    Database(std::string path, sqlite3* db);
    void prepareSchema(Mode mode);
    void recoverInterrupted();
    std::string runSelect() const;
    std::string experimentSelect() const;
    /// " AND ..." keeping rows out of the trash (nothing before schema 5).
    std::string notTrashed(const char* alias) const;
    /// Throws StoreError(Io) naming `what` on a read-only connection to an older schema.
    void requireSchema5(const char* what) const;

    std::string path_;
    sqlite3* db_ = nullptr;  // owned; closed in the destructor
    int recovered_ = 0;
    int schema_version_ = kSchemaVersion;
    RecordListener* listener_ = nullptr;
};

}  // namespace ampbench::store
