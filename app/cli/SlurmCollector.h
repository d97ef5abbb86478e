#pragma once
// The collector of `launch --slurm` on the login host: reads the record streams that a
// job array's tasks write into its folder and records them into the experiment's
// runs, and decides each run's end from its stream and from what Slurm says.
#include <cstdint>
#include <initializer_list>
#include <string>

#include "cli/Slurm.h"
#include "core/store/Database.h"

namespace ampbench::cli {

/// Collects job array `job_id`'s streams (in `dir`) into experiment `experiment`'s
/// runs until Slurm says every task has ended and their streams are read to the end;
/// returns the experiment's exit code. With `resume`, carries on where a collector
/// that died left off: the streams are read again from their start (rows the
/// database holds are not added twice), runs its death left interrupted are taken
/// over, and the runs a requeue added are found in the database, not created again.
int collectArray(store::Database& db, const std::string& dir, const std::string& job_id,
                 int64_t experiment, const slurm::TaskList& list, bool resume = false);

/// The last lines of a task's output (what it said before it ended), at most ~600 bytes.
std::string outputTail(const std::string& path);
/// Slurm's name for a task of the array.
std::string taskName(const std::string& job_id, int task);
/// Names the missing tool and what to do; empty when every one is on PATH.
std::string missingTools(std::initializer_list<const char*> tools);

}  // namespace ampbench::cli
