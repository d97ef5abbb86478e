#pragma once
// Where one process stands in a data-parallel run. No LibTorch here: it travels in
// train::TrainOptions, which the GUI's worker and the CLI fill without Torch.
#include <cstdint>
#include <string>

namespace ampbench::dist {

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
    bool active() const { return world > 1; }
};

}  // namespace ampbench::dist
