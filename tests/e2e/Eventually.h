#pragma once
// Waiting in the end-to-end tests: for a condition, never for a fixed time. The limit
// only turns a condition that never comes into a failure instead of a hang; it is far
// beyond what a busy two-core machine needs.
#include <chrono>
#include <thread>

namespace ampbench::test {

/// How long a test waits for something that must happen before it gives up.
inline constexpr std::chrono::seconds kPatience{120};

/// Asks `done` every `every` until it says true (then true) or `limit` has passed
/// (then false, after one last ask).
template <class Done>
bool eventually(Done&& done, std::chrono::milliseconds limit = kPatience,
                std::chrono::milliseconds every = std::chrono::milliseconds(50)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
        const bool late = std::chrono::steady_clock::now() >= until;
        if (done()) {
            return true;
        }
        if (late) {
            return false;
        }
        std::this_thread::sleep_for(every);
    }
}

}  // namespace ampbench::test
