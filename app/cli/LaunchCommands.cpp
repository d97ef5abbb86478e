// `ampbench-cli launch`, `status`, `cancel` and `host`: experiments that run detached on
// this machine (a GPU server reached over SSH), and what a desktop needs to know of it.
//
// A launched job is one process (setsid, double fork: it outlives the SSH session)
// that trains into the database exactly as `run` does. Beside the database, in
// <db>.jobs/, it leaves <experiment>.json (pid, its start time, log, exit code) and
// <experiment>.log (its stdout and stderr).
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/Interrupt.h"
#include "cli/Progress.h"
#include "core/analysis/Format.h"
#include "core/config/BuildInfo.h"
#include "core/config/SpecJson.h"
#include "core/config/Validation.h"
#include "core/probe/Environment.h"
#include "core/store/Database.h"
#include "core/store/OutputFile.h"
#include "core/train/Experiment.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ampbench::cli {
namespace {

std::string jobsDir(const std::string& db_path) {
    return db_path + ".jobs";
}
std::string jobFile(const std::string& db_path, int64_t id) {
    return jobsDir(db_path) + "/" + std::to_string(id) + ".json";
}

/// The start time of process `pid` in clock ticks since boot (/proc/PID/stat, field
/// 22), or 0 when there is no such process or it is a zombie. With the pid it names
/// one process: a pid the kernel reused has another start time.
long long processStart(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');  // the command name may hold spaces and ')'
    if (close == std::string::npos) {
        return 0;
    }
    std::istringstream rest(text.substr(close + 2));
    std::string field, state;
    rest >> state;
    if (state == "Z" || state == "X") {
        return 0;
    }
    for (int i = 4; i <= 22; ++i) {  // fields 4 … 22 after the state (field 3)
        if (!(rest >> field)) {
            return 0;
        }
    }
    return std::atoll(field.c_str());
}

bool jobAlive(const json& job) {
    const pid_t pid = job.value("pid", 0);
    return pid > 0 && processStart(pid) != 0 && processStart(pid) == job.value("pid_start", 0LL);
}

std::optional<json> readJob(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return std::nullopt;
    }
    json j = json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        return std::nullopt;
    }
    return j;
}

void writeJob(const std::string& db_path, const json& job) {
    store::writeFileAtomically(jobFile(db_path, job.at("experiment_id").get<int64_t>()),
                               job.dump(2) + "\n");
}

std::string readText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void writeAll(int fd, const std::string& text) {
    const char* p = text.data();
    size_t left = text.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
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

/// The detached job: trains `spec` into the database with its output in the log.
/// Tells the launcher on `report` ("planned ID" or "failed CODE") and closes it.
int runJob(const std::string& db_path, const config::ExperimentSpec& spec,
           const std::string& pending_log, int report) {
    auto fail = [&](int code) {
        if (report >= 0) {
            writeAll(report, "failed " + std::to_string(code) + "\n");
            ::close(report);
            report = -1;
        }
        return code;
    };
    std::string device;
    if (int code = preflight(spec, device, false); code != kOk) {
        return fail(code);
    }
    std::unique_ptr<store::Database> db;
    try {
        db = store::Database::open(db_path);
    } catch (const store::StoreError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return fail(kStoreError);
    }
    run::CancelToken cancel;
    InterruptScope interrupt(cancel);
    json job;
    std::unique_ptr<Progress> progress;
    train::ExperimentHooks hooks;
    hooks.setup_checked = true;
    hooks.planned = [&](const train::ExperimentPlan& plan) {
        const std::string log =
            jobsDir(db_path) + "/" + std::to_string(plan.experiment_id) + ".log";
        std::error_code ec;
        fs::rename(pending_log, log, ec);  // the open descriptor keeps writing to it
        job = {{"experiment_id", plan.experiment_id},
               {"pid", static_cast<int>(::getpid())},
               {"pid_start", processStart(::getpid())},
               {"log", ec ? pending_log : log},
               {"db", db_path},
               {"device", device},
               {"runs", plan.runs.size()},
               {"started_at", static_cast<int64_t>(std::time(nullptr))}};
        writeJob(db_path, job);
        std::fprintf(stderr, "experiment %lld '%s': %zu runs on %s, recording to %s\n",
                     static_cast<long long>(plan.experiment_id),
                     analysis::printable(spec.name, false).c_str(), plan.runs.size(),
                     device.c_str(), db_path.c_str());
        progress = std::make_unique<Progress>(static_cast<int>(plan.runs.size()), false, false);
        if (report >= 0) {
            writeAll(report, "planned " + std::to_string(plan.experiment_id) + "\n");
            ::close(report);
            report = -1;
        }
    };
    int index = 0;
    hooks.starting = [&](const train::PlannedRun& run) -> run::TrainObserver* {
        progress->beginRun(index++, run.arm, run.seed, run.planned_steps);
        return progress.get();
    };
    train::ExperimentResult result;
    int code = kOk;
    try {
        result = train::runExperiment(*db, spec, cancel, hooks);
        code = cancel.cancelled() ? kCancelled : result.any_failed ? kRunsFailed : kOk;
    } catch (const store::StoreError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        code = kStoreError;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        code = kUsage;
    }
    if (job.is_null()) {
        return fail(code);
    }
    for (const auto& r : db->runs(result.plan.experiment_id)) {
        std::fprintf(stderr, "run %lld %s seed %llu: %s at step %lld%s%s\n",
                     static_cast<long long>(r.id), r.arm.c_str(),
                     static_cast<unsigned long long>(r.seed), run::toString(r.status).c_str(),
                     static_cast<long long>(r.last_step), r.error.empty() ? "" : ": ",
                     analysis::printable(r.error, false).c_str());
    }
    if (code != kCancelled) {
        printVerdicts(*db, result.plan.experiment_id);
    }
    job["exit_code"] = code;
    job["ended_at"] = static_cast<int64_t>(std::time(nullptr));
    try {
        writeJob(db_path, job);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    return code;
}

/// What became of an experiment: its job's process and its runs.
std::string jobState(const std::optional<json>& job, const std::vector<store::RunRow>& runs) {
    if (job && jobAlive(*job)) {
        return "running";
    }
    bool running = false, cancelled = false, failed = false, interrupted = false, queued = false;
    for (const auto& r : runs) {
        running |= r.status == run::RunStatus::Running;
        queued |= r.status == run::RunStatus::Queued;
        cancelled |= r.status == run::RunStatus::Cancelled;
        failed |= r.status == run::RunStatus::Failed;
        interrupted |= r.status == run::RunStatus::Interrupted;
    }
    if (job && (running || queued || interrupted)) {
        return "interrupted";  // its process is gone, its runs never ended
    }
    if (running || queued) {
        return "running";  // another process (`run`, the GUI) is training it
    }
    if (interrupted) {
        return "interrupted";
    }
    if (cancelled) {
        return "cancelled";
    }
    if (failed) {
        return "failed";
    }
    return "finished";
}

json runJson(const store::RunRow& r, bool job_dead) {
    std::string status = run::toString(r.status);
    if (job_dead && (r.status == run::RunStatus::Running)) {
        status = "interrupted";
    }
    return {{"id", r.id},       {"arm", r.arm},        {"seed", r.seed},
            {"status", status}, {"step", r.last_step}, {"planned_steps", r.planned_steps},
            {"error", r.error}};
}

}  // namespace

int commandLaunch(const std::string& db_path, RunOverrides o, const LaunchOptions& l) {
    if (l.config_stdin) {
        std::string text((std::istreambuf_iterator<char>(std::cin)),
                         std::istreambuf_iterator<char>());
        if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
            std::fprintf(stderr, "launch: --config-stdin read nothing (send the spec's JSON)\n");
            return kUsage;
        }
        std::vector<config::FieldError> errors;
        auto spec = config::specFromJsonText(text, errors);
        if (!errors.empty()) {
            config::renumberArmsAfterLeftOut(errors);
            printErrors("the spec on stdin has errors", errors, spec.arms);
            return kUsage;
        }
        o.base = spec;
    }
    config::ExperimentSpec spec;
    if (!buildSpec(o, spec)) {
        return kUsage;
    }
    for (const auto& w : config::warnings(spec)) {
        std::fprintf(stderr, "warning: %s\n",
                     analysis::printable(config::describe(w, spec.arms), false).c_str());
    }
    try {
        store::Database::open(db_path);  // a file we cannot write fails here, not in the log
    } catch (const store::StoreError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kStoreError;
    }
    std::error_code ec;
    fs::create_directories(jobsDir(db_path), ec);
    if (ec) {
        std::fprintf(stderr, "launch: cannot create %s: %s\n", jobsDir(db_path).c_str(),
                     ec.message().c_str());
        return kIoError;
    }
    const std::string pending = jobsDir(db_path) + "/launch-" + std::to_string(::getpid()) + ".log";
    const int log =
        ::open(pending.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (log < 0) {
        std::fprintf(stderr, "launch: cannot write %s: %s\n", pending.c_str(),
                     std::strerror(errno));
        return kIoError;
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        std::fprintf(stderr, "launch: pipe: %s\n", std::strerror(errno));
        return kIoError;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t first = ::fork();
    if (first < 0) {
        std::fprintf(stderr, "launch: fork: %s\n", std::strerror(errno));
        return kIoError;
    }
    if (first == 0) {
        // A session of its own (no terminal, no SIGHUP when SSH hangs up), then a
        // second fork so that the job is no session leader and is adopted by init.
        ::setsid();
        if (::fork() != 0) {
            ::_exit(0);
        }
        ::close(fds[0]);
        const int null = ::open("/dev/null", O_RDONLY);
        ::dup2(null, STDIN_FILENO);
        ::dup2(log, STDOUT_FILENO);
        ::dup2(log, STDERR_FILENO);
        ::close(null);
        ::close(log);
        std::signal(SIGHUP, SIG_IGN);
        std::signal(SIGPIPE, SIG_IGN);
        writeAll(fds[1], "pid " + std::to_string(::getpid()) + "\n");
        int code = kRunsFailed;
        try {
            code = runJob(db_path, spec, pending, fds[1]);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "ampbench-cli: %s\n", e.what());
            writeAll(fds[1], "failed " + std::to_string(kRunsFailed) + "\n");
        }
        std::fflush(stdout);
        std::fflush(stderr);
        ::_exit(code);
    }
    ::close(fds[1]);
    ::close(log);
    int status = 0;
    ::waitpid(first, &status, 0);

    // The job says "pid N", then "planned ID" or "failed CODE"; the pipe closing
    // before either means that it died.
    std::string said;
    auto verdict = [&]() -> std::string {
        std::istringstream lines(said);
        std::string line;
        while (std::getline(lines, line)) {
            if (lines.good() && (line.rfind("planned ", 0) == 0 || line.rfind("failed ", 0) == 0)) {
                return line;
            }
        }
        return {};
    };
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(l.wait_s * 1000));
    bool timed_out = false;
    while (verdict().empty()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            continue;
        }
        char buf[256];
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n <= 0) {
            break;
        }
        said.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    const pid_t job_pid = said.rfind("pid ", 0) == 0 ? std::atoi(said.c_str() + 4) : 0;
    const std::string line = verdict();
    if (line.rfind("planned ", 0) == 0) {
        const int64_t id = std::atoll(line.c_str() + 8);
        auto job = readJob(jobFile(db_path, id));
        if (!job) {
            std::fprintf(stderr, "launch: experiment %lld was planned but %s cannot be read\n",
                         static_cast<long long>(id), jobFile(db_path, id).c_str());
            return kIoError;
        }
        json line = {{"experiment_id", id},
                     {"pid", job->value("pid", 0)},
                     {"log", job->value("log", std::string())},
                     {"runs", job->value("runs", 0)},
                     {"version", config::buildVersion()}};
        std::printf("%s\n", line.dump().c_str());
        return kOk;
    }
    const std::string output = readText(pending);
    if (timed_out) {
        std::fprintf(stderr,
                     "launch: the job did not plan its experiment within %.0f s (checking the "
                     "model and data); it was stopped. Its output so far (%s):\n%s",
                     l.wait_s, pending.c_str(), output.c_str());
        // Nothing is recorded before planning: the job holds no rows to keep.
        if (job_pid > 0) {
            ::kill(job_pid, SIGKILL);
        }
        fs::remove(pending, ec);
        return kRunsFailed;
    }
    int code = kRunsFailed;
    if (line.rfind("failed ", 0) == 0) {
        code = std::atoi(line.c_str() + 7);
    }
    std::fprintf(stderr, "%s", output.c_str());
    if (line.empty()) {
        std::fprintf(stderr, "launch: the job ended before it planned the experiment\n");
    }
    fs::remove(pending, ec);
    return code == kOk ? kRunsFailed : code;
}

int commandStatus(const std::string& db_path, int64_t experiment_id, bool as_json) {
    std::unique_ptr<store::Database> db;
    try {
        db = store::Database::open(db_path, store::Database::Mode::ReadOnly);
    } catch (const store::StoreError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kStoreError;
    }
    std::vector<std::pair<int64_t, std::optional<json>>> jobs;  // experiment, its job file
    if (experiment_id > 0) {
        auto job = readJob(jobFile(db_path, experiment_id));
        if (!job && !db->experiment(experiment_id)) {
            std::fprintf(stderr, "status: no experiment %lld in %s\n",
                         static_cast<long long>(experiment_id), db_path.c_str());
            return kNotFound;
        }
        jobs.emplace_back(experiment_id, job);
    } else {
        std::error_code ec;
        std::vector<int64_t> ids;
        for (const auto& e : fs::directory_iterator(jobsDir(db_path), ec)) {
            const std::string stem = e.path().stem();
            if (e.path().extension() == ".json" &&
                stem.find_first_not_of("0123456789") == std::string::npos) {
                ids.push_back(std::atoll(stem.c_str()));
            }
        }
        std::sort(ids.begin(), ids.end());
        for (int64_t id : ids) {
            jobs.emplace_back(id, readJob(jobFile(db_path, id)));
        }
    }
    json out = json::array();
    for (const auto& [id, job] : jobs) {
        const auto runs = db->runs(id);
        const bool alive = job && jobAlive(*job);
        json j = {{"experiment_id", id},
                  {"state", jobState(job, runs)},
                  {"name", db->experiment(id) ? db->experiment(id)->name : std::string()}};
        if (job) {
            j["pid"] = job->value("pid", 0);
            j["log"] = job->value("log", std::string());
            j["started_at"] = job->value("started_at", int64_t{0});
            if (job->contains("exit_code")) {
                j["exit_code"] = (*job)["exit_code"];
                j["ended_at"] = job->value("ended_at", int64_t{0});
            }
        }
        j["runs"] = json::array();
        for (const auto& r : runs) {
            j["runs"].push_back(runJson(r, job && !alive));
        }
        out.push_back(j);
    }
    if (as_json) {
        std::printf("%s\n", json{{"jobs", out}}.dump().c_str());
        return kOk;
    }
    if (out.empty()) {
        std::printf("no launched jobs in %s\n", db_path.c_str());
        return kOk;
    }
    for (const auto& j : out) {
        std::printf("experiment %lld '%s': %s", static_cast<long long>(j["experiment_id"]),
                    analysis::printable(j["name"].get<std::string>(), false).c_str(),
                    j["state"].get<std::string>().c_str());
        if (j.contains("pid")) {
            std::printf(" (pid %d, log %s)", j["pid"].get<int>(),
                        j["log"].get<std::string>().c_str());
        }
        std::printf("\n");
        for (const auto& r : j["runs"]) {
            const int64_t planned = r["planned_steps"];
            const int64_t step = r["step"];
            std::printf("  run %lld %-12s seed %-3llu %-11s step %lld/%lld (%.0f%%)\n",
                        static_cast<long long>(r["id"]), r["arm"].get<std::string>().c_str(),
                        static_cast<unsigned long long>(r["seed"].get<uint64_t>()),
                        r["status"].get<std::string>().c_str(), static_cast<long long>(step),
                        static_cast<long long>(planned),
                        planned > 0 ? 100.0 * static_cast<double>(step) / planned : 0.0);
        }
    }
    return kOk;
}

int commandCancel(const std::string& db_path, int64_t experiment_id, double timeout_s) {
    auto job = readJob(jobFile(db_path, experiment_id));
    if (!job) {
        std::fprintf(stderr,
                     "cancel: no launched job for experiment %lld in %s (only experiments "
                     "started with `launch` can be cancelled here)\n",
                     static_cast<long long>(experiment_id), db_path.c_str());
        return kNotFound;
    }
    auto runsOf = [&] {
        return store::Database::open(db_path, store::Database::Mode::ReadOnly)->runs(experiment_id);
    };
    if (!jobAlive(*job)) {
        std::printf("experiment %lld already ended: %s; nothing to cancel\n",
                    static_cast<long long>(experiment_id), jobState(job, runsOf()).c_str());
        return kOk;
    }
    const pid_t pid = job->value("pid", 0);
    if (::kill(pid, SIGTERM) != 0) {
        std::fprintf(stderr, "cancel: cannot signal pid %d: %s\n", pid, std::strerror(errno));
        return kIoError;
    }
    // The job turns SIGTERM into a cancel: the run in flight stops between
    // micro-batches and is recorded `cancelled`, the queued ones with it.
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(timeout_s * 1000));
    while (jobAlive(*job)) {
        if (std::chrono::steady_clock::now() > deadline) {
            std::fprintf(stderr,
                         "cancel: experiment %lld (pid %d) has not stopped after %.0f s; it "
                         "stops at its next micro-batch\n",
                         static_cast<long long>(experiment_id), pid, timeout_s);
            return kRunsFailed;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const auto runs = runsOf();
    std::printf("experiment %lld cancelled\n", static_cast<long long>(experiment_id));
    for (const auto& r : runs) {
        std::printf("  run %lld %s seed %llu: %s at step %lld\n", static_cast<long long>(r.id),
                    r.arm.c_str(), static_cast<unsigned long long>(r.seed),
                    run::toString(r.status).c_str(), static_cast<long long>(r.last_step));
    }
    return kOk;
}

int commandHost(const std::string& data_dir, bool as_json) {
    json out = {{"version", config::buildVersion()}, {"commit", config::buildCommit()}};
    const probe::Environment cpu = probe::probeEnvironment("cpu");
    out["libtorch"] = cpu.libtorch_version;
    out["cpu"] = {
        {"name", cpu.device_name}, {"memory", cpu.device_memory}, {"cores", cpu.cpu_cores}};
    out["cuda"] = json::array();
    if (probe::cudaAvailable()) {
        const probe::Environment gpu = probe::probeEnvironment("cuda");
        out["cuda"].push_back({{"name", gpu.device_name},
                               {"memory", gpu.device_memory},
                               {"compute_capability", gpu.compute_capability},
                               {"driver", gpu.driver_version}});
    }
    if (!data_dir.empty()) {
        std::error_code ec;
        json d = {{"path", data_dir}, {"exists", fs::is_directory(data_dir, ec)}};
        json entries = json::array();
        for (const auto& e : fs::directory_iterator(data_dir, ec)) {
            if (entries.size() < 50) {
                entries.push_back(e.path().filename().string());
            }
        }
        d["entries"] = entries;
        out["data"] = d;
    }
    if (as_json) {
        std::printf("%s\n", out.dump().c_str());
        return kOk;
    }
    std::printf("ampbench-cli %s, LibTorch %s\n", config::buildVersion(),
                cpu.libtorch_version.c_str());
    std::printf("CPU  %s, %d cores, %s\n", cpu.device_name.c_str(), cpu.cpu_cores,
                analysis::formatBytes(cpu.device_memory).c_str());
    for (const auto& g : out["cuda"]) {
        std::printf("CUDA %s, %s\n", g["name"].get<std::string>().c_str(),
                    analysis::formatBytes(g["memory"].get<int64_t>()).c_str());
    }
    if (out["cuda"].empty()) {
        std::printf("CUDA none visible\n");
    }
    if (out.contains("data")) {
        std::printf("data %s: %s\n", data_dir.c_str(),
                    out["data"]["exists"].get<bool>()
                        ? (std::to_string(out["data"]["entries"].size()) + " entries").c_str()
                        : "missing");
    }
    return kOk;
}

}  // namespace ampbench::cli
