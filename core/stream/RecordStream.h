#pragma once
// The record stream: a run's records as newline-delimited JSON, one object a line,
// so that a run trained elsewhere (a GPU server over SSH) lands in a local database
// row for row. The store over a wire: the same rows, keyed by run-scoped sequence
// numbers (store::SequencedRecord).
//
//   {"type":"header","stream_version":1,"ampbench_version":..,"ampbench_commit":..,
//    "database_id":"9f2c..","environment":{..}}
//   {"type":"experiment","id":3,"name":..,"spec_json":"..","created_at":..}
//   {"type":"run","id":7,"experiment_id":3,"arm":..,"arm_index":0,"seed":1,"spec_json":"..",
//    "env_json":"..","planned_steps":96,"inputs_json":"..","status":"running","failure":"",
//    "error":"","started_at":..,"ended_at":..}
//   {"type":"step","run":7,"seq":1,"step":1,"samples":64,"loss":2.30,...every StepRecord field}
//   {"type":"eval","run":7,"seq":97,...EvalRecord} {"type":"event","run":7,"seq":98,...EventRecord}
//   {"type":"numerics","run":7,"step":100,"rows":[{"kind":"grad","name":"head.weight",
//    "format":"fp16","absmax":..,"underflow_subnormal":..,"underflow_normal":..,
//    "saturated":..,"headroom_log2":..,"nonfinite":0,"numel":..,"loss_scale":..,
//    "scale":1,"dtype":"float16"},...]}
//   {"type":"status","run":7,"status":"finished","failure":"","error":"","last_seq":99}
//
// `database_id` is the writing database's own id (schema 9; absent from older writers
// and older files), which tells two machines apart that share a host name. Names
// (an experiment's, an arm's) follow the spec's rules: at most 200 bytes, no control
// characters; integers must fit their field. The *_json fields are JSON texts as stored, kept as
// strings so they come back byte for byte. Doubles are written in the shortest form that reads back
// to the same bits; NaN and the infinities as the strings "NaN", "Infinity" and "-Infinity" (null
// reads as NaN). Fields a reader does not know are ignored.
//
// A numerics record holds one step's per-layer numerics (run::NumericsRecord, table
// `numerics`), a record per step. They have no sequence numbers: they are keyed by
// (run, step, kind, name), and a writer sends a step's record before that step's row.
// A row's kind is grad, activation or cast; "format" (a run::NumberFormat name),
// "saturated" (0…1) and "scale" (positive) may be missing, as from writers before
// them: fp16, 0 and 1 then.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "core/run/Numerics.h"
#include "core/store/Rows.h"

namespace ampbench::stream {

/// The version this build writes and the only one it reads.
constexpr int kStreamVersion = 1;

struct Header {
    int64_t stream_version = kStreamVersion;
    std::string ampbench_version;
    std::string ampbench_commit;
    std::string database_id;       ///< the writing database's id; empty when it has none
    std::string environment_json;  ///< probe::Environment of the writer, as JSON text
};

/// The longest name (an experiment's, an arm's, a machine's) a stream may bring:
/// config::kMaxExperimentNameLength, as for names typed here.
constexpr size_t kMaxNameLength = 200;
/// The longest database id a header may carry (this build writes 32 hex digits).
constexpr size_t kMaxDatabaseIdLength = 64;

/// What is wrong with a name from a stream ("must be at most 200 bytes long (it is
/// 10485760)"); empty when it may be stored.
std::string nameProblem(const std::string& name);

/// A row of a run's record (a step, an evaluation or an event) with its sequence number.
struct RowRecord {
    int64_t run = 0;  ///< the run's id where the stream was written
    store::SequencedRecord row;
};

/// A run's state when the record was written; `last_seq` is the last row written
/// before it, so a reader knows whether it has them all.
struct StatusRecord {
    int64_t run = 0;
    run::RunStatus status = run::RunStatus::Running;
    run::FailureKind failure = run::FailureKind::None;
    std::string error;
    int64_t last_seq = 0;
};

/// One step's per-layer numerics of a run; every row's step is `step` (a row's own
/// step is not written, and reads back as `step`).
struct NumericsGroup {
    int64_t run = 0;  ///< the run's id where the stream was written
    int64_t step = 0;
    std::vector<run::NumericsRecord> rows;
};

/// experiment: id, name, spec_json, created_at. run: the fields listed above.
using Record = std::variant<Header, store::ExperimentRow, store::RunRow, RowRecord, StatusRecord,
                            NumericsGroup>;

/// A line that is not a record this build reads: its number (1-based) and what is wrong.
class StreamError : public std::runtime_error {
  public:
    /// `type`: the record's type when the line names one ("header"), else empty.
    StreamError(int64_t line, const std::string& problem, std::string type = {})
        : std::runtime_error("line " + std::to_string(line) + ": " + problem),
          line_(line),
          problem_(problem),
          type_(std::move(type)) {}
    int64_t line() const { return line_; }
    const std::string& problem() const { return problem_; }
    const std::string& type() const { return type_; }

  private:
    int64_t line_;
    std::string problem_;
    std::string type_;
};

/// One line of JSON, without the newline.
std::string encode(const Record& record);
/// Reads line number `line_number` (for messages). Throws StreamError naming the line
/// and what is wrong: not JSON, no "type" or an unknown one, a field missing or of the
/// wrong type. A header's stream_version is read, not judged (the reader decides).
Record decode(const std::string& line, int64_t line_number);

/// A run's numerics rows as one group per step, in step order (rows keep their order
/// within a step).
std::vector<NumericsGroup> numericsGroups(int64_t run, std::vector<run::NumericsRecord> rows);

/// The header this build writes, with the writer's environment (JSON text; may be empty)
/// and the id of the database the records are read from (store::Database::databaseId).
Header makeHeader(const std::string& environment_json, const std::string& database_id = {});

}  // namespace ampbench::stream
