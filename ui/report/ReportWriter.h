#pragma once
// Writes an experiment's report files: HTML (self-contained) and PDF rendered here,
// CSV (every metric row, long format) and JSON (summary, gains, verdicts) by the
// core's report (analysis::writeDataFiles). Used by `ampbench-cli report` and the
// GUI's Export report… action.
#include <QByteArray>
#include <cstdint>
#include <string>
#include <vector>

#include "core/store/Database.h"
#include "ui/report/ReportContent.h"

namespace ampbench::report {

/// Output paths; empty ones are not written.
using ReportRequest = analysis::ReportFiles;

struct ReportResult {
    enum class Failure { None, NotFound, Io };
    Failure failure = Failure::None;
    std::string error;                  ///< what failed, for the user
    std::vector<std::string> written;   ///< paths, in the order written
    std::vector<std::string> warnings;  ///< incomplete runs and other caveats
    bool ok() const { return failure == Failure::None; }
};

using analysis::checkWritable;

QByteArray renderHtml(const ReportContent& content);
QByteArray renderPdf(const ReportContent& content);
std::string renderJson(const ReportContent& content);

/// Writes the requested files from prepared content. Renders the plots first when
/// HTML or PDF is asked for and content.plots is empty: GUI thread only, then.
/// `db` is read again for the CSV's rows.
ReportResult writeReports(ReportContent& content, const store::Database& db,
                          const ReportRequest& request);

/// prepareReport + writeReports; checks every output path before doing any work.
ReportResult writeReports(const store::Database& db, int64_t experiment_id,
                          const ReportRequest& request);

}  // namespace ampbench::report
