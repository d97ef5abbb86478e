#include "cli/ReportQt.h"

#include <QApplication>
#include <cstdio>

#include "ui/report/ReportWriter.h"

namespace ampbench::cli {
namespace {

/// Qt's warning about a missing XDG_RUNTIME_DIR means nothing to a headless report.
void quietQtMessages(QtMsgType type, const QMessageLogContext&, const QString& message) {
    if (type == QtDebugMsg || type == QtInfoMsg || message.startsWith("QStandardPaths:")) {
        return;
    }
    std::fprintf(stderr, "%s\n", message.toLocal8Bit().constData());
}

}  // namespace

QtReportResult writeQtReports(const store::Database& db, analysis::PreparedReport prepared,
                              const analysis::ReportFiles& files) {
    // Plots are QCustomPlot widgets drawn into images: a QApplication on the offscreen
    // platform, so the report works on a server without a display.
    qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler(quietQtMessages);
    static int argc = 1;
    static char name[] = "ampbench-cli";
    static char* argv[] = {name, nullptr};
    QApplication qt(argc, argv);

    // The caller has printed the analysis' warnings already.
    report::ReportContent content(std::move(prepared));
    const report::ReportResult r = report::writeReports(content, db, files);
    QtReportResult result;
    result.written = r.written;
    result.error = r.error;
    return result;
}

std::string qtRuntimeVersion() {
    return qVersion();
}

}  // namespace ampbench::cli
