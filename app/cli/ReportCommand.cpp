#include "cli/ReportCommand.h"

#include <cstdio>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/OpenDatabase.h"
#include "cli/Terminal.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/ExperimentData.h"
#include "core/analysis/Format.h"
#include "core/analysis/Report.h"
#include "core/store/Database.h"

#ifdef AMPBENCH_REPORTS_WITH_QT
#include "cli/ReportQt.h"
#endif

namespace ampbench::cli {
namespace fs = std::filesystem;
namespace {}  // namespace

bool reportsHaveQt() {
#ifdef AMPBENCH_REPORTS_WITH_QT
    return true;
#else
    return false;
#endif
}

std::string reportFormats() {
    return reportsHaveQt() ? "JSON, CSV, HTML, PDF" : "JSON, CSV";
}

CLI::App* addReportCommand(CLI::App& app, ReportOptions& o) {
    const std::string without_qt =
        reportsHaveQt() ? "" : " (this build has no Qt: HTML and PDF need a build with it)";
    auto* report = app.add_subcommand(
        "report", "write an experiment's report: verdict per arm, tables, plots, specs; as " +
                      reportFormats() + without_qt);
    report->add_option("EXPERIMENT", o.experiment_id, "experiment id (see `list`)")->required();
    report->add_option("--html", o.html, "self-contained HTML file" + without_qt);
    report->add_option("--pdf", o.pdf, "PDF file" + without_qt);
    report->add_option("--csv", o.csv, "CSV of every metric row (long format)");
    report->add_option("--json", o.json, "JSON: summary, gains and verdicts");
    report->add_option("--baseline", o.baseline,
                       "arm the others are judged against (default: the spec's first arm)");
    return report;
}

int commandReport(const std::string& db_path, const ReportOptions& o) {
    if (o.html.empty() && o.pdf.empty() && o.csv.empty() && o.json.empty()) {
        say(stderr, "report: give at least one of %s FILE\n",
            reportsHaveQt() ? "--html, --pdf, --csv, --json" : "--csv, --json");
        return kUsage;
    }
    if (!reportsHaveQt() && (!o.html.empty() || !o.pdf.empty())) {
        say(stderr,
            "report: this ampbench-cli was built without Qt and writes reports as %s only; "
            "--html and --pdf need a build with Qt (the ampbench package, or "
            "-DAMPBENCH_BUILD_GUI=ON); `show -e %lld --json` prints the analysis\n",
            reportFormats().c_str(), static_cast<long long>(o.experiment_id));
        return kUsage;
    }
    std::unique_ptr<store::Database> db = openOrSay(db_path, store::Database::Mode::ReadOnly);
    if (!db) {
        return kStoreError;
    }
    const auto experiment = db->experiment(o.experiment_id);
    if (!experiment) {
        say(stderr, "no experiment %lld in %s (see `ampbench-cli list`)\n",
            static_cast<long long>(o.experiment_id), db_path.c_str());
        return kNotFound;
    }
    if (!experiment->trashed_at.empty()) {
        say(stderr,
            "note: experiment %lld is in the trash (since %s); reporting it all "
            "the same\n",
            static_cast<long long>(o.experiment_id), experiment->trashed_at.c_str());
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
            say(stderr, "--baseline %s: experiment %lld has no such arm (arms: %s)\n",
                o.baseline.c_str(), static_cast<long long>(o.experiment_id), arms.c_str());
            return kUsage;
        }
    }
    const analysis::ReportFiles files{o.html, o.pdf, o.csv, o.json, o.baseline};
    if (std::string error = analysis::checkOutputs(files, db->path()); !error.empty()) {
        say(stderr, "%s\n", error.c_str());
        return kIoError;
    }
    // Loaded and analysed once, for every format.
    analysis::AnalysisOptions options;
    options.baseline = o.baseline;
    auto prepared = analysis::prepareReport(*db, o.experiment_id, options);
    if (!prepared) {
        say(stderr, "no experiment %lld in %s\n", static_cast<long long>(o.experiment_id),
            db_path.c_str());
        return kNotFound;
    }
    if (!prepared->arm_problems.empty()) {
        for (const auto& problem : prepared->arm_problems) {
            say(stderr, "%s: %s\n", db_path.c_str(), analysis::printable(problem, false).c_str());
        }
        say(stderr, "report: nothing was written; the verdicts read each run's arm\n");
        return kStoreError;
    }
    for (const auto& r : prepared->analysis.incomplete) {
        say(stderr, "warning: incomplete, left out: %s\n", r.describe().c_str());
    }
    for (const auto& w : prepared->analysis.warnings) {
        say(stderr, "warning: %s\n", w.c_str());
    }
    std::vector<std::string> written;
    std::string error;
#ifdef AMPBENCH_REPORTS_WITH_QT
    if (!o.html.empty() || !o.pdf.empty()) {  // Qt only where HTML or PDF is asked for
        try {
            QtReportResult r = writeQtReports(*db, std::move(*prepared), files);
            written = std::move(r.written);
            error = std::move(r.error);
        } catch (const std::exception& e) {
            say(stderr, "report failed: %s\n", e.what());
            return kStoreError;
        }
    } else
#endif
    {
        error = analysis::writeDataFiles(*db, *prepared, files, written);
    }
    for (const auto& path : written) {
        say(stdout, "wrote %s\n", path.c_str());
    }
    if (!error.empty()) {
        say(stderr, "%s\n", error.c_str());
        return kIoError;
    }
    return kOk;
}

}  // namespace ampbench::cli
