#pragma once
// Processes of the end-to-end tests: a command run in the background (a CLI to be
// interrupted or killed mid-run), and whether a process a test script started, named
// by its pid and start time, still runs.
#include <signal.h>
#include <sys/types.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

#include "Eventually.h"
#include "Shell.h"

namespace ampbench::test {

inline std::string fileText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// A process as a test script names it: "PID START", START being field 22 of
/// /proc/PID/stat, so that a pid the system gave to another process is not taken for it.
struct ProcessId {
    pid_t pid = 0;
    long long start = 0;
};

/// The process named in `path` ("PID START"); pid 0 while the file is not there.
inline ProcessId processIdIn(const std::string& path) {
    ProcessId p;
    std::istringstream(fileText(path)) >> p.pid >> p.start;
    return p;
}

/// Whether that process still runs: not when it is gone, a zombie, or its pid now
/// names a process started at another time.
inline bool stillRuns(const ProcessId& p) {
    const std::string stat = fileText("/proc/" + std::to_string(p.pid) + "/stat");
    const auto end = stat.rfind(')');
    if (p.pid <= 0 || end == std::string::npos || end + 2 >= stat.size()) {
        return false;
    }
    std::istringstream rest(stat.substr(end + 2));
    std::string state, field;
    rest >> state;
    for (int i = 4; i <= 22; ++i) {
        rest >> field;
    }
    return state != "Z" && std::atoll(field.c_str()) == p.start;
}

/// Kills `p` if it still runs (so a test that fails leaves nothing behind); whether it did.
inline bool killIfRunning(const ProcessId& p) {
    if (!stillRuns(p)) {
        return false;
    }
    ::kill(p.pid, SIGKILL);
    return true;
}

/// A command line run by the shell in the background, its output in FOLDER/out.txt:
/// its pid once started, its exit code once it ended. Killed when dropped unfinished.
class Background {
  public:
    Background(const std::string& command, const std::string& folder) : folder_(folder) {
        const std::string line = command + " > " + folder + "/out.txt 2>&1 & echo $! > " + folder +
                                 "/cli.pid; wait $!; echo $? > " + folder + "/code.txt";
        runner_ = std::thread([line] { shell(line); });
    }
    ~Background() {
        if (runner_.joinable()) {
            if (const pid_t p = pid(); p > 0) {
                ::kill(p, SIGKILL);
            }
            runner_.join();
        }
    }
    Background(const Background&) = delete;
    Background& operator=(const Background&) = delete;

    /// The command's pid (0 if it never started).
    pid_t pid() const {
        pid_t p = 0;
        eventually([&] {
            std::istringstream(fileText(folder_ + "/cli.pid")) >> p;
            return p > 0;
        });
        return p;
    }
    /// Waits for the command to end: its exit code.
    int wait() {
        if (runner_.joinable()) {
            runner_.join();
        }
        return std::atoi(fileText(folder_ + "/code.txt").c_str());
    }
    std::string output() const { return fileText(folder_ + "/out.txt"); }

  private:
    std::string folder_;
    std::thread runner_;
};

}  // namespace ampbench::test
