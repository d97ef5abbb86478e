#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "core/run/Numerics.h"
#include "core/store/Database.h"

namespace ampbench::store {

/// Reads and writes a run's per-layer numerics (table `numerics`, schema 7; formats,
/// saturation, scales and cast tensors from schema 12) through a Database connection.
/// A file of an older schema (read-only) has none before 7, and rows against fp16
/// before 12.
class NumericsStore {
  public:
    explicit NumericsStore(const Database& db) : db_(db) {}
    /// Adds the rows in one transaction (or the caller's); a row for the same step,
    /// kind and name replaces the one there (a replayed step observed again). Returns
    /// how many rows were not there before.
    int64_t insert(int64_t run_id, const std::vector<run::NumericsRecord>& rows) const;
    /// The run's rows by kind (gradients, casts, outputs), name, then step; only one
    /// kind when given.
    std::vector<run::NumericsRecord> rows(int64_t run_id,
                                          std::optional<run::NumericsKind> kind = {}) const;
    /// The run's rows with after_step < step <= upto_step, by step (then kind and name,
    /// as rows() orders them).
    std::vector<run::NumericsRecord> rowsOfSteps(int64_t run_id, int64_t after_step,
                                                 int64_t upto_step) const;
    int64_t count(int64_t run_id) const;
    /// Whether this file has the table (schema 7 or later).
    bool available() const { return db_.schemaVersion() >= 7; }

  private:
    const Database& db_;
};

}  // namespace ampbench::store
