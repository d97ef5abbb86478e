#include "core/train/Records.h"

#include <stdexcept>

namespace ampbench::train {

std::string toString(EventKind kind) {
    switch (kind) {
        case EventKind::SkippedStep:
            return "skipped_step";
        case EventKind::OutOfMemory:
            return "out_of_memory";
        case EventKind::NonFinite:
            return "non_finite";
        case EventKind::Warning:
            return "warning";
        case EventKind::Info:
            return "info";
    }
    throw std::invalid_argument("unknown event kind value " +
                                std::to_string(static_cast<int>(kind)));
}

EventKind eventKindFromString(const std::string& text) {
    if (text == "skipped_step")
        return EventKind::SkippedStep;
    if (text == "out_of_memory")
        return EventKind::OutOfMemory;
    if (text == "non_finite")
        return EventKind::NonFinite;
    if (text == "warning")
        return EventKind::Warning;
    if (text == "info")
        return EventKind::Info;
    throw std::invalid_argument("unknown event kind \"" + text +
                                "\" (expected skipped_step, out_of_memory, non_finite, "
                                "warning or info)");
}

std::string toString(RunStatus status) {
    switch (status) {
        case RunStatus::Queued:
            return "queued";
        case RunStatus::Running:
            return "running";
        case RunStatus::Finished:
            return "finished";
        case RunStatus::Failed:
            return "failed";
        case RunStatus::Cancelled:
            return "cancelled";
        case RunStatus::Interrupted:
            return "interrupted";
    }
    throw std::invalid_argument("unknown run status value " +
                                std::to_string(static_cast<int>(status)));
}

RunStatus runStatusFromString(const std::string& text) {
    if (text == "queued")
        return RunStatus::Queued;
    if (text == "running")
        return RunStatus::Running;
    if (text == "finished")
        return RunStatus::Finished;
    if (text == "failed")
        return RunStatus::Failed;
    if (text == "cancelled")
        return RunStatus::Cancelled;
    if (text == "interrupted")
        return RunStatus::Interrupted;
    throw std::invalid_argument("unknown run status \"" + text +
                                "\" (expected queued, running, finished, failed, cancelled or "
                                "interrupted)");
}

}  // namespace ampbench::train
