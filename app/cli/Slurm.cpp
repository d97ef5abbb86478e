// Slurm's client tools, run without a shell, and what they say of a job array (Slurm.h).
#include "cli/Slurm.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ampbench::cli::slurm {

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

namespace {

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

std::vector<std::string> split(const std::string& line, char sep) {
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

/// "3", "3-5", "[3-5,7]", "3-9%2" as the indices they name; empty for anything else.
std::vector<int> indices(std::string text) {
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
    for (const auto& part : split(text, ',')) {
        const auto dash = part.find('-');
        const std::string a = part.substr(0, dash);
        const std::string b = dash == std::string::npos ? a : part.substr(dash + 1);
        if (a.empty() || b.empty() || a.find_first_not_of("0123456789") != std::string::npos ||
            b.find_first_not_of("0123456789") != std::string::npos || a.size() > 7 ||
            b.size() > 7) {
            return {};
        }
        for (int i = std::atoi(a.c_str()); i <= std::atoi(b.c_str()); ++i) {
            out.push_back(i);
        }
    }
    return out;
}

}  // namespace

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

bool terminalState(const std::string& state) {
    static const std::set<std::string> terminal = {
        "COMPLETED", "FAILED",   "TIMEOUT",   "CANCELLED", "NODE_FAIL",   "OUT_OF_MEMORY",
        "BOOT_FAIL", "DEADLINE", "PREEMPTED", "REVOKED",   "SPECIAL_EXIT"};
    return terminal.count(state) > 0;
}

std::map<int, TaskState> parseSqueue(const std::string& text, const std::string& job_id) {
    std::map<int, TaskState> out;
    std::stringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        const auto f = split(trimmed(line), '|');
        if (f.size() < 7 || f[0].rfind(job_id + "_", 0) != 0) {
            continue;
        }
        TaskState t;
        t.state = f[2];
        t.reason = f[3];
        t.node = f[4];
        t.time_limit = f[5];
        t.time_used = f[6];
        t.source = "squeue";
        for (int i : indices(f[1])) {
            out[i] = t;
        }
    }
    return out;
}

std::map<int, TaskState> parseSacct(const std::string& text, const std::string& job_id) {
    std::map<int, TaskState> out;
    std::stringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        const auto f = split(trimmed(line), '|');
        if (f.size() < 7 || f[0].rfind(job_id + "_", 0) != 0) {
            continue;
        }
        TaskState t;
        t.state = f[1].substr(0, f[1].find(' '));  // "CANCELLED by 0"
        t.reason = f[2];
        t.node = f[3];
        t.time_limit = f[4];
        t.time_used = f[5];
        t.exit_code = f[6];
        t.source = "sacct";
        for (int i : indices(f[0].substr(job_id.size() + 1))) {
            out[i] = t;
        }
    }
    return out;
}

ArrayView queryArray(const std::string& job_id, bool ask_sacct, bool* accounting) {
    ArrayView view;
    const ProgramResult q =
        runProgram({"squeue", "-h", "-r", "-t", "all", "-j", job_id, "-o", "%i|%K|%T|%r|%N|%l|%M"});
    if (q.ok()) {
        view.squeue_ok = true;
        view.tasks = parseSqueue(q.out, job_id);
    } else if (q.err.find("Invalid job id") != std::string::npos) {
        view.squeue_ok = true;  // the controller has forgotten the job: it ended long ago
    } else {
        view.problem = "squeue: " + q.words();
    }
    if (ask_sacct && (accounting == nullptr || *accounting)) {
        const ProgramResult a =
            runProgram({"sacct", "-n", "-P", "-X", "-j", job_id, "-o",
                        "JobID,State,Reason,NodeList,Timelimit,Elapsed,ExitCode"});
        if (a.ok()) {
            for (auto& [index, task] : parseSacct(a.out, job_id)) {
                auto it = view.tasks.find(index);
                if (it == view.tasks.end()) {
                    view.tasks[index] = task;
                } else if (!task.exit_code.empty()) {
                    it->second.exit_code = task.exit_code;
                }
            }
        } else if (a.words().find("accounting storage is disabled") != std::string::npos ||
                   a.words().find("not configured") != std::string::npos) {
            view.accounting = false;
            if (accounting != nullptr) {
                *accounting = false;
            }
        }
    }
    return view;
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

std::string taskListFile(const std::string& dir) {
    return dir + "/tasks.json";
}
std::string batchScript(const std::string& dir) {
    return dir + "/array.sh";
}
std::string taskOutput(const std::string& dir, int task) {
    return dir + "/task-" + std::to_string(task) + ".out";
}
std::string streamFile(const std::string& dir, int task, int attempt) {
    return dir + "/task-" + std::to_string(task) + ".attempt-" + std::to_string(attempt) + ".jsonl";
}

std::string taskListText(const TaskList& list) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& task : list.tasks) {
        nlohmann::json runs = nlohmann::json::array();
        for (const auto& r : task) {
            runs.push_back({{"run_id", r.run_id},
                            {"arm", r.arm},
                            {"arm_index", r.arm_index},
                            {"seed", r.seed},
                            {"arm_json", r.arm_json},
                            {"planned_steps", r.planned_steps},
                            {"inputs_json", r.inputs_json}});
        }
        tasks.push_back({{"runs", runs}});
    }
    return nlohmann::json{{"experiment_id", list.experiment_id},
                          {"experiment_name", list.experiment_name},
                          {"spec_json", list.spec_json},
                          {"time_limit", list.time_limit},
                          {"tasks", tasks}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
           "\n";
}

TaskList readTaskList(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        throw std::runtime_error(path + " is not a JSON object (launch --slurm writes it)");
    }
    TaskList list;
    try {
        list.experiment_id = j.at("experiment_id").get<int64_t>();
        list.experiment_name = j.value("experiment_name", std::string());
        list.spec_json = j.at("spec_json").get<std::string>();
        list.time_limit = j.value("time_limit", std::string());
        for (const auto& task : j.at("tasks")) {
            std::vector<TaskRun> runs;
            for (const auto& r : task.at("runs")) {
                TaskRun t;
                t.run_id = r.at("run_id").get<int64_t>();
                t.arm = r.at("arm").get<std::string>();
                t.arm_index = r.at("arm_index").get<int>();
                t.seed = r.at("seed").get<uint64_t>();
                t.arm_json = r.at("arm_json").get<std::string>();
                t.planned_steps = r.at("planned_steps").get<int64_t>();
                t.inputs_json = r.value("inputs_json", std::string());
                runs.push_back(std::move(t));
            }
            list.tasks.push_back(std::move(runs));
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    return list;
}

std::string parsableJobId(const std::string& out) {
    const std::string text = trimmed(out);
    const std::string id = text.substr(0, text.find(';'));
    if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos) {
        return {};
    }
    return id;
}

}  // namespace ampbench::cli::slurm
