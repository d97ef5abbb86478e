#include "core/parallel/Machine.h"

namespace ampbench::parallel {

std::string describe(const config::RankCapacity& m) {
    if (m.cuda) {
        if (!m.nccl) {
            return "this machine: " + std::to_string(m.gpus) +
                   " GPU(s), but this build has no NCCL: one rank per arm";
        }
        return "this machine: " + std::to_string(m.gpus) + " GPU" + (m.gpus == 1 ? "" : "s") +
               ", a rank on each (NCCL)";
    }
    return m.gloo ? "this machine: the CPU, any number of ranks as processes (Gloo)"
                  : "this machine: the CPU, but this build has no Gloo: one rank per arm";
}

}  // namespace ampbench::parallel
