// The findings' sentences: one entry per finding code (its stable name and its sentence),
// describe() and codeName() over them, and a finding's numbers and names by key.
#include "core/analysis/Finding.h"

#include <cmath>
#include <cstddef>
#include <iterator>
#include <limits>
#include <ostream>

#include "core/analysis/Format.h"
#include "core/analysis/private/FindingWords.h"

namespace ampbench::analysis {
namespace {

using detail::baseline;
using detail::count;
using detail::finalMetric;
using detail::kSigma;
using detail::kTimes;
using detail::metricAmount;
using detail::metricGap;
using detail::metricName;
using detail::num;
using detail::plural;
using detail::scaleText;
using detail::seedList;
using detail::side;
using detail::significant;
using detail::timeToTarget;

/// Writes the sentence of a finding that carries numbers or names.
using Writer = std::string (*)(const Finding&);

/// One finding code: its stable name (for JSON) and its sentence, either fixed or
/// written from the finding's numbers. A new finding is one entry here.
struct FindingEntry {
    FindingCode code;
    const char* name;
    const char* fixed;  ///< the sentence when it has no numbers, else null
    Writer write;       ///< else what writes it
};

// In the enum's order, so a code finds its entry by its value.
constexpr FindingEntry kFindings[] = {
    // summaries: the verdict and its main reason
    {FindingCode::BaselineWithNoise, "baseline_with_noise", nullptr,
     [](const Finding& f) -> std::string {
         return "the reference; its " + count(f.value(FindingKey::Seeds)) +
                " seeds give the noise band";
     }},
    {FindingCode::BaselineWithoutNoise, "baseline_without_noise",
     "the reference; one seed, so the noise band is unknown", nullptr},
    {FindingCode::NoFinishedRun, "no_finished_run", "no finished run of this arm to judge",
     nullptr},
    {FindingCode::BecameNonFinite, "became_non_finite", "the training loss became NaN/inf",
     nullptr},
    {FindingCode::NoOverlap, "no_overlap", "no loss curve that overlaps the baseline's", nullptr},
    {FindingCode::FailedBeforeCurve, "failed_before_curve",
     "its runs failed before a curve could be compared", nullptr},
    {FindingCode::CurveNotOverlapping, "curve_not_overlapping",
     "its curve does not overlap the baseline's on samples seen", nullptr},
    {FindingCode::DivergedFromBand, "diverged_from_band", nullptr,
     [](const Finding& f) -> std::string {
         return "the loss curve ends " + num(f.value(FindingKey::Tail), 1) + " band widths " +
                side(f) + " " + baseline(f) +
                (f.value(FindingKey::FinalSignificant) != 0
                     ? ", and the final metric differs beyond the seed spread"
                     : "");
     }},
    {FindingCode::AlignedWithBaseline, "aligned_with_baseline", nullptr,
     [](const Finding& f) -> std::string {
         return "the final metric agrees with " + baseline(f) +
                "'s and the loss curve stays inside "
                "its seed band (" +
                num(f.value(FindingKey::Tail), 2) + " band widths at the end)";
     }},
    {FindingCode::WithinSeedNoise, "within_seed_noise", nullptr,
     [](const Finding& f) -> std::string {
         return "it differs from " + baseline(f) + " by about as much as " + baseline(f) +
                "'s own seeds do (" + num(f.value(FindingKey::Tail), 2) +
                " band widths at the end)";
     }},
    {FindingCode::FinalDiffersOnly, "final_differs_only",
     "the curves agree within the band but the final metric differs beyond the "
     "seed spread",
     nullptr},
    {FindingCode::OutsideBandUnclear, "outside_band_unclear", nullptr,
     [](const Finding& f) -> std::string {
         return "the curve ends " + num(f.value(FindingKey::Tail), 1) +
                " band widths away: outside the noise band, but not clearly diverged; more "
                "seeds or a longer run will tell";
     }},
    {FindingCode::DivergedFromProgress, "diverged_from_progress", nullptr,
     [](const Finding& f) -> std::string {
         return "its loss ends " + formatPercent(f.value(FindingKey::ProgressLost), 0) + " of " +
                baseline(f) + "'s whole loss drop " + side(f) +
                " it: too far apart for seed noise to explain";
     }},
    {FindingCode::NoiseUnknownSummary, "noise_unknown_summary", nullptr,
     [](const Finding& f) -> std::string {
         return "noise unknown: " + baseline(f) + " ran with one seed";
     }},
    {FindingCode::TooFewSteps, "too_few_steps", nullptr,
     [](const Finding& f) -> std::string {
         return "too few optimizer steps to judge (" + count(f.value(FindingKey::Steps)) +
                ", at least " + count(f.value(FindingKey::Min)) + " needed): run longer";
     }},
    {FindingCode::FinalWorse, "final_worse", nullptr,
     [](const Finding& f) -> std::string {
         return "a real loss of quality: the final " + metricName(f) + " is " + metricGap(f) +
                " worse than " + baseline(f) + "'s, beyond the tolerance of " +
                metricAmount(f, f.value(FindingKey::Tolerance)) +
                " (Welch p = " + num(f.value(FindingKey::WelchP), 3) + ")";
     }},
    {FindingCode::FinalBetter, "final_better", nullptr,
     [](const Finding& f) -> std::string {
         return "the final " + metricName(f) + " is " + metricGap(f) + " better than " +
                baseline(f) + "'s, beyond the tolerance of " +
                metricAmount(f, f.value(FindingKey::Tolerance)) +
                ": check that both arms ran the same recipe";
     }},
    {FindingCode::FinalUnresolved, "final_unresolved", nullptr,
     [](const Finding& f) -> std::string {
         return "the final " + metricName(f) + " differs from " + baseline(f) + "'s by " +
                metricGap(f) + ", more than the tolerance of " +
                metricAmount(f, f.value(FindingKey::Tolerance)) +
                ", but the seeds cannot tell it from noise: about " +
                count(f.value(FindingKey::SeedsNeeded)) + " seeds per arm would resolve it";
     }},
    {FindingCode::AlignedCurveOffset, "aligned_curve_offset", nullptr,
     [](const Finding& f) -> std::string {
         return "aligned (curve offset): the final " + metricName(f) + " agrees with " +
                baseline(f) + "'s within " + metricAmount(f, f.value(FindingKey::Tolerance)) +
                " while the training loss sits " + num(f.value(FindingKey::Tail), 2) +
                " band widths " + side(f) +
                " (the same final quality: a different learning rate or batch keeps a "
                "training loss apart, and with few seeds the band is narrow)";
     }},
    {FindingCode::LossScaleCollapsed, "loss_scale_collapsed", nullptr,
     [](const Finding& f) -> std::string {
         return "the loss scale collapsed (down to " + num(f.value(FindingKey::MinScale), 3) +
                ", " + count(f.value(FindingKey::LateSkips)) +
                " steps skipped after the first ones): fp16 cannot hold these gradients";
     }},
    // reasons: the numbers behind it
    {FindingCode::RunFailed, "run_failed", nullptr,
     [](const Finding& f) -> std::string {
         return "run failed \xE2\x80\x94 seed " + count(f.value(FindingKey::Seed)) + ": " +
                (f.name(FindingKey::Error).empty() ? "failed" : f.name(FindingKey::Error));
     }},
    {FindingCode::NonFiniteEvents, "non_finite_events", nullptr,
     [](const Finding& f) -> std::string {
         return plural(f.value(FindingKey::Count), "non-finite (NaN/inf) loss event") + " recorded";
     }},
    {FindingCode::SkippedSteps, "skipped_steps", nullptr,
     [](const Finding& f) -> std::string {
         std::string text = plural(f.value(FindingKey::Skipped), "skipped step") + " (" +
                            f.name(FindingKey::Where) + ")";
         if (f.value(FindingKey::Late) == 0) {
             text += ", all in the first 10% of steps while the scaler calibrated: normal";
         } else {
             text += "; longest run " + count(f.value(FindingKey::LongestRun)) + " from step " +
                     count(f.value(FindingKey::LongestStart));
         }
         return text;
     }},
    {FindingCode::LossScaleRange, "loss_scale_range", nullptr,
     [](const Finding& f) -> std::string {
         return "loss scale: minimum " + scaleText(f.value(FindingKey::Min)) + ", at the end " +
                scaleText(f.value(FindingKey::Final));
     }},
    {FindingCode::OverflowOrigin, "overflow_origin", nullptr,
     [](const Finding& f) -> std::string {
         std::string text = f.name(FindingKey::Where) == "loss"
                                ? "overflow first in the loss"
                                : "overflow first in `" + f.name(FindingKey::Name) + "` " +
                                      f.name(FindingKey::Where);
         text += " (" + f.name(FindingKey::Dtype) + ") at step " +
                 count(f.value(FindingKey::Step)) + ", loss scale " +
                 scaleText(f.value(FindingKey::LossScale)) + " (seed " +
                 count(f.value(FindingKey::Seed));
         if (f.value(FindingKey::Located) > 1) {
             text += "; " + count(f.value(FindingKey::Count)) + " of " +
                     count(f.value(FindingKey::Located)) + " replayed non-finite steps broke there";
         }
         return text + ")";
     }},
    {FindingCode::Gains, "gains", nullptr,
     [](const Finding& f) -> std::string {
         std::string text = "speed-up " + num(f.value(FindingKey::Speedup), 2) + kTimes +
                            " in time per sample against " + baseline(f);
         if (std::isfinite(f.value(FindingKey::CiLow)) &&
             std::isfinite(f.value(FindingKey::CiHigh))) {
             text += " (95% CI " + num(f.value(FindingKey::CiLow), 2) + "\xE2\x80\x93" +
                     num(f.value(FindingKey::CiHigh), 2) +
                     (f.value(FindingKey::AcrossRuns) == 1
                          ? " across runs)"
                          : " within one run: run-to-run variation is not in it)");
         }
         if (std::isfinite(f.value(FindingKey::Memory))) {
             text += "; peak memory " + num(f.value(FindingKey::Memory), 2) + kTimes;
             if (f.value(FindingKey::ProcessMemory) == 1) {
                 text +=
                     " (of the whole process's resident set, the program's own memory "
                     "included: the runs' own is unknown, and the ratio understates "
                     "the difference)";
             }
         }
         if (std::isfinite(f.value(FindingKey::MaxBatch))) {
             text += "; max batch " + num(f.value(FindingKey::MaxBatch), 2) + kTimes;
         }
         // Packed runs (fast verdict) or an advice: the figures are each arm's pass alone.
         const std::string timing = f.name(FindingKey::Timing);
         if (timing == "graph") {
             text += "; measured with each arm alone on the GPU, in CUDA-graph mode";
             if (std::isfinite(f.value(FindingKey::EagerSpeedup))) {
                 text += " (in eager mode: speed-up " + num(f.value(FindingKey::EagerSpeedup), 2) +
                         kTimes;
                 if (std::isfinite(f.value(FindingKey::EagerMemory))) {
                     text += ", peak memory " + num(f.value(FindingKey::EagerMemory), 2) + kTimes;
                 }
                 text += ")";
             }
         } else if (timing == "eager") {
             text += "; measured with each arm alone on its device, in eager mode";
         }
         return text;
     }},
    {FindingCode::CurveInBandUnits, "curve_in_band_units", nullptr,
     [](const Finding& f) -> std::string {
         return "loss curve over the last 25% of samples: " + num(f.value(FindingKey::Tail), 2) +
                " band units (1 = the edge of " + baseline(f) + "'s mean \xC2\xB1 2" + kSigma +
                " over " + count(f.value(FindingKey::Seeds)) + " seeds), " + side(f) +
                " the baseline; whole run " + num(f.value(FindingKey::Whole), 2) + ", " +
                formatPercent(f.value(FindingKey::OutsideShare), 0) + " of points outside the band";
     }},
    {FindingCode::TrendAgreement, "trend_agreement", nullptr,
     [](const Finding& f) -> std::string {
         return "trend agreement r = " + num(f.value(FindingKey::R), 2) +
                " (correlation of the smoothed slopes)";
     }},
    {FindingCode::FinalMetric, "final_metric", nullptr, finalMetric},
    {FindingCode::NoiseUnknown, "noise_unknown", nullptr,
     [](const Finding& f) -> std::string {
         return baseline(f) +
                " ran with one finished seed, so the seed noise is unknown and the gap cannot "
                "be judged against it";
     }},
    {FindingCode::CurveRelative, "curve_relative", nullptr,
     [](const Finding& f) -> std::string {
         return "loss curve over the last 25% of samples differs by " +
                formatPercent(f.value(FindingKey::Tail)) + " on average (whole run " +
                formatPercent(f.value(FindingKey::Whole)) + ")";
     }},
    {FindingCode::Tolerance, "tolerance", nullptr,
     [](const Finding& f) -> std::string {
         return "tolerance " + metricAmount(f, f.value(FindingKey::Tolerance)) +
                " (the larger of 2" + kSigma + " of the baseline's seeds, " +
                metricAmount(f, 2 * f.value(FindingKey::BaseSd)) + ", and the margin " +
                metricAmount(f, f.value(FindingKey::Margin)) + ")";
     }},
    {FindingCode::TimeToTarget, "time_to_target", nullptr, timeToTarget},
    {FindingCode::AaCheck, "aa_check", nullptr,
     [](const Finding& f) -> std::string {
         std::string text = "A/A check: this arm is " + baseline(f) +
                            " again on other seeds, so every difference is noise. Its "
                            "speed-up " +
                            num(f.value(FindingKey::Speedup), 2) + kTimes;
         if (std::isfinite(f.value(FindingKey::CiLow)) &&
             std::isfinite(f.value(FindingKey::CiHigh))) {
             text += " (95% CI " + num(f.value(FindingKey::CiLow), 2) + "\xE2\x80\x93" +
                     num(f.value(FindingKey::CiHigh), 2) +
                     (f.value(FindingKey::AcrossRuns) == 1 ? " across runs)" : " within one run)");
         }
         return text +
                " is the timing noise of this machine; its verdict checks the verdict "
                "itself: anything but aligned or inconclusive is a false alarm";
     }},
    // next checks: what to look at
    {FindingCode::ScalerMissing, "scaler_missing",
     "Scaler missing: this fp16 arm ran with a loss scale of 1 throughout; small "
     "gradients underflow to zero in fp16. Enable dynamic loss scaling.",
     nullptr},
    {FindingCode::LossScaleCollapsing, "loss_scale_collapsing", nullptr,
     [](const Finding& f) -> std::string {
         return "Loss scale collapsing: the scale fell to " +
                scaleText(f.value(FindingKey::MinScale)) + " with " +
                count(f.value(FindingKey::LateSkips)) +
                " skipped steps after calibration. Something overflows in every step (often a "
                "norm layer, softmax or loss forced to fp16, or very large logits): keep those "
                "in fp32, clip gradients after unscaling, or try bf16.";
     }},
    {FindingCode::OutOfMemory, "out_of_memory",
     "Out of memory: lower the micro-batch, use accumulation, or enable activation "
     "checkpointing.",
     nullptr},
    {FindingCode::InputBound, "input_bound", nullptr,
     [](const Finding& f) -> std::string {
         return "Input-bound: the trainer waited for data " +
                formatPercent(f.value(FindingKey::WaitShare)) +
                " of the step time, so the data loader limits any AMP speed-up. Raise "
                "data.prefetch, or make each batch cheaper to prepare (an image folder "
                "decodes every image per batch: a smaller image_size, or the images "
                "stored once as an .npy array).";
     }},
    {FindingCode::TryChannelsLast, "try_channels_last",
     "Try channels_last for this arm: under autocast, convolutions on NHWC tensors "
     "use the tensor-core kernels directly, without layout conversions around each "
     "convolution; for ResNet-style models on a recent GPU this can nearly halve "
     "the step time. fp32 arms gain nothing.",
     nullptr},
    {FindingCode::NoSpeedup, "no_speedup", nullptr,
     [](const Finding& f) -> std::string {
         return std::string("No speed-up: this AMP arm is slower per sample. ") +
                (f.value(FindingKey::Cpu) != 0
                     ? "On CPU, bf16 autocast pays off only with native bf16 units (AMX or "
                       "AVX-512 BF16); elsewhere the casts cost more than they save. Judge "
                       "speed on the GPU."
                     : "Check that matrix dimensions and channels are multiples of 8 (tensor "
                       "cores), that the model is large enough not to be launch-bound (try "
                       "cuda_graph), and that cudnn_benchmark is on.");
     }},
    {FindingCode::LrNotRescaled, "lr_not_rescaled", nullptr,
     [](const Finding& f) -> std::string {
         return "LR not rescaled for the effective batch: K = " + count(f.value(FindingKey::K)) +
                " makes the batch " + count(f.value(FindingKey::Batch)) + " (baseline " +
                count(f.value(FindingKey::BaseBatch)) + ") at the same lr " +
                num(f.value(FindingKey::Lr), 4) +
                " with lr_rule none, so each sample moves the weights less. Use lr_rule "
                "linear or sqrt, or compare against a baseline with the same effective batch.";
     }},
    {FindingCode::TooFewUpdates, "too_few_updates", nullptr,
     [](const Finding& f) -> std::string {
         return "Too few optimizer updates: K = " + count(f.value(FindingKey::K)) + " leaves " +
                count(f.value(FindingKey::Updates)) +
                " updates per run; curves over samples seen cannot be expected to match after "
                "so few steps. Train longer before judging this arm.";
     }},
    {FindingCode::LinearLrTooLarge, "linear_lr_too_large", nullptr,
     [](const Finding& f) -> std::string {
         return "Linear LR scaling gave lr " + num(f.value(FindingKey::Lr), 4) + " (baseline " +
                num(f.value(FindingKey::BaseLr), 4) +
                "); that may be too large for this model. Try lr_rule sqrt, or a warm-up "
                "(optimizer.schedule warmup, cosine or onecycle with a warm-up fraction).";
     }},
    {FindingCode::NormLayersInFp16, "norm_layers_in_fp16",
     "Norm layers in fp16: check that BatchNorm/LayerNorm and the loss run in fp32 "
     "under autocast (a manual .half() or a custom layer casts them down).",
     nullptr},
    {FindingCode::MeasureTheNoise, "measure_the_noise",
     "Measure the noise: repeat the experiment with three seeds (--seeds 1 2 3, or "
     "the noise-band preset) so the gap can be judged against the seed spread.",
     nullptr},
    {FindingCode::AaTimingDrift, "aa_timing_drift", nullptr,
     [](const Finding& f) -> std::string {
         return "Timing drifted: the A/A arm, identical to the baseline, measured " +
                num(f.value(FindingKey::Speedup), 2) + kTimes + " (95% CI " +
                num(f.value(FindingKey::CiLow), 2) + "\xE2\x80\x93" +
                num(f.value(FindingKey::CiHigh), 2) + "), an interval without 1.00" + kTimes +
                ". Something besides precision changed the speed between runs (other load on "
                "the machine, clocks, temperature): read the other arms' speed-ups with at "
                "least this much doubt, or measure again on a quiet machine.";
     }},
    {FindingCode::AaFalseAlarm, "aa_false_alarm", nullptr,
     [](const Finding& f) -> std::string {
         return "False alarm: the A/A arm, identical to " + baseline(f) + ", was called " +
                f.name(FindingKey::Verdict) + ". The " + count(f.value(FindingKey::Seeds)) +
                " seeds of the baseline understate the noise: add seeds, or set a tolerance "
                "margin, before trusting a verdict on the other arms.";
     }},
    {FindingCode::PureFp16Control, "pure_fp16_control",
     "Negative control (pure fp16): the model itself in fp16, with no fp32 master "
     "weights, autocast or loss scaling. Updates smaller than half an fp16 step of "
     "a weight round away and norm-layer statistics accumulate in fp16; a loss of "
     "quality here is what AMP's fp32 weights prevent.",
     nullptr},
    {FindingCode::NoScaleControl, "noscale_control",
     "Negative control (fp16 without loss scaling): gradients below fp16's "
     "smallest value (about 6e-8) become zero. If this arm still matches, this "
     "model's gradients stay within fp16's range; the scaler costs little and "
     "guards models where they do not.",
     nullptr},
    {FindingCode::DeviceBusy, "device_busy", nullptr,
     [](const Finding& f) -> std::string {
         return "GPU busy " + formatPercent(f.value(FindingKey::Busy), 0) + " of " +
                (f.value(FindingKey::EagerPass) != 0 ? "an eager step, the arm alone on it"
                                                     : "the step") +
                ": its work takes " + formatMs(f.value(FindingKey::DeviceMs)) +
                " on the device when nothing keeps it waiting, of a " +
                formatMs(f.value(FindingKey::StepMs)) + " step (median over " +
                count(f.value(FindingKey::Runs)) + " runs)";
     }},
    {FindingCode::LaunchBound, "launch_bound", nullptr,
     [](const Finding& f) -> std::string {
         const bool pass = f.value(FindingKey::EagerPass) != 0;
         const std::string what = "the GPU is busy " + formatPercent(f.value(FindingKey::Busy), 0) +
                                  " of " + (pass ? "an eager step" : "the step") + " (" +
                                  formatMs(f.value(FindingKey::DeviceMs)) + " of work in a " +
                                  formatMs(f.value(FindingKey::StepMs)) + " step)";
         if (f.value(FindingKey::IsBaseline) != 0) {
             // The arm the others are judged against: no AMP is tried here, so nothing fails
             // to pay; what it means is how far the others' speed-ups can go.
             return "Launch-bound: " + what +
                    "; the rest is the GPU waiting for the host, which no precision shortens, "
                    "so the other arms' speed-ups are capped by the launches, not the "
                    "arithmetic" +
                    (f.value(FindingKey::Graph) != 0 || pass
                         ? std::string(". A larger micro-batch (or a larger model) gives the "
                                       "GPU more work.")
                         : std::string(". Try cuda_graph: true (the step as one launch) or a "
                                       "larger micro-batch."));
         }
         if (pass && f.value(FindingKey::Graph) != 0) {
             // A fast verdict: the eager pass measured it, the runs trained as graphs.
             return "Launched op by op, AMP cannot pay here: " + what +
                    "; the rest is the GPU waiting for the host. This arm trained as a CUDA "
                    "graph, which takes that wait away: its speed-up is the graph pass's (the "
                    "line above). A larger micro-batch (or a larger model) gives the GPU more "
                    "work.";
         }
         return "AMP cannot pay here: " + what +
                "; the rest is the GPU waiting for the host to launch the next kernel, "
                "which faster arithmetic cannot shorten. " +
                (f.value(FindingKey::Graph) != 0
                     ? std::string("This arm already replays its step as a CUDA graph: a larger "
                                   "micro-batch (or a larger model) gives the GPU work to do.")
                     : std::string("Try cuda_graph: true (the step as one launch) or a larger "
                                   "micro-batch."));
     }},
    {FindingCode::Fp8Saturation, "fp8_saturation", nullptr,
     [](const Finding& f) -> std::string {
         std::string text =
             "FP8 saturation first in `" + f.name(FindingKey::Name) + "` (" +
             f.name(FindingKey::Format) + ") at step " + count(f.value(FindingKey::Step)) + ": " +
             formatPercent(f.value(FindingKey::Share), 2) +
             " of its values clipped at the format's largest, scale " +
             significant(f.value(FindingKey::Scale)) + " (seed " +
             count(f.value(FindingKey::Seed)) + "); " + count(f.value(FindingKey::Saturated)) +
             " of " + count(f.value(FindingKey::Recorded)) + " recorded casts saturated.";
         return text + (f.name(FindingKey::Recipe) == "delayed"
                            ? " A tensor that grows faster than its amax history lags: a margin "
                              "(fp8_margin) or current scaling keeps it under the largest value."
                            : " Its own amax sets its scale, so this is the margin: raise "
                              "fp8_margin.");
     }},
    {FindingCode::ArmPending, "arm_pending", nullptr,
     [](const Finding& f) -> std::string {
         const std::string waiting =
             plural(f.value(FindingKey::Runs), "run") + " still to train (" +
             seedList(f.value(FindingKey::Runs), f.name(FindingKey::Seeds)) + ")";
         return f.value(FindingKey::Finished) > 0
                    ? "waits for its " + waiting + ": " + count(f.value(FindingKey::Finished)) +
                          " finished so far, and the seeds are judged together"
                    : "not trained yet: " + waiting;
     }},
    {FindingCode::ArmCancelled, "arm_cancelled", nullptr,
     [](const Finding& f) -> std::string {
         return "cancelled: none of its " + plural(f.value(FindingKey::Runs), "run") +
                " finished, so there is nothing to judge";
     }},
    {FindingCode::WaitingForBaseline, "waiting_for_baseline", nullptr,
     [](const Finding& f) -> std::string {
         return "waits for " + baseline(f) +
                ", the baseline: " + plural(f.value(FindingKey::Runs), "run") +
                " still to train (" +
                seedList(f.value(FindingKey::Runs), f.name(FindingKey::Seeds)) +
                "), and the noise band is measured across its seeds";
     }},
    {FindingCode::BaselinePending, "baseline_pending", nullptr,
     [](const Finding& f) -> std::string {
         return "the reference; " + plural(f.value(FindingKey::Runs), "run") + " still to train (" +
                seedList(f.value(FindingKey::Runs), f.name(FindingKey::Seeds)) +
                "): the noise band waits for " + (f.value(FindingKey::Runs) == 1 ? "it" : "them") +
                " (" + count(f.value(FindingKey::Finished)) + " finished so far)";
     }},
    {FindingCode::BaselineCancelled, "baseline_cancelled", nullptr,
     [](const Finding& f) -> std::string {
         return "the reference, but none of its " + plural(f.value(FindingKey::Runs), "run") +
                " finished (cancelled): there is nothing to judge the other arms against";
     }},
    {FindingCode::TimedAloneOnly, "timed_alone_only", nullptr,
     [](const Finding& f) -> std::string {
         return "timed alone only (" + count(f.value(FindingKey::Passes)) +
                (f.value(FindingKey::Passes) == 1 ? " pass" : " passes") +
                "), not trained long enough to judge its curve: its speed and memory stand, its "
                "quality is unchecked";
     }},
};

constexpr bool tableFollowsTheEnum() {
    for (size_t i = 0; i < std::size(kFindings); ++i) {
        if (static_cast<size_t>(kFindings[i].code) != i ||
            (kFindings[i].fixed == nullptr) == (kFindings[i].write == nullptr)) {
            return false;
        }
    }
    return std::size(kFindings) == static_cast<size_t>(kLastFindingCode) + 1;
}
static_assert(tableFollowsTheEnum(),
              "kFindings holds one entry per FindingCode, in the enum's order, each with "
              "either a fixed sentence or a writer");

/// Null for a value outside the enum (a cast from a number).
const FindingEntry* entryFor(FindingCode code) {
    const auto i = static_cast<size_t>(code);
    return i < std::size(kFindings) ? &kFindings[i] : nullptr;
}

}  // namespace

double Finding::value(FindingKey key) const {
    const auto it = values.find(key);
    return it == values.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
}

std::string Finding::name(FindingKey key) const {
    const auto it = names.find(key);
    return it == names.end() ? std::string() : it->second;
}

std::string describe(const Finding& f) {
    const FindingEntry* entry = entryFor(f.code);
    if (!entry) {
        return codeName(f.code);
    }
    return entry->fixed ? std::string(entry->fixed) : entry->write(f);
}

std::vector<std::string> describeAll(const std::vector<Finding>& findings) {
    std::vector<std::string> out;
    out.reserve(findings.size());
    for (const auto& f : findings) {
        out.push_back(describe(f));
    }
    return out;
}

std::string codeName(FindingCode code) {
    const FindingEntry* entry = entryFor(code);
    return entry ? entry->name : "unknown";
}

std::ostream& operator<<(std::ostream& out, const Finding& finding) {
    return out << describe(finding);
}

}  // namespace ampbench::analysis
