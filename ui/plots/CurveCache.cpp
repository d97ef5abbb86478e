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

CurvePtr CurveCache::stepCurve(qint64 runId, const QString& name, const QString& options,
                               const std::vector<run::StepRecord>& steps, const StepValues& xs,
                               const StepValues& values) {
    Entry& e = entries_[qMakePair(runId, name)];
    const bool grown = e.data && e.options == options && e.rows > 0 && steps.size() >= e.rows &&
                       steps[e.rows - 1].step == e.lastStep;
    if (grown && steps.size() == e.rows) {
        return e.data;
    }
    if (grown) {
        const std::vector<run::StepRecord> tail(steps.begin() + static_cast<std::ptrdiff_t>(e.rows),
                                                steps.end());
        e.data->append(xs(tail), values(tail));
    } else {
        e.data = makeCurve(xs(steps), values(steps));
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
