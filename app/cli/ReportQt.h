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

struct QtReportFiles {
    std::string html, pdf;  ///< empty ones are not written
    std::string baseline;
};

struct QtReportResult {
    std::string error;                 ///< non-empty: what failed, nothing more written
    std::vector<std::string> written;  ///< paths, in the order written
};

/// HTML and PDF of the report the CLI prepared (read again only for nothing: the
/// rows and the analysis are `prepared`'s).
QtReportResult writeQtReports(const store::Database& db, const analysis::PreparedReport& prepared,
                              const QtReportFiles& files);

/// The Qt this program runs with ("6.4.2").
std::string qtRuntimeVersion();

}  // namespace ampbench::cli
