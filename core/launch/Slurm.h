#pragma once
// Slurm (Scheduler.h): an experiment as one `sbatch --array`, its tasks read with
// squeue and, once squeue has forgotten them, sacct; cancelled with scancel.
#include <map>
#include <string>

#include "core/launch/Scheduler.h"

namespace ampbench::launch {

/// The one instance, as schedulers() lists it.
const Scheduler& slurmScheduler();

namespace slurm {

/// Whether a task in `state` will not run again (COMPLETED, FAILED, TIMEOUT,
/// CANCELLED, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED without requeue, ...).
bool terminalState(const std::string& state);

/// The tasks in `squeue -h -r -t all -j JOB -o %i|%K|%T|%r|%N|%l|%M` output, by array
/// index; lines of other jobs and of the array's own record are skipped.
std::map<int, TaskState> parseSqueue(const std::string& text, const std::string& job_id);
/// The tasks in `sacct -n -P -X -j JOB -o JobID,State,Reason,NodeList,Timelimit,Elapsed,ExitCode`
/// output ("CANCELLED by 0" reads as CANCELLED; "12_[3-5]" as tasks 3, 4 and 5).
std::map<int, TaskState> parseSacct(const std::string& text, const std::string& job_id);

/// The first "N" of `sbatch --parsable` output ("N" or "N;cluster"); empty when the
/// output is not that.
std::string parsableJobId(const std::string& out);

}  // namespace slurm
}  // namespace ampbench::launch
