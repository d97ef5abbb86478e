#include "core/run/Records.h"

#include <stdexcept>

namespace ampbench::run {
namespace {

/// One table of names per enumeration; text in the database and in exports.
template <class E>
struct Name {
    E value;
    const char* text;
};

constexpr Name<EventKind> kEventKinds[] = {{EventKind::SkippedStep, "skipped_step"},
                                           {EventKind::OutOfMemory, "out_of_memory"},
                                           {EventKind::NonFinite, "non_finite"},
                                           {EventKind::Warning, "warning"},
                                           {EventKind::Info, "info"},
                                           {EventKind::DeviceBusy, "device_busy"},
                                           {EventKind::AloneTiming, "alone_timing"}};

constexpr Name<RunStatus> kRunStatuses[] = {
    {RunStatus::Queued, "queued"},       {RunStatus::Running, "running"},
    {RunStatus::Finished, "finished"},   {RunStatus::Failed, "failed"},
    {RunStatus::Cancelled, "cancelled"}, {RunStatus::Interrupted, "interrupted"}};

constexpr Name<FailureKind> kFailureKinds[] = {{FailureKind::None, ""},
                                               {FailureKind::OutOfMemory, "out_of_memory"},
                                               {FailureKind::NonFinite, "non_finite"},
                                               {FailureKind::Data, "data"},
                                               {FailureKind::Setup, "setup"},
                                               {FailureKind::Runtime, "runtime"},
                                               {FailureKind::Recording, "recording"},
                                               {FailureKind::Cancelled, "cancelled"},
                                               {FailureKind::Interrupted, "interrupted"}};

template <class E, size_t N>
const char* nameOf(const Name<E> (&table)[N], E value, const char* what) {
    for (const auto& n : table) {
        if (n.value == value) {
            return n.text;
        }
    }
    throw std::invalid_argument(std::string("unknown ") + what + " value " +
                                std::to_string(static_cast<int>(value)));
}

template <class E, size_t N>
const E* valueOf(const Name<E> (&table)[N], const std::string& text) {
    for (const auto& n : table) {
        if (text == n.text) {
            return &n.value;
        }
    }
    return nullptr;
}

template <class E, size_t N>
[[noreturn]] void unknown(const Name<E> (&table)[N], const std::string& text, const char* what) {
    std::string names;
    for (const auto& n : table) {
        names += std::string(names.empty() ? "" : ", ") + n.text;
    }
    throw std::invalid_argument(std::string("unknown ") + what + " \"" + text + "\" (expected " +
                                names + ")");
}

}  // namespace

std::string toString(EventKind kind) {
    return nameOf(kEventKinds, kind, "event kind");
}

EventKind eventKindFromString(const std::string& text) {
    if (const EventKind* kind = valueOf(kEventKinds, text)) {
        return *kind;
    }
    unknown(kEventKinds, text, "event kind");
}

std::string toString(RunStatus status) {
    return nameOf(kRunStatuses, status, "run status");
}

RunStatus runStatusFromString(const std::string& text) {
    if (const RunStatus* status = valueOf(kRunStatuses, text)) {
        return *status;
    }
    unknown(kRunStatuses, text, "run status");
}

std::string toString(FailureKind kind) {
    return nameOf(kFailureKinds, kind, "failure kind");
}

FailureKind failureKindFromString(const std::string& text) {
    const FailureKind* kind = valueOf(kFailureKinds, text);
    return kind ? *kind : FailureKind::None;
}

}  // namespace ampbench::run
