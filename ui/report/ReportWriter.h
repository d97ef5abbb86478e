#pragma once
// Writes an experiment's report files: HTML (self-contained), PDF, CSV (every
// metric row, long format) and JSON (summary, gains, verdicts). Used by
// `ampbench-cli report` and the GUI's Export report… action.
#include <QByteArray>
#include <cstdint>
#include <string>
#include <vector>

#include "core/store/Database.h"
#include "ui/report/ReportContent.h"

namespace ampbench::report {

/// Output paths; empty ones are not written.
struct ReportRequest {
    std::string html;
    std::string pdf;
    std::string csv;
    std::string json;
    std::string baseline;  ///< arm the others are judged against; empty = the spec's first
    bool empty() const { return html.empty() && pdf.empty() && csv.empty() && json.empty(); }
};

struct ReportResult {
    enum class Failure { None, NotFound, Io };
    Failure failure = Failure::None;
    std::string error;                  ///< what failed, for the user
    std::vector<std::string> written;   ///< paths, in the order written
    std::vector<std::string> warnings;  ///< incomplete runs and other caveats
    bool ok() const { return failure == Failure::None; }
};

/// Empty when `path` can be written (its folder exists and is writable, and the
/// file, if present, is writable); otherwise why not.
std::string checkWritable(const std::string& path);

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
