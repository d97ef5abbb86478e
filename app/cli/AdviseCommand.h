#pragma once
// `ampbench-cli advise`: which precision, batch, accumulation and checkpointing to train
// with on this device, and what it gains (README: Which precision should I train with?).
#include <cstdint>
#include <string>

#include "cli/Commands.h"
#include "core/config/ExperimentSpec.h"
#include "core/store/Database.h"

namespace ampbench::cli {

/// The flags of `advise` beyond the spec's.
struct AdviseFlags {
    double budget_s = 0;       ///< --budget: wall time for the whole advice; 0: what it needs
    int64_t memory_bytes = 0;  ///< --memory: the max-batch searches' memory budget
    int64_t max_batch = 0;     ///< --max-batch: the searches' upper bound; 0: 8 × the batch
    config::LrRule lr_rule = config::LrRule::Linear;  ///< --lr-rule for a larger batch
    int leaders = 2;                                  ///< --check: candidates checked beside fp32
    int seeds = 2;                                    ///< --check-seeds
    int timed_steps = 30;                             ///< --timed-steps of each pass
    std::string save_spec;  ///< --save-spec: the recommended setting as a spec file
};

/// Trains the advice of the spec's model, data and batch (or a --script's), then prints it
/// (printAdvice). Exit 0 advised; 10 nothing fits at batch 1; 11 no mixed precision trains
/// here (the advice compares fp32 settings); 12 the budget is too small for one candidate
/// (nothing recorded); 13 the script trained another batch than it was given; 130
/// cancelled (what was measured is kept and printed); 2, 3 and 4 as `run`.
int commandAdvise(const std::string& db_path, const RunOverrides& o, const AdviseFlags& a);

/// Prints an advice's table, the reasons of the candidates not ranked, the recommendation
/// and the lines for a PyTorch loop; writes the recommended spec to `save_spec` if given
/// (kIoError when it cannot). `show -e` calls it for an advice's experiment.
int printAdvice(const store::Database& db, int64_t experiment_id,
                const std::string& save_spec = {});

}  // namespace ampbench::cli
