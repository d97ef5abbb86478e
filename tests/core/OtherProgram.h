#pragma once
// Another program on the same database, for tests of several processes on one file:
// a copy of the test binary itself, started with AMPBENCH_TEST_ROLE set, that does
// one thing and exits before any test runs, as a CLI run does. Include this header
// in one source file of the test binary.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "core/store/Database.h"

namespace ampbench::test_processes {

/// "write": adds an experiment named AMPBENCH_TEST_NAME with one finished run of 8
/// steps; "append": adds 600 steps to run 1, each followed by an event, every row in a
/// transaction of its own; "read": exits 0 when experiment 1 is named
/// AMPBENCH_TEST_NAME, else 3.
struct OtherProgram {
    OtherProgram() {
        const char* role = std::getenv("AMPBENCH_TEST_ROLE");
        if (!role)
            return;
        int code = 0;
        try {
            const std::string path = std::getenv("AMPBENCH_TEST_DB");
            const std::string name = std::getenv("AMPBENCH_TEST_NAME");
            if (std::string(role) == "write") {
                auto db = store::Database::open(path);
                const int64_t e = db->createExperiment(name, "{}");
                const int64_t r = db->createRun(e, "fp32", 0, 1, "{}", 8);
                db->markRunning(r, "{}");
                std::vector<run::StepRecord> steps;
                for (int64_t s = 1; s <= 8; ++s) {
                    run::StepRecord row;
                    row.step = s;
                    row.samples = 64 * s;
                    row.loss = 1.0 / static_cast<double>(s);
                    row.step_ms = 10;
                    row.wall_s = 0.01 * static_cast<double>(s);
                    steps.push_back(row);
                }
                db->insertSteps(r, steps);
                db->finishRun(r, run::RunStatus::Finished, "");
            } else if (std::string(role) == "append") {
                // Steps and events of run 1, each in a transaction of its own.
                auto db = store::Database::open(path);
                for (int64_t s = 1; s <= 600; ++s) {
                    run::StepRecord row;
                    row.step = s;
                    row.samples = 64 * s;
                    row.loss = 1.0;
                    db->insertSteps(1, {row});
                    db->insertEvents(1, {{s, run::EventKind::Info, name, 0.0}});
                }
            } else {
                auto db = store::Database::open(path, store::Database::Mode::ReadOnly);
                const auto e = db->experiment(1);
                code = e && e->name == name ? 0 : 3;
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "other program: %s\n", e.what());
            code = 2;
        }
        std::_Exit(code);
    }
};
inline const OtherProgram kOtherProgram;

/// Starts the other program; its process id (see waitOtherProgram).
inline pid_t startOtherProgram(const std::string& role, const std::string& db,
                               const std::string& name) {
    // The environment is built before fork: between fork and exec a child of a
    // threaded program (the Qt tests) may only make async-signal-safe calls.
    std::vector<std::string> env = {"AMPBENCH_TEST_ROLE=" + role, "AMPBENCH_TEST_DB=" + db,
                                    "AMPBENCH_TEST_NAME=" + name};
    for (char** e = environ; *e; ++e) {
        if (std::string(*e).rfind("AMPBENCH_TEST_", 0) != 0)
            env.emplace_back(*e);
    }
    std::vector<char*> envp;
    for (auto& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    char name0[] = "other-program";
    char* argv[] = {name0, nullptr};
    const pid_t pid = fork();
    if (pid == 0) {
        ::execve("/proc/self/exe", argv, envp.data());
        _exit(127);
    }
    return pid;
}

/// The exit status of a started program, or -1 when it did not exit.
inline int waitOtherProgram(pid_t pid) {
    int status = 0;
    if (pid <= 0 || ::waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Runs the other program to its end; its exit status, or -1 when it did not exit.
inline int runOtherProgram(const std::string& role, const std::string& db,
                           const std::string& name) {
    return waitOtherProgram(startOtherProgram(role, db, name));
}

}  // namespace ampbench::test_processes
