#pragma once
// `ampbench-cli report`: an experiment's report as JSON and CSV in every build
// (core alone), and as HTML and PDF where the build has Qt (AMPBENCH_REPORTS_WITH_QT).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace ampbench::cli {

struct ReportOptions {
    int64_t experiment_id = 0;
    std::string html, pdf, csv, json;
    std::string baseline;
};

/// True when this build writes HTML and PDF (it has Qt); JSON and CSV always.
bool reportsHaveQt();
/// The formats this build writes, for --help and messages: "JSON, CSV, HTML, PDF".
std::string reportFormats();

/// Adds the subcommand and its options to `app`; the options land in `options`.
CLI::App* addReportCommand(CLI::App& app, ReportOptions& options);

int commandReport(const std::string& db_path, const ReportOptions& options);

}  // namespace ampbench::cli
