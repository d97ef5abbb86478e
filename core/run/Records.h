#pragma once
// Plain records the trainer emits and the store persists. No LibTorch here:
// the store, the GUI and the analysis read these without Torch's headers.
#include <cstdint>
#include <string>

namespace ampbench::run {

/// One optimizer step (K micro-batches when the arm accumulates).
struct StepRecord {
    int64_t step = 0;     ///< optimizer step, 1-based
    int64_t samples = 0;  ///< training samples seen after this step
    double loss = 0.0;    ///< mean training loss over the step's micro-batches (unscaled)
    double lr = 0.0;
    double loss_scale = 1.0;    ///< scale in effect for this step's backward (1 when no scaler)
    bool skipped = false;       ///< optimizer step skipped because gradients held inf/NaN
    double grad_norm = 0.0;     ///< L2 norm of the unscaled gradients (NaN/inf when skipped)
    double step_ms = 0.0;       ///< device time of the whole step (all micro-batches)
    double data_wait_ms = 0.0;  ///< time the trainer waited for the prefetcher
    bool timed = true;          ///< false for warm-up steps, which medians exclude
    int64_t mem_allocated = 0;  ///< bytes: CUDA allocator allocated, or resident set on CPU
    int64_t mem_reserved = 0;   ///< bytes: CUDA allocator reserved, or resident set on CPU
    int64_t mem_peak = 0;       ///< bytes: peak allocated since run start (CUDA) or peak RSS
    double wall_s = 0.0;        ///< seconds since the run started
};

struct EvalRecord {
    int64_t step = 0;
    int64_t samples = 0;
    double val_loss = 0.0;
    double val_accuracy = 0.0;  ///< fraction in [0,1]; next-token accuracy for language models
    double wall_s = 0.0;
};

/// DeviceBusy: the device time of one step's work with nothing keeping the device
/// waiting (value, ms): against the step's time, how busy the device is.
/// AloneTiming: a short timed pass of the run's arm alone on its device, before runs
/// packed on it trained (spec fast_verdict): message = the pass as JSON (mode "graph"
/// or "eager", each timed step's ms and samples, peak memory), value = its median ms
/// per sample. The speed and memory figures of packed runs come from these.
enum class EventKind {
    SkippedStep,
    OutOfMemory,
    NonFinite,
    Warning,
    Info,
    DeviceBusy,
    AloneTiming
};

struct EventRecord {
    int64_t step = 0;
    EventKind kind = EventKind::Info;
    std::string message;
    double value = 0.0;  ///< e.g. the loss scale after backoff
};

enum class RunStatus { Queued, Running, Finished, Failed, Cancelled, Interrupted };

/// Why a run did not finish, as data: the verdict and the GUI decide on this, never
/// on the error text. None for a run that finished (or has not ended).
enum class FailureKind {
    None,
    OutOfMemory,  ///< the device (or the host allocator) ran out of memory
    NonFinite,    ///< the training loss became NaN/inf
    Data,         ///< the dataset is missing or unreadable
    Setup,        ///< the arm cannot run as asked here (precision, model, device)
    Runtime,      ///< any other error while training
    Recording,    ///< the database could not record the run
    Cancelled,    ///< stopped by the user
    Interrupted,  ///< the process ended without finishing the run
};

std::string toString(EventKind kind);
EventKind eventKindFromString(const std::string& text);
std::string toString(RunStatus status);
RunStatus runStatusFromString(const std::string& text);
std::string toString(FailureKind kind);  ///< "" for None, "out_of_memory", "non_finite", ...
/// The kind named by `text`; None for "" or a name this build does not know.
FailureKind failureKindFromString(const std::string& text);

}  // namespace ampbench::run
