#pragma once
// Holding a training process still (SIGSTOP) while a test sets up what must happen
// mid-run (a tail attached, a link dropped): a run of a few seconds is then surely
// still running at that point, however fast or busy the machine, so no test needs a
// run long enough to outlast its set-up. The process goes on (SIGCONT) when the hold
// ends, also when the test fails half-way.
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>

#include "Eventually.h"

namespace ampbench::test {

/// The state letter of process `pid` in /proc (R, S, T, Z, ...); '?' when it is gone.
inline char processState(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), {});
    const auto end = stat.rfind(')');
    return end == std::string::npos || end + 2 >= stat.size() ? '?' : stat[end + 2];
}

/// Waits (test::kPatience at most) until `ready()` holds or process `pid` has ended:
/// what a test needs before it holds a job still mid-run. False on timeout.
template <class F>
bool readyOrEnded(pid_t pid, F&& ready) {
    return eventually(
        [&] {
            const char state = processState(pid);
            return ready() || state == 'Z' || state == '?';
        },
        kPatience, std::chrono::milliseconds(20));
}

/// Stops `pid` and waits until it has stopped; lets it go on when released or destroyed.
class Hold {
  public:
    explicit Hold(pid_t pid) {
        if (pid > 0 && ::kill(pid, SIGSTOP) == 0) {
            pid_ = pid;
            // The signal is delivered when the process next enters the kernel: until
            // then it may still write a row. A process that has ended never stops.
            eventually([&] {
                const char state = processState(pid);
                return state == 'T' || state == 'Z' || state == '?';
            });
            held_ = processState(pid) == 'T';
        }
    }
    ~Hold() { release(); }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

    /// Whether the process is stopped (false: it was gone, or never stopped).
    bool holds() const { return held_; }
    void release() {
        if (pid_ > 0) {
            ::kill(pid_, SIGCONT);
        }
        pid_ = 0;
        held_ = false;
    }

  private:
    pid_t pid_ = 0;
    bool held_ = false;
};

}  // namespace ampbench::test
