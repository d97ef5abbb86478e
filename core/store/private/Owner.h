#pragma once
// Private to store/: which process owns a run or a search, and whether it still lives.
#include <cstdint>
#include <optional>
#include <string>

namespace ampbench::store::owner {

/// The error of a run whose owner died while it ran, and of one it queued and never
/// started: what readers show and what the next read-write open records.
inline constexpr const char* kInterruptedError =
    "the process writing this run ended without finishing it";
inline constexpr const char* kNeverStarted = "never started: the process that queued it ended";

/// This machine's name, as stored in owner_host.
std::string hostName();

/// Names one process across pid reuse: the boot id and the process's start time
/// (from /proc); empty where the system does not tell.
std::string processToken(int64_t pid);

/// This process: pid and token, computed once.
int64_t currentPid();
const std::string& currentToken();

/// True when the owner recorded for a row certainly no longer runs: it ran on this
/// machine and its pid is gone, or the pid now names another process (its start
/// time differs from the recorded token). A row of another machine is never
/// called gone (nothing here can tell). A missing pid counts as gone only when
/// `missing_pid_is_gone` (a `running` row always has one; an old `queued` row may not).
bool gone(std::optional<int64_t> pid, const std::string& host, const std::string& token,
          bool missing_pid_is_gone);

}  // namespace ampbench::store::owner
