#pragma once
// What this machine offers data-parallel arms, without LibTorch in the header: the
// editor shows it and checks the arms' ranks against it.
#include <string>

#include "core/config/Validation.h"

namespace ampbench::parallel {

/// Visible GPUs (on CUDA) and the backends this build has, for config::checkRanks.
config::RankCapacity rankCapacity(bool cuda);

/// One line: "this machine: 2 GPUs, a rank on each (NCCL)", or "this machine: the
/// CPU, ranks as processes (Gloo)", or why ranks cannot run here.
std::string describe(const config::RankCapacity& machine);

}  // namespace ampbench::parallel
