#pragma once
// What the reader returns: rows of the store as plain structs.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/run/Numerics.h"
#include "core/run/Records.h"

namespace ampbench::store {

struct ExperimentRow {
    int64_t id = 0;
    std::string name;
    std::string spec_json;  ///< the whole ExperimentSpec as JSON
    std::string notes;
    std::string created_at;         ///< ISO-8601 UTC
    int run_count = 0;              ///< runs not in the trash
    std::vector<std::string> tags;  ///< free words the user gave it (Database::parseTags)
    std::string trashed_at;         ///< when it was moved to the trash; empty when not
    std::string origin;     ///< where it was read from (`ingest --origin`); empty when made here
    int64_t origin_id = 0;  ///< its id in the database it came from
};

struct RunRow {
    int64_t id = 0;
    int64_t experiment_id = 0;
    std::string experiment_name;
    std::string arm;  ///< arm name
    int arm_index = 0;
    uint64_t seed = 0;
    std::string spec_json;  ///< the ArmSpec as JSON (resolved precision, scaled lr)
    std::string env_json;   ///< probe::Environment as JSON
    run::RunStatus status = run::RunStatus::Queued;
    run::FailureKind failure = run::FailureKind::None;  ///< why it did not finish
    std::string error;
    std::string notes;
    std::string started_at;  ///< ISO-8601 UTC, empty when never started
    std::string ended_at;
    int64_t last_step = 0;  ///< highest recorded optimizer step
    int64_t planned_steps = 0;
    std::string inputs_json;  ///< checksums of the files the run read (run::InputFile)
    int64_t rerun_of = 0;     ///< the run this one repeats; 0 for none
    std::string label;        ///< a name the user gave the run; empty for none
    std::vector<std::string> tags;
    std::string trashed_at;           ///< when the run itself was moved to the trash
    bool experiment_trashed = false;  ///< its experiment is in the trash
    std::string origin;               ///< where it was read from; empty when trained here
    int64_t origin_run_id = 0;        ///< its id in the database it came from
    bool inTrash() const { return !trashed_at.empty() || experiment_trashed; }
};

/// One row of a run's record with its run-scoped sequence number: 1, 2, 3 ... in the
/// order the rows were committed (schema 6). A record stream carries it; an ingest
/// keys on (run, seq).
struct SequencedRecord {
    int64_t seq = 0;
    std::variant<run::StepRecord, run::EvalRecord, run::EventRecord> record;
};

/// Hears what a RunRecorder on a connection wrote, after it was committed: the rows
/// with the sequence numbers they were stored under, the per-layer numerics committed
/// with them (told first: a step's numerics are committed with its row or before),
/// and the run's start and end. Called on the recorder's thread; must not throw (the
/// rows are stored already).
class RecordListener {
  public:
    virtual ~RecordListener() = default;
    virtual void runStarted(int64_t /*run_id*/) {}
    virtual void numericsCommitted(int64_t /*run_id*/,
                                   const std::vector<run::NumericsRecord>& /*rows*/) {}
    virtual void rowsCommitted(int64_t /*run_id*/, const std::vector<SequencedRecord>& /*rows*/) {}
    virtual void runFinished(int64_t /*run_id*/) {}
};

/// An experiment or a run in the trash, newest first (Database::trash).
struct TrashRow {
    bool is_run = false;
    int64_t id = 0;             ///< experiment or run id
    int64_t experiment_id = 0;  ///< the experiment itself, or the run's
    std::string name;           ///< experiment name, or "arm · seed N" with the run's label
    std::string experiment_name;
    std::string trashed_at;
    int run_count = 0;  ///< an experiment's runs that go with it
};

}  // namespace ampbench::store

namespace ampbench::store {

/// One trial of the max-batch finder.
struct BatchTrialRow {
    int64_t batch = 0;
    std::string outcome;  ///< fits | out_of_memory | over_budget | predicted_over_budget | error
    int64_t peak_bytes = 0;
    double step_ms = 0;
    std::string message;
};

/// One max-batch search: an arm (precision × checkpointing) on a device.
struct BatchSearchRow {
    int64_t id = 0;
    int64_t experiment_id = 0;  ///< 0 when not tied to an experiment
    std::string arm;
    std::string precision;  ///< resolved precision
    bool checkpointing = false;
    std::string device;
    int64_t budget_bytes = 0;  ///< 0: the device's own limit (CUDA)
    double margin = 0.05;
    int64_t max_batch = 0;      ///< largest micro-batch that trained
    int64_t safe_batch = 0;     ///< max_batch less the margin
    int64_t first_failure = 0;  ///< smallest micro-batch that did not fit (0: none found)
    int64_t peak_at_max = 0;
    std::string status;  ///< running | finished | cancelled | failed | interrupted
    std::string note;    ///< error text, or why the search stopped
    std::string spec_json;
    std::string created_at;
    std::vector<BatchTrialRow> trials;
};

}  // namespace ampbench::store
