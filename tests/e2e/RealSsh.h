#pragma once
// A real OpenSSH server for the tests (tests/e2e/sshd-fixture.sh): Debian's sshd on
// 127.0.0.1 and a free port, a child of the test process, with its own host key,
// authorized key and configs in a folder of its own; the client reads only that
// folder's ssh_config and keys, never ~/.ssh. When it cannot start, why() holds
// the fixture's message and sshd's log, for the test to fail with.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "Shell.h"

namespace ampbench::test {

class RealSshd {
  public:
    /// The fixture script beside this header, by the absolute path CMake gives
    /// (__FILE__ is relative to the build folder where ccache rewrites the paths).
    static std::string fixtureScript() { return AMPBENCH_SSHD_FIXTURE; }

    /// Starts the server with its files in `dir` (created); ok() says whether it runs.
    explicit RealSshd(const std::filesystem::path& dir) : dir_(dir) {
        std::filesystem::create_directories(dir_);
        dir_ = std::filesystem::canonical(dir_);
        user_ = shell("id -un").out;
        while (!user_.empty() && (user_.back() == '\n' || user_.back() == '\r')) {
            user_.pop_back();
        }
        for (int attempt = 1; attempt <= 8 && pid_ <= 0; ++attempt) {
            if (!startOnce(attempt == 8)) {
                return;
            }
        }
        // The server accepts the authorized key and runs a command.
        const auto check = ssh("echo fixture-ok");
        if (check.code != 0 || check.out.find("fixture-ok") == std::string::npos) {
            why_ = "sshd on 127.0.0.1:" + std::to_string(port_) +
                   " did not accept the fixture's own key (ssh exit " + std::to_string(check.code) +
                   "): " + check.out + "\n" + log();
            stop();
        }
    }
    ~RealSshd() { stop(); }
    RealSshd(const RealSshd&) = delete;
    RealSshd& operator=(const RealSshd&) = delete;

    bool ok() const { return pid_ > 0 && why_.empty(); }
    const std::string& why() const { return why_; }
    int port() const { return port_; }
    pid_t pid() const { return pid_; }
    const std::filesystem::path& dir() const { return dir_; }
    std::string destination() const { return user_ + "@127.0.0.1"; }
    std::string key(bool refused = false) const {
        return (dir_ / (refused ? "refused_key" : "client_key")).string();
    }
    /// The ssh program with the client's own config and key (the desktop's "SSH
    /// command" setting takes exactly this).
    std::string sshProgram(bool refusedKey = false) const {
        return "ssh -F " + (dir_ / "ssh_config").string() + " -i " + key(refusedKey);
    }
    /// The transport as a shell prefix: ssh, its config and key, the port, the host.
    std::string transport(bool refusedKey = false) const {
        return sshProgram(refusedKey) + " -p " + std::to_string(port_) + " -- " + destination();
    }
    /// One remote command line (already a single word for the remote shell's -c).
    ShellResult ssh(const std::string& remoteLine, bool refusedKey = false) const {
        return shell(transport(refusedKey) + " " + localQuote(remoteLine) + " </dev/null");
    }
    std::string log() const {
        std::ifstream in(dir_ / "sshd.log");
        std::stringstream s;
        s << in.rdbuf();
        return "--- sshd log (" + (dir_ / "sshd.log").string() + ") ---\n" + s.str() +
               "--- end of sshd log ---";
    }
    /// The processes serving connections: children of the listener.
    std::vector<pid_t> connections() const {
        std::vector<pid_t> pids;
        if (pid_ <= 0) {
            return pids;
        }
        std::istringstream in(shell("pgrep -P " + std::to_string(pid_)).out);
        for (pid_t p = 0; in >> p;) {
            pids.push_back(p);
        }
        return pids;
    }
    /// Drops every connection at once, as a dead link or a crashed server would.
    int killConnections() const {
        int killed = 0;
        for (pid_t p : connections()) {
            killed += ::kill(p, SIGKILL) == 0 ? 1 : 0;
        }
        return killed;
    }
    /// Ends the connections and the server and reaps it; true when it is gone.
    bool stop() {
        if (pid_ <= 0) {
            return true;
        }
        killConnections();
        // The listener reaps them before it goes, so none is left a zombie.
        eventually([&] { return connections().empty(); }, std::chrono::seconds(60),
                   std::chrono::milliseconds(20));
        ::kill(pid_, SIGTERM);
        bool gone = eventually([&] { return ::waitpid(pid_, nullptr, WNOHANG) == pid_; },
                               std::chrono::seconds(60), std::chrono::milliseconds(20));
        if (!gone) {
            ::kill(pid_, SIGKILL);
            gone = ::waitpid(pid_, nullptr, 0) == pid_;
        }
        pid_ = -1;
        return gone;
    }

    /// The processes whose command line names this server's config (the listener
    /// and the connections it serves), as pgrep prints them; empty when none.
    std::string running() const {
        // "[s]" keeps the pattern from matching the shell that runs pgrep.
        return shell("pgrep -a -f " + localQuote((dir_ / "[s]shd_config").string())).out;
    }
    /// A word for the local shell (sh -c of popen).
    static std::string localQuote(const std::string& word) {
        std::string q = "'";
        for (char c : word) {
            q += c == '\'' ? std::string("'\\''") : std::string(1, c);
        }
        return q + "'";
    }

  private:
    static int freePort() {
        const int s = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        socklen_t len = sizeof a;
        int port = 0;
        if (s >= 0 && ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
            ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
            port = ntohs(a.sin_port);
        }
        if (s >= 0) {
            ::close(s);
        }
        return port;
    }

    /// One try on a free port; false with why_ when the server cannot start at all.
    /// A port taken between the probe and sshd's bind leaves pid_ at -1 for a retry.
    bool startOnce(bool last) {
        port_ = freePort();
        if (port_ <= 0) {
            why_ = "no free port on 127.0.0.1 for sshd";
            return false;
        }
        const auto prep = shell("sh " + localQuote(fixtureScript()) + " prepare " +
                                localQuote(dir_.string()) + " " + std::to_string(port_));
        if (prep.code != 0) {
            why_ = "the sshd fixture could not prepare " + dir_.string() + ": " + prep.out;
            return false;
        }
        std::filesystem::remove(dir_ / "sshd.log");
        const std::string script = fixtureScript();
        const std::string folder = dir_.string();
        const pid_t child = ::fork();
        if (child == 0) {
            // The server goes when the test process does, however it ends.
            ::prctl(PR_SET_PDEATHSIG, SIGTERM);
            ::execl("/bin/sh", "sh", script.c_str(), "serve", folder.c_str(),
                    static_cast<char*>(nullptr));
            ::_exit(127);
        }
        if (child < 0) {
            why_ = "fork failed: cannot start sshd";
            return false;
        }
        // Up once its pid file is written (after the bind and the listen).
        const auto pidFile = dir_ / "sshd.pid";
        const auto until = std::chrono::steady_clock::now() + kPatience;
        while (std::chrono::steady_clock::now() < until) {
            int status = 0;
            if (::waitpid(child, &status, WNOHANG) == child) {
                const std::string l = log();
                if (!last && l.find("Address already in use") != std::string::npos) {
                    return true;  // the port was taken meanwhile: another one
                }
                why_ = "sshd exited at once (status " + std::to_string(status) + ")\n" + l;
                return false;
            }
            std::error_code ec;
            if (std::filesystem::file_size(pidFile, ec) > 0 && !ec) {
                pid_ = child;
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
        why_ = "sshd did not come up within " + std::to_string(kPatience.count()) + " s\n" + log();
        return false;
    }

    std::filesystem::path dir_;
    std::string user_;
    std::string why_;
    int port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace ampbench::test
