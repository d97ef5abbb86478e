// ampbench-cli rank-worker: a rank other than 0 of a data-parallel run.
#include <cstdio>
#include <exception>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/Terminal.h"
#include "core/train/RankWorker.h"

namespace ampbench::cli {

int commandRankWorker(const std::string& db_path, const RankWorkerOptions& o) {
    parallel::RankSetup setup;
    setup.rank = o.rank;
    setup.world = o.world;
    setup.store_path = o.store;
    setup.timeout_s = o.timeout_s;
    setup.first_gpu = o.first_gpu;
    if (o.rank >= o.world) {
        say(stderr, "rank-worker: --rank %d must be below --world %d\n", o.rank, o.world);
        return kUsage;
    }
    run::RunOutcome out;
    try {
        out = train::trainRankWorker(db_path, o.run_id, setup);
    } catch (const std::exception& e) {
        say(stderr, "rank-worker: rank %d of run %lld: %s\n", o.rank,
            static_cast<long long>(o.run_id), e.what());
        return kNotFound;
    }
    if (out.status == run::RunStatus::Finished) {
        return kOk;
    }
    say(stderr, "rank-worker: rank %d of run %lld ended %s: %s\n", o.rank,
        static_cast<long long>(o.run_id), run::toString(out.status).c_str(), out.error.c_str());
    return out.status == run::RunStatus::Cancelled ? kCancelled : kRunsFailed;
}

}  // namespace ampbench::cli
