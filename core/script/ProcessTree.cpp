// The keeper of a training script's process tree (ProcessTree.h).
#include "core/script/ProcessTree.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace ampbench::script {
namespace {

using Clock = std::chrono::steady_clock;

/// What the keeper tells this process on its status pipe, one record a write (less
/// than PIPE_BUF, so a write is never split).
struct Report {
    enum What : int32_t { Started = 1, CannotStart = 2, Ended = 3 };
    int32_t what = 0;
    int32_t value = 0;  ///< Started: the command's pid; CannotStart: errno; Ended: its wait status
};

// --- The keeper: a fork of a process that may have threads, so from fork to its exit
// only async-signal-safe calls (no allocation, no locks, no stdio). ---

void say(int fd, const Report& r) {
    const char* p = reinterpret_cast<const char*>(&r);
    size_t left = sizeof r;
    while (left > 0) {
        const ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
}

void closeFrom(int first) {
    if (syscall(SYS_close_range, first, ~0U, 0) != 0) {
        for (int fd = first; fd < 4096; ++fd) {
            close(fd);
        }
    }
}

/// `value` in decimal at `out`; the end of what was written.
char* decimal(char* out, long value) {
    char digits[24];
    int n = 0;
    do {
        digits[n++] = static_cast<char>('0' + value % 10);
        value /= 10;
    } while (value > 0);
    while (n > 0) {
        *out++ = digits[--n];
    }
    return out;
}

/// The parent of process `pid` from /proc/PID/stat ("PID (COMM) S PPID ..."); 0 when
/// it cannot be read (the process is gone).
pid_t parentOf(pid_t pid) {
    char path[40] = "/proc/";
    char* end = decimal(path + 6, pid);
    std::memcpy(end, "/stat", 6);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    char text[512];
    const ssize_t n = read(fd, text, sizeof text);
    close(fd);
    if (n <= 0) {
        return 0;
    }
    ssize_t at = n - 1;
    while (at >= 0 && text[at] != ')') {  // the name may hold ')' too: the last one ends it
        --at;
    }
    at += 4;  // past ") S "
    long parent = 0;
    for (; at < n && text[at] >= '0' && text[at] <= '9'; ++at) {
        parent = parent * 10 + (text[at] - '0');
    }
    return static_cast<pid_t>(parent);
}

/// SIGKILL to every process whose parent is `parent`, as /proc lists them now.
void killChildrenOf(pid_t parent) {
    const int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        return;
    }
    alignas(8) char buf[8192];
    for (;;) {
        const long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
        if (n <= 0) {
            break;
        }
        for (long at = 0; at < n;) {
            // struct linux_dirent64: inode, offset, record length, type, name.
            unsigned short length = 0;
            std::memcpy(&length, buf + at + 16, sizeof length);
            const char* name = buf + at + 19;
            at += length;
            long pid = 0;
            const char* c = name;
            for (; *c >= '0' && *c <= '9'; ++c) {
                pid = pid * 10 + (*c - '0');
            }
            if (*c == '\0' && pid > 0 && parentOf(static_cast<pid_t>(pid)) == parent) {
                kill(static_cast<pid_t>(pid), SIGKILL);
            }
        }
    }
    close(dir);
}

/// The keeper's life. `fds`: the command's descriptors, in order; `status` and
/// `control`: its ends of the two pipes to the program that started it.
[[noreturn]] void keep(const int* fds, int count, int status, int control, char* const* argv,
                       char* const* envp) {
    setpgid(0, 0);  // out of the terminal's foreground group: Ctrl-C is the program's to pass on
    // Only the program that started it ends it (by closing the control pipe), or
    // SIGKILL; the command gets the default dispositions back before it starts.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) {
        signal(sig, SIG_IGN);
    }
    // A kernel without subreapers (before 3.4) leaves orphans to init: then only the
    // command's process group is ended.
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    // The command's descriptors go to 0 .. count-1, the pipes after them, nothing else
    // stays open: above every descriptor in use first, so that none overwrites another.
    int top = std::max(status, control);
    for (int i = 0; i < count; ++i) {
        top = std::max(top, fds[i]);
    }
    int high[16];
    for (int i = 0; i < count; ++i) {
        high[i] = fcntl(fds[i], F_DUPFD, top + 1);
    }
    const int status_high = fcntl(status, F_DUPFD, top + 1);
    const int control_high = fcntl(control, F_DUPFD, top + 1);
    for (int i = 0; i < count; ++i) {
        dup2(high[i], i);
    }
    const int status_fd = count, control_fd = count + 1;
    dup2(status_high, status_fd);
    dup2(control_high, control_fd);
    closeFrom(count + 2);

    const pid_t keeper = getpid();
    const pid_t command = fork();
    if (command == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);  // should the keeper die (SIGKILL)
        if (getppid() != keeper) {
            _exit(127);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int sig :
             {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGXFSZ}) {
            signal(sig, SIG_DFL);
        }
        closeFrom(count);
        execvpe(argv[0], argv, envp);
        const char* why = std::strerror(errno);
        const char* text = "cannot start ";
        (void)!write(STDERR_FILENO, text, std::strlen(text));
        (void)!write(STDERR_FILENO, argv[0], std::strlen(argv[0]));
        (void)!write(STDERR_FILENO, ": ", 2);
        (void)!write(STDERR_FILENO, why, std::strlen(why));
        (void)!write(STDERR_FILENO, "\n", 1);
        _exit(127);
    }
    if (command < 0) {
        say(status_fd, {Report::CannotStart, errno});
        _exit(1);
    }
    setpgid(command, command);  // also here, so a signal sent at once finds the group
    // The command's pipes are its own: the program sees their end when it (and what
    // it started) closes them, never later because of the keeper.
    const int null = open("/dev/null", O_RDWR);
    for (int i = 0; i < count; ++i) {
        if (i < 3 && null >= 0) {
            dup2(null, i);
        } else if (i >= 3) {
            close(i);
        }
    }
    if (null >= 3 && null != status_fd && null != control_fd) {
        close(null);
    }
    say(status_fd, {Report::Started, command});

    bool ended = false;
    auto reaped = [&](pid_t pid, int wait_status) {
        if (pid == command && !ended) {
            ended = true;
            say(status_fd, {Report::Ended, wait_status});
        }
    };
    for (;;) {
        pollfd p{control_fd, POLLIN, 0};
        const int ready = poll(&p, 1, 100);
        int wait_status = 0;
        for (pid_t pid; (pid = waitpid(-1, &wait_status, WNOHANG)) > 0;) {
            reaped(pid, wait_status);  // orphans that ended on their own are reaped too
        }
        if (ready > 0) {
            char c;
            const ssize_t n = read(control_fd, &c, 1);
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
                break;  // the run is over, or the program that started it is gone
            }
        }
    }
    if (!ended) {
        kill(-command, SIGKILL);
        kill(command, SIGKILL);
    }
    // Every process left under the keeper, until none is: one killed hands its own
    // children to the keeper, which kills them in the next round.
    for (;;) {
        killChildrenOf(keeper);
        int wait_status = 0;
        const pid_t pid = waitpid(-1, &wait_status, 0);
        if (pid < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;  // no child left
        }
        reaped(pid, wait_status);
    }
    _exit(0);
}

bool readReport(int fd, Report& r, bool& closed) {
    closed = false;
    for (;;) {
        const ssize_t n = read(fd, &r, sizeof r);
        if (n == static_cast<ssize_t>(sizeof r)) {
            return true;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        closed = n == 0;
        return false;
    }
}

}  // namespace

KeptProcess startKept(const KeptCommand& command) {
    if (command.argv.empty() || command.fds.size() > 16) {
        throw std::runtime_error("cannot start the script: no command, or too many descriptors");
    }
    int status[2];
    int control[2];
    if (pipe2(status, O_CLOEXEC) != 0) {
        throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
    }
    if (pipe2(control, O_CLOEXEC) != 0) {
        const int e = errno;
        close(status[0]);
        close(status[1]);
        throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(e));
    }
    std::vector<char*> args;
    for (const auto& a : command.argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& e : command.env) {
        envp.push_back(const_cast<char*>(e.c_str()));
    }
    envp.push_back(nullptr);
    const pid_t keeper = fork();
    if (keeper == 0) {
        keep(command.fds.data(), static_cast<int>(command.fds.size()), status[1], control[0],
             args.data(), envp.data());
    }
    const int fork_errno = errno;
    close(status[1]);
    close(control[0]);
    if (keeper < 0) {
        close(status[0]);
        close(control[1]);
        throw std::runtime_error(std::string("cannot start the script: ") +
                                 std::strerror(fork_errno));
    }
    Report r;
    bool closed = false;
    const bool heard = readReport(status[0], r, closed);
    if (!heard || r.what != Report::Started) {
        close(control[1]);
        close(status[0]);
        while (waitpid(keeper, nullptr, 0) < 0 && errno == EINTR) {
        }
        throw std::runtime_error(std::string("cannot start the script: ") +
                                 (heard && r.what == Report::CannotStart
                                      ? std::strerror(r.value)
                                      : "the process that starts it ended"));
    }
    fcntl(status[0], F_SETFL, fcntl(status[0], F_GETFL) | O_NONBLOCK);
    KeptProcess p;
    p.pid = r.value;
    p.keeper = keeper;
    p.status_fd = status[0];
    p.control_fd = control[1];
    return p;
}

std::optional<int> exitStatus(KeptProcess& p) {
    if (p.ended) {
        return p.ended;
    }
    if (p.status_fd < 0) {
        return std::nullopt;
    }
    Report r;
    bool closed = false;
    while (readReport(p.status_fd, r, closed)) {
        if (r.what == Report::Ended) {
            p.ended = r.value;
            return p.ended;
        }
    }
    if (closed) {
        p.ended = SIGTERM;  // the keeper died first: the command had its parent-death signal
    }
    return p.ended;
}

int endTree(KeptProcess& p, std::chrono::milliseconds limit) {
    if (p.control_fd >= 0) {
        close(p.control_fd);  // the keeper ends what is left and exits
        p.control_fd = -1;
    }
    const auto until = Clock::now() + limit;
    bool keeper_done = false;
    while (p.status_fd >= 0 && Clock::now() < until) {
        Report r;
        bool closed = false;
        while (readReport(p.status_fd, r, closed)) {
            if (r.what == Report::Ended && !p.ended) {
                p.ended = r.value;
            }
        }
        if (closed) {
            keeper_done = true;
            break;
        }
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
        pollfd f{p.status_fd, POLLIN, 0};
        poll(&f, 1, static_cast<int>(std::clamp<int64_t>(left.count(), 1, 100)));
    }
    if (p.status_fd >= 0) {
        close(p.status_fd);
        p.status_fd = -1;
    }
    if (p.keeper > 0) {
        // Closing its status pipe is the keeper's last act: reaped at once then. One
        // still at work past the limit (a process that does not die) is left to end.
        while (waitpid(p.keeper, nullptr, keeper_done ? 0 : WNOHANG) < 0 && errno == EINTR) {
        }
        p.keeper = -1;
    }
    if (!p.ended) {
        p.ended = SIGKILL;
    }
    return *p.ended;
}

}  // namespace ampbench::script
