#pragma once
#include <optional>
#include <vector>

#include "core/store/Database.h"

namespace ampbench::store {

/// Reads and writes the max-batch finder's results (tables batch_searches and
/// batch_trials) through a Database connection. Each trial is committed as it
/// ends, so a cancelled or crashed search keeps what it measured.
class BatchSearchStore {
  public:
    explicit BatchSearchStore(Database& db) : db_(db) {}
    /// Inserts the search with status "running"; returns its id.
    int64_t create(const BatchSearchRow& row);
    void addTrial(int64_t search_id, int index, const BatchTrialRow& trial);
    /// Writes the result fields and status of `row` (trials are not rewritten).
    void finish(int64_t search_id, const BatchSearchRow& row);
    std::vector<BatchSearchRow> searches(std::optional<int64_t> experiment_id = std::nullopt) const;

  private:
    Database& db_;
};

}  // namespace ampbench::store
