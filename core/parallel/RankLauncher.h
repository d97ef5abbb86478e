#pragma once
// Starts the other ranks of a data-parallel run as processes of the CLI
// (`ampbench-cli rank-worker ...`), each told its rank, the world and the
// rendezvous file; watches them, and ends any still running when the run is over.
// POSIX only; no LibTorch here.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/parallel/RankSetup.h"

namespace ampbench::parallel {

/// The program that runs a rank: $AMPBENCH_CLI when set, else `ampbench-cli`
/// beside this process's own executable (the GUI and the CLI are installed
/// together).
std::string workerExecutable();

class RankLauncher {
  public:
    /// Starts ranks 1 … world-1 of run `run_id` recorded in `db_path`. A program
    /// that cannot be run leaves rank0().launch_error set and starts nothing.
    RankLauncher(const std::string& executable, const std::string& db_path, int64_t run_id,
                 int world, double timeout_s, int first_gpu = 0);
    /// Ends the workers still running (SIGTERM, then SIGKILL) and removes the
    /// rendezvous folder.
    ~RankLauncher();
    RankLauncher(const RankLauncher&) = delete;
    RankLauncher& operator=(const RankLauncher&) = delete;

    /// Rank 0's setup: this process, the rendezvous, the explanation of lost ranks.
    RankSetup rank0() const;
    /// Waits up to `grace_s` for the workers to exit, then ends the rest. A line for
    /// each worker that did not exit cleanly.
    std::vector<std::string> finish(double grace_s);
    /// The workers that have ended so far and how ("rank 1 (process 42) was killed
    /// by signal 9 (Killed)"); waits up to `wait_s` for one to end.
    std::string lostRanks(double wait_s);

  private:
    struct Worker {
        int rank = 0;
        pid_t pid = -1;
        bool ended = false;
        int status = 0;
    };
    void reap(bool block);
    std::string dir_;
    RankSetup setup_;
    std::vector<Worker> workers_;
};

}  // namespace ampbench::parallel
