#include "core/analysis/Report.h"

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "core/analysis/AnalysisJson.h"
#include "core/store/Export.h"
#include "core/store/OutputFile.h"
#include "core/util/Format.h"

namespace ampbench::analysis {
namespace fs = std::filesystem;
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

std::string checkOutputs(const ReportFiles& files, const std::string& db_path) {
    for (const auto* path : {&files.html, &files.pdf, &files.csv, &files.json}) {
        if (path->empty()) {
            continue;
        }
        std::string error = store::outputClash(*path, db_path);
        if (error.empty()) {
            error = checkWritable(*path);
        }
        if (!error.empty()) {
            return error;
        }
    }
    return {};
}

std::string saveOutput(const std::string& path, const std::string& db_path,
                       std::string_view bytes) {
    if (std::string clash = store::outputClash(path, db_path); !clash.empty()) {
        return clash;
    }
    try {
        store::writeFileAtomically(path, bytes);
    } catch (const store::OutputError& e) {
        return e.what();
    }
    return {};
}

std::optional<PreparedReport> prepareReport(const store::Database& db, int64_t experiment_id,
                                            const AnalysisOptions& options) {
    auto data = loadExperiment(db, experiment_id);
    if (!data) {
        return std::nullopt;
    }
    PreparedReport r;
    for (const auto& run : data->runs) {
        if (std::string problem = storedArmProblem(run.row); !problem.empty()) {
            r.arm_problems.push_back(std::move(problem));
        }
    }
    if (r.arm_problems.empty()) {
        r.analysis = analyzeExperiment(*data, options);
        if (isAdvice(*data)) {
            r.advice = readAdvice(*data, r.analysis);
        }
    }
    r.data = std::move(*data);
    r.database_path = fs::path(db.path()).filename().string();
    r.generated_at = util::utcNowText();
    return r;
}

std::string reportJsonText(const PreparedReport& report) {
    nlohmann::json j = reportJson(report.data, report.analysis);
    j["generated_at"] = report.generated_at;
    j["database"] = report.database_path;
    // Text a database written before held as raw bytes is written with U+FFFD.
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string writeDataFiles(const store::Database& db, const PreparedReport& report,
                           const ReportFiles& files, std::vector<std::string>& written) {
    if (!files.csv.empty()) {
        std::vector<int64_t> ids;
        for (const auto& r : report.data.runs) {
            ids.push_back(r.row.id);
        }
        std::ostringstream csv;
        store::exportCsv(db, ids, csv);
        if (std::string error = saveOutput(files.csv, db.path(), csv.str()); !error.empty()) {
            return error;
        }
        written.push_back(files.csv);
    }
    if (!files.json.empty()) {
        if (std::string error = saveOutput(files.json, db.path(), reportJsonText(report));
            !error.empty()) {
            return error;
        }
        written.push_back(files.json);
    }
    return {};
}

}  // namespace ampbench::analysis
