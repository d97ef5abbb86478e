// The registry of schedulers (Scheduler.h), read from SchedulerList.h.
#include <cstdlib>

#include "core/launch/Program.h"
#include "core/launch/Scheduler.h"

namespace ampbench::launch {

#define AMPBENCH_SCHEDULER(instance) const Scheduler& instance();
#include "core/launch/SchedulerList.h"
#undef AMPBENCH_SCHEDULER

const std::vector<const Scheduler*>& schedulers() {
    static const std::vector<const Scheduler*> all = {
#define AMPBENCH_SCHEDULER(instance) &instance(),
#include "core/launch/SchedulerList.h"
#undef AMPBENCH_SCHEDULER
    };
    return all;
}

Submission submitArray(const std::vector<std::string>& argv,
                       std::string (*job_id)(const std::string& out)) {
    const ProgramResult r = runProgram(argv, 120);
    Submission s;
    s.job_id = r.ok() ? job_id(r.out) : std::string();
    s.exit_code = r.exit_code;
    if (s.job_id.empty()) {
        s.words = r.words();
    }
    return s;
}

const Scheduler* schedulerNamed(const std::string& name) {
    for (const Scheduler* s : schedulers()) {
        if (s->info().name == name) {
            return s;
        }
    }
    return nullptr;
}

std::string schedulerFlags() {
    std::string text;
    const auto& all = schedulers();
    for (size_t i = 0; i < all.size(); ++i) {
        text += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + ("--" + all[i]->info().name);
    }
    return text;
}

std::string missingTools(const SchedulerInfo& info, const std::vector<std::string>& tools) {
    for (const auto& tool : tools) {
        if (findProgram(tool).empty()) {
            const char* path = std::getenv("PATH");
            return "this host has no " + info.title + " client tools: `" + tool +
                   "` is not on PATH (" + (path ? path : "PATH is not set") +
                   "); run it on the cluster's login host, or put " + info.title +
                   "'s bin folder on PATH";
        }
    }
    return {};
}

}  // namespace ampbench::launch
