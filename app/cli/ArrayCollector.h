#pragma once
// The collector of a job array on the host that launched it: reads the record streams
// that the array's tasks write into its folder and records them into the experiment's
// runs, and decides each run's end from its stream and from what the scheduler says
// (through launch::Scheduler, whichever scheduler it is).
#include <cstdint>
#include <string>

#include "cli/JobFiles.h"
#include "core/launch/Scheduler.h"
#include "core/launch/TaskList.h"
#include "core/store/Database.h"

namespace ampbench::cli {

/// Collects job array `job_id`'s streams (in `dir`) into experiment `experiment`'s
/// runs until the scheduler says every task has ended and their streams are read to
/// the end; returns the experiment's exit code. With `resume`, carries on where a
/// collector that died left off: the streams are read again from their start (rows the
/// database holds are not added twice), runs its death left interrupted are taken
/// over, and the runs a requeue added are found in the database, not created again.
int collectArray(store::Database& db, const launch::Scheduler& scheduler, const std::string& dir,
                 const std::string& job_id, int64_t experiment, const launch::TaskList& list,
                 bool resume = false);

/// The collector's work and its end: collectArray, then the exit code and end time in
/// the job file, whatever stopped it.
int collectToTheEnd(store::Database& db, const launch::Scheduler& scheduler, const std::string& dir,
                    const launch::TaskList& list, bool resume, const std::string& db_path,
                    Job& job);

/// `launch --resume` of a job array's experiment (ArrayResume.cpp): a new collector for
/// `job` when its own is gone; prints one JSON line. Refused while one lives.
int resumeCollector(const std::string& db_path, const launch::Scheduler& scheduler, const Job& job,
                    double wait_s);

/// The last lines of a task's output (what it said before it ended), at most ~600 bytes.
std::string outputTail(const std::string& path);

}  // namespace ampbench::cli
