#include "ui/CurveCache.h"

namespace ampbench::ui {

CurveData makeCurveData(const std::vector<double>& x, const std::vector<double>& y) {
    QVector<QCPGraphData> points;
    const size_t n = std::min(x.size(), y.size());
    points.reserve(static_cast<qsizetype>(n));
    for (size_t i = 0; i < n; ++i) {
        points.append(QCPGraphData(x[i], y[i]));
    }
    CurveData data(new QCPGraphDataContainer);
    data->set(points, true);
    return data;
}

CurveData CurveCache::get(qint64 runId, const QString& name, uint64_t revision,
                          const QString& options, const std::function<CurveData()>& build) {
    Entry& e = entries_[qMakePair(runId, name)];
    if (!e.data || e.revision != revision || e.options != options) {
        e.data = build();
        e.revision = revision;
        e.options = options;
    }
    return e.data;
}

void CurveCache::retain(const QList<qint64>& runIds) {
    for (auto it = entries_.begin(); it != entries_.end();) {
        it = runIds.contains(it.key().first) ? std::next(it) : entries_.erase(it);
    }
}

}  // namespace ampbench::ui
