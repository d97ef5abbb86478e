#include "cli/ReportCommand.h"

#include <QApplication>
#include <cstdio>

#include "cli/ExitCodes.h"
#include "core/store/Database.h"
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

CLI::App* addReportCommand(CLI::App& app, ReportOptions& o) {
    auto* report = app.add_subcommand(
        "report", "write an experiment's report: verdict per arm, tables, plots, specs");
    report->add_option("EXPERIMENT", o.experiment_id, "experiment id (see `list`)")->required();
    report->add_option("--html", o.html, "self-contained HTML file");
    report->add_option("--pdf", o.pdf, "PDF file");
    report->add_option("--csv", o.csv, "CSV of every metric row (long format)");
    report->add_option("--json", o.json, "JSON: summary, gains and verdicts");
    report->add_option("--baseline", o.baseline,
                       "arm the others are judged against (default: the spec's first arm)");
    return report;
}

int commandReport(const std::string& db_path, const ReportOptions& o) {
    const report::ReportRequest request{o.html, o.pdf, o.csv, o.json, o.baseline};
    if (request.empty()) {
        std::fprintf(stderr, "report: give at least one of --html, --pdf, --csv, --json FILE\n");
        return kUsage;
    }
    std::unique_ptr<store::Database> db;
    try {
        db = store::Database::open(db_path, store::Database::Mode::ReadOnly);
    } catch (const store::StoreError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return kStoreError;
    }
    if (!db->experiment(o.experiment_id)) {
        std::fprintf(stderr, "no experiment %lld in %s (see `ampbench-cli list`)\n",
                     static_cast<long long>(o.experiment_id), db_path.c_str());
        return kNotFound;
    }
    if (!o.baseline.empty()) {
        std::string arms;
        bool known = false;
        for (const auto& run : db->runs(o.experiment_id)) {
            known = known || run.arm == o.baseline;
            if (arms.find(run.arm) == std::string::npos) {
                arms += (arms.empty() ? "" : ", ") + run.arm;
            }
        }
        if (!known) {
            std::fprintf(stderr, "--baseline %s: experiment %lld has no such arm (arms: %s)\n",
                         o.baseline.c_str(), static_cast<long long>(o.experiment_id), arms.c_str());
            return kUsage;
        }
    }
    // Plots are QCustomPlot widgets drawn into images: a QApplication on the offscreen
    // platform, so the report works on a server without a display.
    qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler(quietQtMessages);
    static int argc = 1;
    static char name[] = "ampbench-cli";
    static char* argv[] = {name, nullptr};
    QApplication qt(argc, argv);

    report::ReportResult result;
    try {
        result = report::writeReports(*db, o.experiment_id, request);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "report failed: %s\n", e.what());
        return kStoreError;
    }
    for (const auto& w : result.warnings) {
        std::fprintf(stderr, "warning: %s\n", w.c_str());
    }
    for (const auto& path : result.written) {
        std::printf("wrote %s\n", path.c_str());
    }
    switch (result.failure) {
        case report::ReportResult::Failure::None:
            return kOk;
        case report::ReportResult::Failure::NotFound:
            std::fprintf(stderr, "%s\n", result.error.c_str());
            return kNotFound;
        case report::ReportResult::Failure::Io:
            std::fprintf(stderr, "%s\n", result.error.c_str());
            return kIoError;
    }
    return kOk;
}

}  // namespace ampbench::cli
