#pragma once
// The Qt half of `ampbench-cli report`: HTML and PDF through ui/report, drawn on
// Qt's offscreen platform so it needs no display. Compiled only where Qt is
// (AMPBENCH_REPORTS_WITH_QT); ReportCommand.cpp holds everything else.
#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/Report.h"
#include "core/store/Database.h"

namespace ampbench::cli {

struct QtReportResult {
    std::string error;                 ///< non-empty: what failed, nothing more written
    std::vector<std::string> written;  ///< paths, in the order written
};

/// Every file of `files` (HTML, PDF, CSV, JSON, in that order) from the report the
/// CLI prepared, which the HTML's plots take over: nothing is loaded or analysed again.
QtReportResult writeQtReports(const store::Database& db, analysis::PreparedReport prepared,
                              const analysis::ReportFiles& files);

/// The Qt this program runs with ("6.4.2").
std::string qtRuntimeVersion();

}  // namespace ampbench::cli
