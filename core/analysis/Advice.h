#pragma once
// An advice read back (train/Advise.h records it): each candidate's figures from its
// pass alone and its quality check (the experiment's verdict of its arm), ranked, ruled
// out where the check says so, and one recommendation with its evidence. Decisions as
// data, codes and numbers; AdviceText.cpp writes the words for the CLI, the GUI and the
// report. rankCandidates is pure over recorded figures; readAdvice reads them from an
// analysed experiment.
#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/ExperimentData.h"
#include "core/analysis/Finding.h"
#include "core/analysis/Format.h"
#include "core/config/ExperimentSpec.h"

namespace ampbench::analysis {

/// What was recorded of one candidate of an advice.
struct CandidateFigures {
    std::string arm;
    int arm_index = 0;   ///< its place among the experiment's arms: its colour in every plot
    std::string format;  ///< config::formatOf: fp32, tf32, amp-fp16, amp-bf16, fp8
    config::Precision precision = config::Precision::Fp32;
    int micro_batch = 0;
    int accumulation = 1;
    bool checkpointing = false;
    int64_t effective_batch = 0;
    double lr = kUnknown;
    config::LrRule lr_rule = config::LrRule::Linear;
    std::string unsupported;  ///< the device cannot train it: why (its pass failed at set-up)
    std::string failure;      ///< its pass failed otherwise (out of memory, NaN): why
    bool measured = false;    ///< its pass finished with timed steps
    double samples_per_s = kUnknown;  ///< 1 ÷ its pass's median time per sample
    int64_t peak_bytes = 0;
    double data_share = kUnknown;     ///< time waiting for data ÷ step time over the pass
    int64_t max_batch = 0;            ///< its format's search (with checkpointing if it has it)
    bool max_batch_at_bound = false;  ///< the search stopped at its upper bound
    // The quality check
    bool checked = false;  ///< trained in the quality check (finished or failed runs)
    Verdict verdict = Verdict::Inconclusive;
    bool noise_known = false;
    double band_units = kUnknown;  ///< the curve's end against the baseline's band, in band widths
    int64_t skipped = 0;           ///< optimizer steps the loss scaler skipped, over its runs
    int64_t late_skipped = 0;      ///< of those, after each run's first 10% (its calibration)
    int64_t steps = 0;             ///< optimizer steps over its runs
    Finding summary;               ///< the verdict's main finding
};

enum class RowStatus {
    Ranked,       ///< measured and not ruled out (checked for quality or not)
    RuledOut,     ///< its pass failed, or its quality check ruled it out
    NotMeasured,  ///< its pass did not finish (cancelled, interrupted, not reached)
    Unsupported,  ///< the device cannot train it
};

/// Why a candidate is ruled out.
enum class RuleOut { None, PassFailed, Diverged, LeftBand, SkippedSteps };

struct AdviceRow {
    CandidateFigures f;
    RowStatus status = RowStatus::NotMeasured;
    RuleOut why = RuleOut::None;
    double speed_ratio = kUnknown;   ///< samples/s ÷ the baseline's
    double memory_ratio = kUnknown;  ///< peak memory ÷ the baseline's
    /// One optimizer step of the user's effective batch at this candidate's samples/s (ms).
    double user_step_ms = kUnknown;
    int rank = 0;  ///< 1-based among the ranked rows; 0 for the others
};

/// What the advice recommends.
enum class Recommendation {
    Candidate,     ///< a checked candidate that kept fp32's curve and gains
    Unchecked,     ///< the fastest candidate, but no quality check ran (budget, cancel)
    KeepBaseline,  ///< nothing checked both kept the curve and gained: stay with the baseline
    Nothing,       ///< nothing was measured
};

/// Where the lines of the advice sit.
struct AdviceThresholds {
    double tie = 0.03;         ///< samples/s within this share of each other tie (memory decides)
    double skip_share = 0.05;  ///< skipped steps beyond this share rule a candidate out
    double band = 1.0;         ///< a curve ending beyond this many band widths left the band
    double gain = 1.05;        ///< samples/s ratio a recommendation must reach...
    double memory_gain = 0.8;  ///< ...or a memory ratio at or under this at no loss of speed
    double no_loss = 0.97;     ///< "no loss of speed"
};

struct Advice {
    int64_t experiment_id = 0;
    std::string device;
    std::string
        memory_label;        ///< the memory column: "peak allocated", "peak in tensors", "peak RSS"
    std::string baseline;    ///< the arm every ratio is against
    int64_t user_batch = 0;  ///< the batch the user trains with (the spec's micro-batch)
    /// Ranked rows first (best first), then ruled out, not measured, unsupported.
    std::vector<AdviceRow> rows;
    int recommended = -1;  ///< index into rows; -1: none
    Recommendation kind = Recommendation::Nothing;
    /// Formats the model cannot take, with why ("fp8: applies to the built-in models'…").
    std::vector<std::string> not_for_model;
    bool quality_checked = false;  ///< some candidate beside the baseline was checked
    const AdviceRow* recommendation() const {
        return recommended >= 0 ? &rows[static_cast<size_t>(recommended)] : nullptr;
    }
    const AdviceRow* baselineRow() const;
};

/// Rows from recorded figures, ranked (samples/s, then within `tie` the less memory, the
/// smaller effective batch, the name), each ruled out where its check says so, and the
/// recommendation. Pure.
Advice rankCandidates(const std::vector<CandidateFigures>& figures, const std::string& baseline,
                      int64_t user_batch, const AdviceThresholds& thresholds = {});

/// The rows on the throughput-memory front (indexes into advice.rows, by memory from the
/// least): the ranked rows with a speed and a memory that no other ranked row matches or
/// beats on both and beats on one. The chart draws the front through them.
std::vector<int> paretoFront(const Advice& advice);

/// Whether an experiment is an advice: it holds timing passes.
bool isAdvice(const ExperimentData& data);
/// Each candidate's figures from an advice's experiment and its analysis.
std::vector<CandidateFigures> adviceFigures(const ExperimentData& data,
                                            const ExperimentAnalysis& analysis);
/// The advice of an analysed experiment (rankCandidates of adviceFigures).
Advice readAdvice(const ExperimentData& data, const ExperimentAnalysis& analysis);

// The words (AdviceText.cpp).

/// The recommendation with its evidence, one sentence: "amp-bf16 at batch 512: 2.3× fp32's
/// samples/s at 0.48× its memory; curves inside fp32's seed band, 0.4 band widths".
std::string recommendationText(const Advice& advice);
/// A row's place: "1", "ruled out", "not measured", "cannot train here".
std::string statusText(const AdviceRow& row);
/// Why a row is not ranked: "diverged from fp32 (…)", the device's reason, "its pass did
/// not finish"; empty for a ranked row.
std::string reasonText(const AdviceRow& row, const std::string& baseline);
/// The same in a few words, for a chart's label: "diverged", "left the band".
std::string shortReason(const AdviceRow& row);
/// A row's quality: "aligned, 0.4 band widths", "not checked".
std::string qualityText(const AdviceRow& row);
/// The table's header and each row's cells, as text: the CLI's table and the report's.
std::vector<std::string> adviceHeader(const Advice& advice);
std::vector<std::vector<std::string>> adviceCells(const Advice& advice);
/// The columns of adviceHeader that hold numbers (right-aligned).
inline constexpr std::array<size_t, 8> kAdviceNumericColumns = {2, 3, 4, 5, 7, 8, 9, 10};
/// The table the CLI prints.
TextTable adviceTable(const Advice& advice);
/// The recommended setting as a spec `run --config` takes: the advice's experiment with
/// the baseline and the recommendation as its arms, three seeds, evaluated as the user's.
config::ExperimentSpec recommendedSpec(const Advice& advice, const config::ExperimentSpec& spec);
/// The lines that put the recommendation into a PyTorch training loop.
std::vector<std::string> pytorchLines(const Advice& advice, const config::ExperimentSpec& spec);
/// The advice as JSON (AdviceJson.cpp): every row's figures and place, the sentence, the
/// lines and the recommended spec; the report's "advice".
nlohmann::json adviceJson(const Advice& advice, const config::ExperimentSpec& spec);

}  // namespace ampbench::analysis
