// Client tools run without a shell, their output collected (Program.h).
#include "core/launch/Program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace ampbench::launch {

std::string findProgram(const std::string& name) {
    if (name.find('/') != std::string::npos) {
        return ::access(name.c_str(), X_OK) == 0 ? name : std::string();
    }
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    return {};
}

std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
        text.pop_back();
    }
    size_t start = 0;
    while (start < text.size() && (text[start] == '\n' || text[start] == ' ')) {
        ++start;
    }
    return text.substr(start);
}

std::vector<std::string> splitFields(const std::string& line, char sep) {
    std::vector<std::string> out;
    std::string field;
    std::stringstream in(line);
    while (std::getline(in, field, sep)) {
        out.push_back(field);
    }
    if (!line.empty() && line.back() == sep) {
        out.emplace_back();
    }
    return out;
}

std::vector<int> taskIndices(std::string text) {
    if (!text.empty() && text.front() == '[') {
        text = text.substr(1);
    }
    if (!text.empty() && text.back() == ']') {
        text.pop_back();
    }
    if (const auto percent = text.find('%'); percent != std::string::npos) {
        text = text.substr(0, percent);
    }
    std::vector<int> out;
    for (auto part : splitFields(text, ',')) {
        int step = 1;
        if (const auto colon = part.find(':'); colon != std::string::npos) {
            const std::string every = part.substr(colon + 1);
            if (every.empty() || every.size() > 7 ||
                every.find_first_not_of("0123456789") != std::string::npos) {
                return {};
            }
            step = std::max(1, std::atoi(every.c_str()));
            part = part.substr(0, colon);
        }
        const auto dash = part.find('-');
        const std::string a = part.substr(0, dash);
        const std::string b = dash == std::string::npos ? a : part.substr(dash + 1);
        if (a.empty() || b.empty() || a.find_first_not_of("0123456789") != std::string::npos ||
            b.find_first_not_of("0123456789") != std::string::npos || a.size() > 7 ||
            b.size() > 7) {
            return {};
        }
        for (int i = std::atoi(a.c_str()); i <= std::atoi(b.c_str()); i += step) {
            out.push_back(i);
        }
    }
    return out;
}

std::string ProgramResult::words() const {
    std::string text = trimmed(err);
    if (text.empty()) {
        text = trimmed(out);
    }
    if (text.empty()) {
        text = problem;
    }
    return text;
}

ProgramResult runProgram(const std::vector<std::string>& argv, double timeout_s) {
    ProgramResult result;
    if (argv.empty()) {
        result.problem = "no program given";
        return result;
    }
    int out_pipe[2], err_pipe[2], exec_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
        result.problem = std::string("pipe: ") + std::strerror(errno);
        return result;
    }
    if (::pipe2(err_pipe, O_CLOEXEC) != 0 || ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
        result.problem = std::string("pipe: ") + std::strerror(errno);
        ::close(out_pipe[0]);
        ::close(out_pipe[1]);
        return result;
    }
    std::vector<char*> args;
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_RDONLY);
        ::dup2(null, STDIN_FILENO);
        ::dup2(out_pipe[1], STDOUT_FILENO);
        ::dup2(err_pipe[1], STDERR_FILENO);
        ::signal(SIGPIPE, SIG_DFL);
        ::execvp(args[0], args.data());
        const int error = errno;
        (void)!::write(exec_pipe[1], &error, sizeof error);
        ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ::close(exec_pipe[1]);
    if (pid < 0) {
        result.problem = std::string("fork: ") + std::strerror(errno);
        ::close(out_pipe[0]);
        ::close(err_pipe[0]);
        ::close(exec_pipe[0]);
        return result;
    }
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open_fds = 2;
    bool timed_out = false;
    while (open_fds > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            timed_out = true;
            ::kill(pid, SIGKILL);
            break;
        }
        const int ready = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 500)));
        if (ready < 0 && errno != EINTR) {
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                char buf[4096];
                const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
                if (n > 0) {
                    if (sinks[i]->size() < (1 << 20)) {
                        sinks[i]->append(buf, static_cast<size_t>(n));
                    }
                } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                    ::close(fds[i].fd);
                    fds[i].fd = -1;
                    --open_fds;
                }
            }
        }
    }
    for (auto& p : fds) {
        if (p.fd >= 0) {
            ::close(p.fd);
        }
    }
    int exec_error = 0;
    const bool exec_failed = ::read(exec_pipe[0], &exec_error, sizeof exec_error) ==
                             static_cast<ssize_t>(sizeof exec_error);
    ::close(exec_pipe[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (exec_failed) {
        result.problem = "cannot run " + argv[0] + ": " + std::strerror(exec_error);
        return result;
    }
    if (timed_out) {
        result.problem = argv[0] + " did not answer within " +
                         std::to_string(static_cast<int>(timeout_s)) + " s; it was stopped";
        return result;
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

std::string shellQuote(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    return out + "'";
}

}  // namespace ampbench::launch
