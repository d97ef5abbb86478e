#include "ui/report/ReportContent.h"

#include <QDateTime>
#include <QFileInfo>
#include <stdexcept>

namespace ampbench::report {

std::optional<ReportContent> prepareReport(const store::Database& db, int64_t experiment_id,
                                           const analysis::AnalysisOptions& options) {
    auto data = analysis::loadExperiment(db, experiment_id);
    if (!data) {
        return std::nullopt;
    }
    for (const auto& r : data->runs) {
        if (std::string problem = analysis::storedArmProblem(r.row); !problem.empty()) {
            throw std::runtime_error(db.path() + ": " + problem);  // else judged as the default arm
        }
    }
    ReportContent c;
    c.analysis = analysis::analyzeExperiment(*data, options);
    c.data = std::move(*data);
    c.database_path = QFileInfo(QString::fromStdString(db.path())).fileName().toStdString();
    c.generated_at = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    return c;
}

}  // namespace ampbench::report
