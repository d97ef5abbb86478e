#pragma once
// What a report shows, gathered once: the experiment's rows and their analysis
// (core/analysis/Report.h, shared with the CLI), and the plots. Built in two steps so
// the GUI can do the slow, widget-free part on a worker thread and only the plotting
// on the GUI thread.
#include <QImage>
#include <QString>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/ExperimentData.h"
#include "core/analysis/Report.h"
#include "core/store/Database.h"

namespace ampbench::report {

struct PlotImage {
    QString id;  ///< stable name: "loss", "validation", "memory", "step-time", "loss-scale"
    QString title;
    QString caption;  ///< one sentence on how to read it
    QImage image;
    int display_width = 0;  ///< logical pixels; the image holds more for sharp print
};

/// The prepared report (core: rows, analysis, file name, time) and its plots.
struct ReportContent : analysis::PreparedReport {
    ReportContent() = default;
    explicit ReportContent(analysis::PreparedReport prepared)
        : analysis::PreparedReport(std::move(prepared)) {}
    std::vector<PlotImage> plots;  ///< empty until renderPlots() ran (GUI thread)
};

/// analysis::prepareReport for the report's renderers; nullopt when the id does not
/// exist; std::runtime_error naming a run whose stored arm cannot be read. Touches no
/// widget, so it may run on any thread with that thread's own Database connection.
std::optional<ReportContent> prepareReport(const store::Database& db, int64_t experiment_id,
                                           const analysis::AnalysisOptions& options = {});

}  // namespace ampbench::report
