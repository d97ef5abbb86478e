#pragma once
// An experiment's report, the Qt-free part both front ends share: the output paths
// checked before any work, the experiment loaded and analysed once, and the CSV
// and JSON written from that. ui/report renders HTML and PDF from the same
// PreparedReport; `ampbench-cli report` and the GUI's Export report… call these.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/Advice.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/ExperimentData.h"
#include "core/store/Database.h"

namespace ampbench::analysis {

/// Output paths; empty ones are not written.
struct ReportFiles {
    std::string html;
    std::string pdf;
    std::string csv;
    std::string json;
    std::string baseline;  ///< arm the others are judged against; empty = the spec's first
    bool empty() const { return html.empty() && pdf.empty() && csv.empty() && json.empty(); }
};

/// What a report shows, gathered once.
struct PreparedReport {
    ExperimentData data;
    ExperimentAnalysis analysis;  ///< empty while arm_problems is not
    std::string database_path;    ///< the file's name, shown in the header and the command
    std::string generated_at;     ///< ISO-8601 UTC to the second
    /// Runs whose stored arm cannot be read (storedArmProblem): with any, nothing is
    /// analysed, since the verdict would judge such a run as the default arm.
    std::vector<std::string> arm_problems;
    /// An advice's experiment (analysis::isAdvice): the advice read from it.
    std::optional<Advice> advice;
};

/// Empty when `path` can be written: its folder exists and is writable, and the file,
/// if present, is a writable file. Otherwise why not, naming the path.
std::string checkWritable(const std::string& path);
/// checkWritable and store::outputClash for every file named: the first problem, or
/// empty. Run before any work, so a long report never fails at its last file.
std::string checkOutputs(const ReportFiles& files, const std::string& db_path);
/// Writes all or nothing (a temporary file renamed into place), never over the
/// database or its companions; empty on success, else the message.
std::string saveOutput(const std::string& path, const std::string& db_path, std::string_view bytes);

/// Loads and analyses experiment `experiment_id`; nullopt when there is none.
std::optional<PreparedReport> prepareReport(const store::Database& db, int64_t experiment_id,
                                            const AnalysisOptions& options = {});

/// The JSON report: summary, gains and verdicts, with when and from which file.
std::string reportJsonText(const PreparedReport& report);

/// Writes the CSV (every metric row, long format, read from `db`) and the JSON that
/// `files` name, in that order; each path written is added to `written`. Empty, or the
/// first failure (nothing after it is written).
std::string writeDataFiles(const store::Database& db, const PreparedReport& report,
                           const ReportFiles& files, std::vector<std::string>& written);

}  // namespace ampbench::analysis
