#include "core/parallel/RankLauncher.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/run/RemoveTree.h"
#include "core/util/OwnExecutable.h"

namespace ampbench::parallel {
namespace {

using Clock = std::chrono::steady_clock;

std::string describeExit(int rank, pid_t pid, int status) {
    const std::string who =
        "rank " + std::to_string(rank) + " (process " + std::to_string(pid) + ")";
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return who + " was killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
    }
    if (WIFEXITED(status)) {
        return who + " exited with status " + std::to_string(WEXITSTATUS(status));
    }
    return who + " ended";
}

}  // namespace

std::string workerExecutable() {
    if (const char* env = std::getenv("AMPBENCH_CLI"); env && *env) {
        return env;
    }
    const std::string self = util::ownExecutable();
    if (self.empty()) {
        return "ampbench-cli";
    }
    return (std::filesystem::path(self).parent_path() / "ampbench-cli").string();
}

RankLauncher::RankLauncher(const std::string& executable, const std::string& db_path,
                           int64_t run_id, int world, double timeout_s, int first_gpu) {
    setup_.rank = 0;
    setup_.first_gpu = first_gpu;
    setup_.world = world;
    setup_.timeout_s = timeout_s;
    std::string templ = (std::filesystem::temp_directory_path() / "ampbench-ranks-XXXXXX").string();
    if (!::mkdtemp(templ.data())) {
        setup_.launch_error = "cannot make a folder for the ranks' rendezvous in " +
                              std::filesystem::temp_directory_path().string() + ": " +
                              std::strerror(errno);
        return;
    }
    dir_ = templ;
    setup_.store_path = dir_ + "/store";
    if (::access(executable.c_str(), X_OK) != 0) {
        setup_.launch_error = "cannot start the other ranks: " + executable +
                              " is not an executable program (set AMPBENCH_CLI to ampbench-cli)";
        return;
    }
    for (int r = 1; r < world; ++r) {
        std::vector<std::string> args = {executable,    "--db",
                                         db_path,       "rank-worker",
                                         "--run",       std::to_string(run_id),
                                         "--rank",      std::to_string(r),
                                         "--world",     std::to_string(world),
                                         "--store",     setup_.store_path,
                                         "--timeout",   std::to_string(timeout_s),
                                         "--first-gpu", std::to_string(first_gpu)};
        std::vector<char*> argv;
        for (auto& a : args) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        const pid_t parent = ::getpid();
        const pid_t pid = ::fork();
        if (pid == 0) {
            // Only async-signal-safe calls until exec: this process has threads.
            ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // a rank never outlives rank 0
            if (::getppid() != parent) {
                ::_exit(126);
            }
            ::dup2(2, 1);  // stdout may carry rank 0's record stream
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        if (pid < 0) {
            setup_.launch_error =
                "cannot start rank " + std::to_string(r) + ": " + std::strerror(errno);
            return;
        }
        workers_.push_back({r, pid, false, 0});
    }
}

RankLauncher::~RankLauncher() {
    finish(0);
    if (!dir_.empty()) {
        run::removeTree(dir_);
    }
}

RankSetup RankLauncher::rank0() const {
    RankSetup s = setup_;
    auto* self = const_cast<RankLauncher*>(this);
    s.explain_lost_rank = [self] { return self->lostRanks(0.5); };
    return s;
}

void RankLauncher::reap(bool block) {
    for (auto& w : workers_) {
        if (w.ended) {
            continue;
        }
        int status = 0;
        const pid_t got = ::waitpid(w.pid, &status, block ? 0 : WNOHANG);
        if (got == w.pid || (got < 0 && errno == ECHILD)) {
            w.ended = true;
            w.status = status;
        }
    }
}

std::string RankLauncher::lostRanks(double wait_s) {
    const auto until = Clock::now() + std::chrono::duration<double>(wait_s);
    std::string lines;
    while (true) {
        reap(false);
        for (const auto& w : workers_) {
            if (w.ended && !(WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0)) {
                lines += (lines.empty() ? "" : "; ") + describeExit(w.rank, w.pid, w.status);
            }
        }
        if (!lines.empty() || Clock::now() >= until) {
            return lines;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

std::vector<std::string> RankLauncher::finish(double grace_s) {
    const auto until = Clock::now() + std::chrono::duration<double>(grace_s);
    auto running = [this] {
        for (const auto& w : workers_) {
            if (!w.ended) {
                return true;
            }
        }
        return false;
    };
    reap(false);
    while (running() && Clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        reap(false);
    }
    for (int signal : {SIGTERM, SIGKILL}) {
        if (!running()) {
            break;
        }
        for (const auto& w : workers_) {
            if (!w.ended) {
                ::kill(w.pid, signal);
            }
        }
        const auto stop = Clock::now() + std::chrono::seconds(3);
        while (running() && Clock::now() < stop) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            reap(false);
        }
    }
    reap(true);
    std::vector<std::string> lines;
    for (const auto& w : workers_) {
        if (!(WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0)) {
            lines.push_back(describeExit(w.rank, w.pid, w.status));
        }
    }
    return lines;
}

}  // namespace ampbench::parallel
