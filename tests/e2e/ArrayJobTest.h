#pragma once
// What the tests of a scheduler's job arrays (Slurm, Grid Engine) read back: a collector's
// end, a run's steps, and the rows of a task's stream against the database's.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "Shell.h"
#include "core/store/Database.h"
#include "core/stream/RecordStream.h"

namespace ampbench::test {

inline std::string readText(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Waits until the collector of experiment `id` wrote its exit code into its job file in
/// `<db>.jobs`; past `seconds`, a failure with the collector's log and what
/// `queue_command` (the scheduler's own listing) says.
inline nlohmann::json waitCollectorEnded(const std::string& db, int64_t id, int seconds,
                                         const std::string& queue_command) {
    const std::filesystem::path jobs(db + ".jobs");
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < until) {
        const auto j =
            nlohmann::json::parse(readText(jobs / (std::to_string(id) + ".json")), nullptr, false);
        if (!j.is_discarded() && j.contains("exit_code")) {
            return j;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    ADD_FAILURE() << "experiment " << id << "'s collector did not end within " << seconds
                  << " s; its log:\n"
                  << readText(jobs / (std::to_string(id) + ".log")) << "\n"
                  << queue_command << ":\n"
                  << shell(queue_command).out;
    return nlohmann::json::object();
}

/// Waits until run `run_id` has at least `steps` steps in `db`; past `seconds`, a
/// failure with what `queue_command` says.
inline void waitRunSteps(const std::string& db, int64_t run_id, int64_t steps, int seconds,
                         const std::string& queue_command) {
    using store::Database;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < until) {
        if (Database::open(db, Database::Mode::ReadOnly)->stepCount(run_id) >= steps) {
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << "run " << run_id << " has fewer than " << steps << " steps after " << seconds
                  << " s; " << queue_command << ":\n"
                  << shell(queue_command).out;
}

/// Every row of a task's stream, encoded as a stream line under run 0.
inline std::vector<std::string> streamRows(const std::filesystem::path& file) {
    std::vector<std::string> rows;
    std::ifstream in(file);
    std::string line;
    int64_t n = 0;
    while (std::getline(in, line)) {
        auto record = stream::decode(line, ++n);
        if (auto* row = std::get_if<stream::RowRecord>(&record)) {
            row->run = 0;
            rows.push_back(stream::encode(*row));
        }
    }
    return rows;
}

/// Every row of run `run_id` in `db`, encoded as streamRows() encodes a stream's.
inline std::vector<std::string> databaseRows(const std::string& db, int64_t run_id) {
    using store::Database;
    auto open = Database::open(db, Database::Mode::ReadOnly);
    std::vector<std::string> rows;
    for (auto& r : open->recordsSince(run_id, 0)) {
        rows.push_back(stream::encode(stream::RowRecord{0, r}));
    }
    return rows;
}

}  // namespace ampbench::test
