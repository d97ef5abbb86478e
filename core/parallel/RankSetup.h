#pragma once
// Where one process stands in a data-parallel run. No LibTorch here: it travels in
// train::TrainOptions, which the GUI's worker and the CLI fill without Torch.
#include <cstdint>
#include <functional>
#include <string>

namespace ampbench::parallel {

struct RankSetup {
    int rank = 0;   ///< 0 records; the others train their shard and report a summary
    int world = 1;  ///< ranks in the run; 1 = not data-parallel
    /// The rendezvous: a file every rank of the run opens (c10d's FileStore), or,
    /// when `tcp_host` is set, rank 0's TCPStore at tcp_host:tcp_port.
    std::string store_path;
    std::string tcp_host;
    int tcp_port = 0;
    /// How long a rank waits for the others at the rendezvous and in any collective
    /// before the run fails: a rank that hangs ends the run, never a wait for ever.
    /// A rank that dies is noticed sooner (its connections close).
    double timeout_s = 300;
    /// The first GPU of the run: rank r trains on cuda:(first_gpu + r).
    int first_gpu = 0;
    /// Set when the other ranks could not be started: the run fails with it at once.
    std::string launch_error;
    /// Asked when a collective or the rendezvous fails and no rank said why: a line
    /// on the ranks that ended ("rank 1 (process 1234) was killed by signal 9"), or
    /// empty. Rank 0 of a launched run gets it from the launcher.
    std::function<std::string()> explain_lost_rank;
    bool active() const { return world > 1; }
};

}  // namespace ampbench::parallel
