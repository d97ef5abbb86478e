#pragma once
// What an advice compares ("which precision, batch, accumulation and checkpointing for my
// model on this device, and what do I gain?"): the number formats this device and build
// train, each at the user's batch and at the largest batch that fits, with checkpointing
// where the batch that fits is short of the user's and accumulation where it does not
// reach it at all; and how long its quality check may train. Pure: what the device says
// and what the max-batch searches found come in as data (train/Advise.cpp measures them).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"

namespace ampbench::config {

/// What the device and this build say of each format: empty where it trains here, else
/// why not (amp::Precision::unsupported's words).
struct AdviceDevice {
    bool cuda = false;
    bool tf32 = false;  ///< the GPU has TF32 units (compute capability 8.0 or later)
    std::string fp16;
    std::string bf16;
    std::string fp8;
};

/// One number format an advice considers.
struct AdviceFormat {
    std::string name;  ///< "fp32", "tf32", "amp-fp16", "amp-bf16", "fp8"
    ArmSpec arm;       ///< the format as an arm at the experiment's micro-batch
    /// Why it cannot train here: the device's words, or the spec's validation where the
    /// model cannot take it (fp8 on a model file); empty when it can.
    std::string unsupported;
    /// The unsupported reason is the model's (validation), not the device's: the advice
    /// lists it without training anything.
    bool not_for_model = false;
};

/// The formats in order: fp32, tf32 (CUDA with TF32 units only), amp-fp16, amp-bf16,
/// fp8; each with why it cannot train here, where it cannot.
std::vector<AdviceFormat> adviceFormats(const ExperimentSpec& spec, const AdviceDevice& device);

/// The format an arm trains in ("tf32" for an fp32 arm with TF32 allowed).
std::string formatOf(const ArmSpec& arm);

/// The name a max-batch search of a format is recorded under: the format, and
/// "-ckpt" with checkpointing.
std::string searchName(const std::string& format, bool checkpointing);

/// Why `arm` cannot train the spec's model (its validation's message for the arm, e.g.
/// checkpointing on a cnn); empty when it can.
std::string armProblem(const ExperimentSpec& spec, const ArmSpec& arm);

/// The largest micro-batch one format trained at (its max-batch search).
struct FormatCapacity {
    std::string format;
    bool checkpointing = false;
    int64_t safe_batch = 0;  ///< the search's max less its margin; 0: nothing fit
    bool reached_upper_bound = false;
    std::string error;  ///< the search stopped on a failure that is not a memory limit
};

/// Why a candidate is in the advice.
enum class CandidateRole {
    Baseline,       ///< fp32 at the user's batch: what every figure is against
    UserBatch,      ///< the format at the user's batch, the learning rate unchanged
    LargestBatch,   ///< the format at the largest batch that fits, LR by the rule
    Checkpointing,  ///< checkpointing reaches the user's batch where the format alone fell short
    Accumulation,   ///< accumulation reaches the user's batch where no micro-batch of it fits
    Unsupported,    ///< the format cannot train here: one failed run records why
};
std::string toString(CandidateRole role);

struct AdviceCandidate {
    ArmSpec arm;  ///< named, with its micro-batch, K, checkpointing and the LR rule
    std::string format;
    CandidateRole role = CandidateRole::UserBatch;
    std::string unsupported;  ///< role Unsupported: why
};

/// A micro-batch as the advice uses it: a search's safe batch rounded down to a
/// multiple of 8 from 16 up (what tensor cores and allocators like best).
int64_t roundedBatch(int64_t batch);

/// The advice's arms: the baseline (fp32 at the user's batch, the spec's micro-batch,
/// through checkpointing or accumulation where it does not fit), then per supported
/// format its setting at the user's batch and at the largest batch that fits, and where
/// that is short of the user's batch, checkpointing (where `capacities` holds its
/// search) and accumulation; then the formats the device cannot train, at the user's
/// batch. A format its model cannot take is left out (adviceFormats names it). `rule`
/// scales the learning rate of a larger effective batch.
std::vector<AdviceCandidate> adviceCandidates(const ExperimentSpec& spec,
                                              const std::vector<AdviceFormat>& formats,
                                              const std::vector<FormatCapacity>& capacities,
                                              LrRule rule);

/// Whether a format whose search found `capacity` wants a search with checkpointing: it
/// does not reach the user's batch and the model can checkpoint.
bool wantsCheckpointSearch(const ExperimentSpec& spec, const AdviceFormat& format,
                           const FormatCapacity& capacity);

/// Why a pass did not train its candidate's batch: its optimizer steps held (by their
/// median) another number of samples than the `effective_batch` it was given; empty when
/// they held that, or when there are none. A training script that does not read
/// AMPBENCH_MICRO_BATCH and AMPBENCH_ACCUMULATION shows this way.
std::string batchRefused(std::vector<int64_t> samples_per_step, int64_t effective_batch);

/// A candidate's pass as the quality plan weighs it.
struct PassFigure {
    int candidate = 0;  ///< index into the advice's candidates
    double ms_per_sample = 0;
    int64_t effective_batch = 0;
    bool ok = false;  ///< the pass finished with timed steps
};

/// Optimizer steps the quality check aims for, and the fewest it trains (the verdict
/// judges from 50).
inline constexpr int64_t kQualityTargetSteps = 100;
inline constexpr int64_t kQualityLeastSteps = 60;
/// What training a quality run costs beyond its samples (evaluation, set-up), as a factor.
inline constexpr double kQualityOverhead = 1.3;

/// The quality check: the baseline and up to `leaders` candidates, each trained `seeds`
/// times on the same samples, enough for kQualityTargetSteps optimizer steps of the largest
/// effective batch among them, or as many as `seconds_left` (0: no limit) allows down to
/// kQualityLeastSteps. The candidates are taken fastest first (ties to the smaller
/// effective batch), passing over one whose check would not fit the budget beside those
/// taken (a larger batch needs more samples), so that the budget checks what it can.
struct QualityPlan {
    std::vector<int> candidates;  ///< the baseline first; empty: no check
    int64_t micro_steps = 0;      ///< of the experiment's micro-batch
    int64_t largest_batch = 0;    ///< the largest effective batch among them
    double seconds = 0;           ///< the estimate it was sized by
    /// The least any check needs (the baseline and the cheapest candidate); infinite
    /// when no candidate finished its pass.
    double least_seconds = 0;
};
QualityPlan planQuality(const std::vector<PassFigure>& passes, int baseline, int leaders, int seeds,
                        int user_batch, double seconds_left);

/// Parses a duration: "90", "90s", "5m", "1h", "1h30m", "2.5m"; nullopt for anything else
/// or a value not above zero.
std::optional<double> parseDuration(const std::string& text);

}  // namespace ampbench::config
