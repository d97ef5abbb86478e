#include "cli/Detach.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cli/ExitCodes.h"
#include "cli/Terminal.h"
#include "core/util/OwnExecutable.h"

namespace ampbench::cli {

std::string ownExecutable() {
    return util::ownExecutable();
}

std::string readText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void writeAll(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        done += static_cast<size_t>(n);
    }
}

DetachedStart startDetached(int log_fd, const std::function<int(int report_fd)>& body,
                            double wait_s, const std::function<bool(const std::string&)>& done) {
    DetachedStart out;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        out.error = std::string("pipe: ") + std::strerror(errno);
        ::close(log_fd);
        return out;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t first = ::fork();
    if (first < 0) {
        out.error = std::string("fork: ") + std::strerror(errno);
        ::close(fds[0]);
        ::close(fds[1]);
        ::close(log_fd);
        return out;
    }
    if (first == 0) {
        // A session of its own (no terminal, no SIGHUP when SSH hangs up), then a
        // second fork so that it is no session leader and is adopted by init.
        ::setsid();
        if (::fork() != 0) {
            ::_exit(0);
        }
        ::close(fds[0]);
        const int null = ::open("/dev/null", O_RDONLY);
        ::dup2(null, STDIN_FILENO);
        ::dup2(log_fd, STDOUT_FILENO);
        ::dup2(log_fd, STDERR_FILENO);
        ::close(null);
        ::close(log_fd);
        std::signal(SIGHUP, SIG_IGN);
        std::signal(SIGPIPE, SIG_IGN);
        int code = kRunsFailed;
        try {
            code = body(fds[1]);
        } catch (const std::exception& e) {
            say(stderr, "ampbench-cli: %s\n", e.what());
            writeAll(fds[1], "failed " + std::to_string(kRunsFailed) + "\n");
        }
        std::fflush(stdout);
        std::fflush(stderr);
        ::_exit(code);
    }
    out.started = true;
    ::close(fds[1]);
    ::close(log_fd);
    int status = 0;
    ::waitpid(first, &status, 0);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(wait_s * 1000));
    while (!done(out.said)) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            out.timed_out = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
        if (r <= 0) {
            continue;  // a signal, or a second of silence: the deadline decides
        }
        char buf[256];
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        out.said.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    return out;
}

}  // namespace ampbench::cli
