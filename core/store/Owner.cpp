#include "core/store/private/Owner.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <limits>
#include <sstream>

namespace ampbench::store::owner {
namespace {

std::string bootId() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(in, id);
    return id;
}

/// Field 22 of /proc/PID/stat: start time in clock ticks after boot. The command
/// name (field 2) may hold spaces and parentheses, so fields are counted after
/// the last ')'.
std::string startTime(int64_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line))
        return {};
    const auto close = line.rfind(')');
    if (close == std::string::npos)
        return {};
    std::istringstream fields(line.substr(close + 1));
    std::string field;
    for (int i = 3; i <= 22; ++i) {  // fields 3..22
        if (!(fields >> field))
            return {};
    }
    return field;
}

bool pidExists(int64_t pid) {
    if (pid <= 0 || pid > std::numeric_limits<pid_t>::max())
        return false;
    return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

std::string hostName() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0)
        return "localhost";
    return buf;
}

std::string processToken(int64_t pid) {
    static const std::string boot = bootId();
    const std::string start = startTime(pid);
    if (boot.empty() || start.empty())
        return {};
    return boot + "/" + start;
}

int64_t currentPid() {
    return static_cast<int64_t>(getpid());
}

const std::string& currentToken() {
    static const std::string token = processToken(currentPid());
    return token;
}

bool gone(std::optional<int64_t> pid, const std::string& host, const std::string& token,
          bool missing_pid_is_gone) {
    static const std::string here = hostName();
    if (host != here)
        return false;
    if (!pid)
        return missing_pid_is_gone;
    if (!token.empty()) {
        // No token now (no such process, or no /proc): the pid check below decides.
        const std::string now = *pid == currentPid() ? currentToken() : processToken(*pid);
        if (!now.empty())
            return now != token;
    }
    return *pid != currentPid() && !pidExists(*pid);
}

}  // namespace ampbench::store::owner
