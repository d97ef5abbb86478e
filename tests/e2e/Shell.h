#pragma once
// Runs a command line for the end-to-end tests and captures what it printed.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "Eventually.h"

namespace ampbench::test {

struct ShellResult {
    int code = -1;
    std::string out;  // stdout and stderr together
};

inline ShellResult shell(const std::string& command) {
    const std::string cmd = command + " 2>&1";
    ShellResult r;
    FILE* p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf{};
    while (p && fgets(buf.data(), buf.size(), p)) {
        r.out += buf.data();
    }
    const int status = p ? pclose(p) : -1;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

}  // namespace ampbench::test
