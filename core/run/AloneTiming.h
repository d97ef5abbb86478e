#pragma once
// An arm timed alone on its device (spec fast_verdict): before runs packed on a GPU
// train, each arm makes a short pass by itself, in eager and in CUDA-graph mode, and
// the speed and memory figures of the packed runs come from these passes, since
// runs sharing a GPU do not measure the GPU's alone. The trainer writes a pass as an
// alone_timing event on the arm's first run; the analysis reads it back. This file
// is the one definition of that event's message.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/run/Records.h"

namespace ampbench::run {

struct AloneTiming {
    std::string mode;  ///< "graph" or "eager"
    int64_t warmup_steps = 0;
    /// Each timed optimizer step: its time (ms) and the samples it trained.
    std::vector<double> step_ms;
    std::vector<int64_t> step_samples;
    int64_t peak_allocated = 0;  ///< bytes: the pass's peak (CUDA allocator allocated)
    int64_t peak_reserved = 0;   ///< bytes: what the allocator held at most
    /// One step's device work with nothing keeping the device waiting (ms), when
    /// measured: against the step's time, how busy the device is (NaN: not measured).
    double device_ms = std::numeric_limits<double>::quiet_NaN();
    /// Median time per sample over the timed steps (ms); NaN when none were timed.
    double msPerSample() const;
    /// Median time of a timed step (ms); NaN when none were timed.
    double medianStepMs() const;
};

/// The pass as the event the trainer records (step 0, value = msPerSample()).
EventRecord aloneTimingEvent(const AloneTiming& timing);
/// The pass an alone_timing event holds; nullopt for another kind of event or a
/// message that is not such a pass (a damaged or foreign row says nothing).
std::optional<AloneTiming> aloneTimingOf(const EventRecord& event);

}  // namespace ampbench::run
