#pragma once
// Grid Engine (Scheduler.h; Son of Grid Engine, as Debian's gridengine packages): an
// experiment as one `qsub -t` task array, its tasks read with `qstat -xml` and, once
// they have left the queue, `qacct`; cancelled with qdel. Tasks are submitted with
// -notify, so a qdel, a requeue or the h_rt limit warns them with SIGUSR2 before the
// kill: the run in flight ends with every row recorded.
#include <map>
#include <string>

#include "core/launch/Scheduler.h"

namespace ampbench::launch {

/// The one instance, as schedulers() lists it.
const Scheduler& gridEngineScheduler();

namespace gridengine {

/// The tasks of job `job_id` in `qstat -xml -g d` output, by index (Grid Engine's task
/// number less one); other jobs' entries are skipped.
std::map<int, TaskState> parseQstatXml(const std::string& xml, const std::string& job_id);
/// The ended tasks of job `job_id` in `qacct -j JOB` output, by index: each task's last
/// record, unless that one says it was rescheduled (it runs again).
std::map<int, TaskState> parseQacct(const std::string& text, const std::string& job_id);

/// The job id of `qsub -terse` output ("12.1-3:1" for an array, "12"); empty when the
/// output is not that.
std::string terseJobId(const std::string& out);

}  // namespace gridengine
}  // namespace ampbench::launch
