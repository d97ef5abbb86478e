#include "cli/ReportCommand.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/Terminal.h"
#include "core/analysis/AnalysisJson.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/ExperimentData.h"
#include "core/store/Database.h"
#include "core/store/Export.h"
#include "core/store/OutputFile.h"

#ifdef AMPBENCH_REPORTS_WITH_QT
#include "cli/ReportQt.h"
#endif

namespace ampbench::cli {
namespace fs = std::filesystem;
namespace {

/// Empty when `path` can be written: its folder exists and is writable, and the
/// file, if present, is a writable file. Otherwise why not, checked before any
/// work so a long report never fails at its last file.
std::string checkWritable(const std::string& path) {
    std::error_code ec;
    const fs::path file = fs::absolute(path, ec);
    const fs::path dir = file.parent_path();
    if (fs::is_directory(file, ec)) {
        return "cannot write " + path + ": it is a folder";
    }
    if (!fs::is_directory(dir, ec)) {
        return "cannot write " + path + ": folder " + dir.string() + " does not exist";
    }
    if (access(dir.c_str(), W_OK) != 0) {
        return "cannot write " + path + ": folder " + dir.string() + " is not writable";
    }
    if (fs::exists(file, ec) && access(file.c_str(), W_OK) != 0) {
        return "cannot write " + path + ": the file is read-only";
    }
    return {};
}

/// ISO-8601 UTC to the second, as the HTML report's header writes it.
std::string utcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

/// Writes all or nothing; empty on success, else the message.
std::string save(const std::string& path, const std::string& database, const std::string& text) {
    if (std::string clash = store::outputClash(path, database); !clash.empty()) {
        return clash;
    }
    try {
        store::writeFileAtomically(path, text);
    } catch (const store::OutputError& e) {
        return e.what();
    }
    return {};
}

}  // namespace

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
    std::unique_ptr<store::Database> db;
    try {
        db = store::Database::open(db_path, store::Database::Mode::ReadOnly);
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
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
    for (const auto* path : {&o.html, &o.pdf, &o.csv, &o.json}) {
        if (path->empty()) {
            continue;
        }
        std::string error = store::outputClash(*path, db->path());
        if (error.empty()) {
            error = checkWritable(*path);
        }
        if (!error.empty()) {
            say(stderr, "%s\n", error.c_str());
            return kIoError;
        }
    }

    auto data = analysis::loadExperiment(*db, o.experiment_id);
    if (!data) {
        say(stderr, "no experiment %lld in %s\n", static_cast<long long>(o.experiment_id),
            db_path.c_str());
        return kNotFound;
    }
    if (!storedArmsReadable(*data, db_path)) {
        say(stderr, "report: nothing was written; the verdicts read each run's arm\n");
        return kStoreError;
    }
    analysis::AnalysisOptions options;
    options.baseline = o.baseline;
    const auto analysis = analysis::analyzeExperiment(*data, options);
    for (const auto& r : analysis.incomplete) {
        say(stderr, "warning: incomplete, left out: %s\n", r.describe().c_str());
    }
    for (const auto& w : analysis.warnings) {
        say(stderr, "warning: %s\n", w.c_str());
    }

#ifdef AMPBENCH_REPORTS_WITH_QT
    if (!o.html.empty() || !o.pdf.empty()) {
        QtReportResult r;
        try {
            r = writeQtReports(*db, o.experiment_id, {o.html, o.pdf, o.baseline});
        } catch (const std::exception& e) {
            say(stderr, "report failed: %s\n", e.what());
            return kStoreError;
        }
        for (const auto& path : r.written) {
            say(stdout, "wrote %s\n", path.c_str());
        }
        if (!r.error.empty()) {
            say(stderr, "%s\n", r.error.c_str());
            return r.not_found ? kNotFound : kIoError;
        }
    }
#endif
    if (!o.csv.empty()) {
        std::vector<int64_t> ids;
        for (const auto& r : data->runs) {
            ids.push_back(r.row.id);
        }
        std::ostringstream csv;
        store::exportCsv(*db, ids, csv);
        if (std::string error = save(o.csv, db->path(), csv.str()); !error.empty()) {
            say(stderr, "%s\n", error.c_str());
            return kIoError;
        }
        say(stdout, "wrote %s\n", o.csv.c_str());
    }
    if (!o.json.empty()) {
        nlohmann::json j = analysis::reportJson(*data, analysis);
        j["generated_at"] = utcNow();
        j["database"] = fs::path(db->path()).filename().string();
        if (std::string error = save(o.json, db->path(), j.dump(2) + "\n"); !error.empty()) {
            say(stderr, "%s\n", error.c_str());
            return kIoError;
        }
        say(stdout, "wrote %s\n", o.json.c_str());
    }
    return kOk;
}

}  // namespace ampbench::cli
