#pragma once
// `ampbench-cli report`: HTML, PDF, CSV and JSON reports of one experiment.
// Built only with Qt (AMPBENCH_WITH_REPORTS).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace ampbench::cli {

struct ReportOptions {
    int64_t experiment_id = 0;
    std::string html, pdf, csv, json;
    std::string baseline;
};

/// Adds the subcommand and its options to `app`; the options land in `options`.
CLI::App* addReportCommand(CLI::App& app, ReportOptions& options);

int commandReport(const std::string& db_path, const ReportOptions& options);

}  // namespace ampbench::cli
