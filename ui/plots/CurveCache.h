#pragma once
#include <qcustomplot.h>
#include <QHash>
#include <QList>
#include <QPair>
#include <QSharedPointer>
#include <QString>
#include <functional>
#include <vector>

#include "core/analysis/Decimation.h"
#include "core/analysis/PlotSeries.h"
#include "core/run/Records.h"

namespace ampbench::ui {

/// Plot-ready points of one curve (keys sorted), shared with the graphs that
/// show them: QCPGraph::setData() of a shared container copies nothing.
using CurveData = QSharedPointer<QCPGraphDataContainer>;

/// A curve at full resolution, and the decimated points it last handed to a
/// graph: a redraw over the same x range and width reuses them without a copy.
/// GUI thread only (drawn() updates the memo).
class Curve {
  public:
    Curve(std::vector<double> x, std::vector<double> y);

    const ampbench::analysis::XYCurve& points() const { return points_; }
    size_t size() const { return points_.x.size(); }
    bool isEmpty() const { return points_.x.empty(); }
    double firstKey() const { return points_.x.front(); }
    double lastKey() const { return points_.x.back(); }

    /// The points worth drawing of [lo, hi] cut into `buckets` slices (see
    /// analysis::decimateMinMax); the same container while the arguments repeat
    /// and no points were appended.
    CurveData drawn(double lo, double hi, size_t buckets) const;
    /// Appends points (x not below lastKey()); forgets the last cut.
    void append(const std::vector<double>& x, const std::vector<double>& y);

  private:
    ampbench::analysis::XYCurve points_;
    mutable double lo_ = 0, hi_ = 0;  // the memo: what drawn_ was cut for
    mutable size_t buckets_ = 0;
    mutable CurveData drawn_;
};
using CurvePtr = QSharedPointer<const Curve>;

QSharedPointer<Curve> makeCurve(std::vector<double> x, std::vector<double> y);

/// Curves built from a run's rows, kept while the run's revision and the plot
/// options they were built with stay the same: a redraw rebuilds only the runs
/// that changed (the live one), not every long finished run. GUI thread only.
class CurveCache {
  public:
    /// The curve `name` of run `runId`: the cached one when it was built from
    /// `revision` with `options`, else what `build` returns (and is kept).
    CurvePtr get(qint64 runId, const QString& name, uint64_t revision, const QString& options,
                 const std::function<QSharedPointer<Curve>()>& build);
    /// The per-step curve `name` of run `runId` (x on `axis`, y `metric`, for a log
    /// axis when `log`): the cached one while it was built with `options` from the
    /// first steps of `steps`, extended by the steps appended since (a live run, a
    /// long run read in slices), so growing costs the new rows only; else built
    /// anew from the run's columns (columns()).
    CurvePtr stepCurve(qint64 runId, const QString& name, const QString& options,
                       const std::vector<ampbench::run::StepRecord>& steps,
                       ampbench::analysis::XAxis axis, ampbench::analysis::StepMetric metric,
                       bool log);
    /// Every metric of run `runId` on `axis`, read in one pass and kept until
    /// endRedraw(): the curves one redraw rebuilds (a new x-axis: all of them)
    /// share it.
    const ampbench::analysis::StepColumns& columns(
        qint64 runId, const std::vector<ampbench::run::StepRecord>& steps,
        ampbench::analysis::XAxis axis);
    /// The columns columns() read this redraw for these rows of run `runId`, or null.
    const ampbench::analysis::StepColumns* readColumns(qint64 runId, size_t rows) const;
    /// Forgets the columns (they are as large as the curves).
    void endRedraw() { columns_.clear(); }
    /// Forgets the curves of runs not in `runIds`.
    void retain(const QList<qint64>& runIds);
    void clear() {
        entries_.clear();
        columns_.clear();
    }
    int size() const { return static_cast<int>(entries_.size()); }

  private:
    struct Entry {
        uint64_t revision = 0;
        QString options;
        QSharedPointer<Curve> data;  // grown in place by stepCurve
        size_t rows = 0;             // stepCurve: steps it was built from
        int64_t lastStep = 0;        // stepCurve: step number of the last of them
    };
    struct Columns {
        size_t rows = 0;
        ampbench::analysis::StepColumns data;
    };
    QHash<QPair<qint64, QString>, Entry> entries_;
    QHash<qint64, Columns> columns_;
};

}  // namespace ampbench::ui
