#pragma once
// A process that outlives the terminal or SSH session that started it (a launched
// job, a Slurm collector): its own session, adopted by init (setsid and a second
// fork), stdin from /dev/null, its output to a log. It reports its way up on a
// pipe ("pid N", "planned ID", "failed CODE"), which the launcher reads.
#include <functional>
#include <string>

namespace ampbench::cli {

/// This program's own path (/proc/self/exe); empty when it cannot be read.
std::string ownExecutable();
/// A file's whole text ("" when it cannot be read).
std::string readText(const std::string& path);
/// Writes all of `text` to `fd`, retrying after signals; gives up on an error.
void writeAll(int fd, const std::string& text);

struct DetachedStart {
    bool started = false;    ///< false: no pipe or no fork (`error` says which)
    std::string error;       ///< why it could not be started
    std::string said;        ///< what it wrote on the pipe, in order
    bool timed_out = false;  ///< `wait_s` passed before `done(said)`
};

/// Runs `body` detached, with stdout and stderr to `log_fd` (closed here after the
/// fork) and the pipe's write end as its argument; its return is the process's exit
/// code, and an exception escaping it is written to the log and reported as "failed
/// 1". Reads the pipe until `done(said)` holds, the pipe closes (the process ended
/// or closed it) or `wait_s` seconds pass.
DetachedStart startDetached(int log_fd, const std::function<int(int report_fd)>& body,
                            double wait_s, const std::function<bool(const std::string&)>& done);

}  // namespace ampbench::cli
