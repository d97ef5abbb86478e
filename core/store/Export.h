#pragma once
#include <ostream>
#include <vector>

#include "core/store/Database.h"

namespace ampbench::store {

/// Long-format CSV of every metric row of the given runs:
/// run_id,experiment,arm,seed,table,step,samples,metric,value
/// (table is step|eval|event|numerics; one line per metric value; a numerics metric is
/// "KIND:NAME:FIELD", e.g. "grad:head.weight:underflow_subnormal"; the FIELD "format"
/// has the number format's name as its value, "e4m3"). Returns rows written.
int64_t exportCsv(const Database& db, const std::vector<int64_t>& run_ids, std::ostream& out);

/// JSON of the given runs: each with its row (arm, seed, status, spec, env),
/// steps, evals and events as arrays of objects, and `numerics` (per-layer rows)
/// for a run that recorded them.
void exportJson(const Database& db, const std::vector<int64_t>& run_ids, std::ostream& out);

}  // namespace ampbench::store
