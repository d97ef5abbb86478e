#pragma once
#include <qcustomplot.h>
#include <QHash>
#include <QList>
#include <QPair>
#include <QSharedPointer>
#include <QString>
#include <functional>
#include <vector>

namespace ampbench::ui {

/// Plot-ready points of one curve (keys sorted), shared with the graphs that
/// show them: QCPGraph::setData() of a shared container copies nothing.
using CurveData = QSharedPointer<QCPGraphDataContainer>;

/// Points from parallel x and y (x non-decreasing).
CurveData makeCurveData(const std::vector<double>& x, const std::vector<double>& y);

/// Curves built from a run's rows, kept while the run's revision and the plot
/// options they were built with stay the same: a redraw rebuilds only the runs
/// that changed (the live one), not every long finished run. GUI thread only.
class CurveCache {
  public:
    /// The curve `name` of run `runId`: the cached one when it was built from
    /// `revision` with `options`, else what `build` returns (and is kept).
    CurveData get(qint64 runId, const QString& name, uint64_t revision, const QString& options,
                  const std::function<CurveData()>& build);
    /// Forgets the curves of runs not in `runIds`.
    void retain(const QList<qint64>& runIds);
    int size() const { return static_cast<int>(entries_.size()); }

  private:
    struct Entry {
        uint64_t revision = 0;
        QString options;
        CurveData data;
    };
    QHash<QPair<qint64, QString>, Entry> entries_;
};

}  // namespace ampbench::ui
