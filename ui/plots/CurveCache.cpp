#include "ui/plots/CurveCache.h"

namespace ampbench::ui {

Curve::Curve(std::vector<double> x, std::vector<double> y) {
    const size_t n = std::min(x.size(), y.size());
    x.resize(n);
    y.resize(n);
    points_.x = std::move(x);
    points_.y = std::move(y);
}

CurveData Curve::drawn(double lo, double hi, size_t buckets) const {
    if (drawn_ && lo == lo_ && hi == hi_ && buckets == buckets_) {
        return drawn_;
    }
    const auto kept = analysis::decimateMinMax(points_.x, points_.y, lo, hi, buckets);
    QVector<QCPGraphData> out;
    out.reserve(static_cast<qsizetype>(kept.size()));
    for (size_t i : kept) {
        out.append(QCPGraphData(points_.x[i], points_.y[i]));
    }
    drawn_.reset(new QCPGraphDataContainer);
    drawn_->set(out, true);
    lo_ = lo;
    hi_ = hi;
    buckets_ = buckets;
    return drawn_;
}

void Curve::append(const std::vector<double>& x, const std::vector<double>& y) {
    const size_t n = std::min(x.size(), y.size());
    points_.x.insert(points_.x.end(), x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
    points_.y.insert(points_.y.end(), y.begin(), y.begin() + static_cast<std::ptrdiff_t>(n));
    drawn_.reset();
}

QSharedPointer<Curve> makeCurve(std::vector<double> x, std::vector<double> y) {
    return QSharedPointer<Curve>(new Curve(std::move(x), std::move(y)));
}

CurvePtr CurveCache::get(qint64 runId, const QString& name, uint64_t revision,
                         const QString& options,
                         const std::function<QSharedPointer<Curve>()>& build) {
    Entry& e = entries_[qMakePair(runId, name)];
    if (!e.data || e.revision != revision || e.options != options || e.rows > 0) {
        e.data = build();
        e.revision = revision;
        e.options = options;
        e.rows = 0;
    }
    return e.data;
}

const analysis::StepColumns& CurveCache::columns(qint64 runId,
                                                 const std::vector<run::StepRecord>& steps,
                                                 analysis::XAxis axis) {
    Columns& c = columns_[runId];
    if (c.rows != steps.size() || c.data.axis != axis || c.data.values.empty()) {
        c.data = analysis::stepColumns(steps, axis);
        c.rows = steps.size();
    }
    return c.data;
}

const analysis::StepColumns* CurveCache::readColumns(qint64 runId, size_t rows) const {
    const auto it = columns_.constFind(runId);
    return it != columns_.constEnd() && it->rows == rows && !it->data.values.empty() ? &it->data
                                                                                     : nullptr;
}

CurvePtr CurveCache::stepCurve(qint64 runId, const QString& name, const QString& options,
                               const std::vector<run::StepRecord>& steps, analysis::XAxis axis,
                               analysis::StepMetric metric, bool log) {
    auto values = [metric, log](std::vector<double> v) {
        return log ? analysis::forLogAxis(std::move(v)) : v;
    };
    Entry& e = entries_[qMakePair(runId, name)];
    const bool grown = e.data && e.options == options && e.rows > 0 && steps.size() >= e.rows &&
                       steps[e.rows - 1].step == e.lastStep;
    if (grown && steps.size() == e.rows) {
        return e.data;
    }
    if (grown) {
        const std::vector<run::StepRecord> tail(steps.begin() + static_cast<std::ptrdiff_t>(e.rows),
                                                steps.end());
        e.data->append(analysis::stepXs(tail, axis), values(analysis::stepValues(tail, metric)));
    } else {
        const analysis::StepColumns& c = columns(runId, steps, axis);
        e.data = makeCurve(c.x, values(c.of(metric)));
    }
    e.options = options;
    e.rows = steps.size();
    e.lastStep = steps.empty() ? 0 : steps.back().step;
    return e.data;
}

void CurveCache::retain(const QList<qint64>& runIds) {
    for (auto it = entries_.begin(); it != entries_.end();) {
        it = runIds.contains(it.key().first) ? std::next(it) : entries_.erase(it);
    }
}

}  // namespace ampbench::ui
