#include "ui/report/ReportContent.h"

#include <stdexcept>

namespace ampbench::report {

std::optional<ReportContent> prepareReport(const store::Database& db, int64_t experiment_id,
                                           const analysis::AnalysisOptions& options) {
    auto prepared = analysis::prepareReport(db, experiment_id, options);
    if (!prepared) {
        return std::nullopt;
    }
    if (!prepared->arm_problems.empty()) {
        // Else judged as the default arm.
        throw std::runtime_error(db.path() + ": " + prepared->arm_problems.front());
    }
    return ReportContent(std::move(*prepared));
}

}  // namespace ampbench::report
