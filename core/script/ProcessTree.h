#pragma once
// A training script's whole process tree, ended with its run however the run ends.
//
// The script is not started by this process but by a keeper: a small process forked
// from this one that makes itself a child subreaper (PR_SET_CHILD_SUBREAPER) and
// then starts the script. Whatever the script starts becomes the keeper's when its
// parent dies, in the script's process group or not: a child in a session of its own
// (setsid, Python's start_new_session=True), a daemon made by a double fork. The
// keeper holds one end of a pipe whose other end only this process holds; when that
// end closes (this process ends the run, or dies, kill -9 included) the keeper
// kills every process left under it, reaps them and exits. Nothing can act when
// both this process and the keeper are killed at once (SIGKILL to both, the OOM
// killer taking both): the script then ends by its parent-death signal, and what it
// started may be left.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ampbench::script {

/// A command started under a keeper.
struct KeptProcess {
    pid_t pid = -1;            ///< the command: leads a process group of its own
    pid_t keeper = -1;         ///< the keeper, this process's child
    int status_fd = -1;        ///< from the keeper: the command's wait status when it ends
    int control_fd = -1;       ///< to the keeper: closed when the run is over
    std::optional<int> ended;  ///< the command's wait status, once heard
};

/// What the command gets: `fds[i]` becomes its descriptor i (stdin, stdout, stderr,
/// then more: the record stream's pipe); the rest of this process's descriptors are
/// closed in it. `argv[0]` is looked up on the PATH of `env`.
struct KeptCommand {
    std::vector<std::string> argv;
    std::vector<std::string> env;
    std::vector<int> fds;
};

/// Starts `command` under a keeper, in a process group of its own, with SIGTERM as
/// its parent-death signal (the keeper's death). Throws std::runtime_error when the
/// keeper or the command cannot be started (a command that cannot be executed is
/// started and exits 127 saying why on its stderr).
KeptProcess startKept(const KeptCommand& command);

/// The command's wait status once it has ended (the keeper reaped it), without
/// waiting; nullopt while it runs. A keeper that died first gives a status of death
/// by SIGTERM (the command's parent-death signal).
std::optional<int> exitStatus(KeptProcess& p);

/// Ends the rest of the run's process tree: the keeper kills every process left
/// under it (the command too, if it still runs), reaps them and exits. Waits up to
/// `limit` for that; the command's wait status (as exitStatus, or death by SIGKILL
/// when it was still running). Closes the descriptors of `p`.
int endTree(KeptProcess& p, std::chrono::milliseconds limit = std::chrono::seconds(10));

}  // namespace ampbench::script
