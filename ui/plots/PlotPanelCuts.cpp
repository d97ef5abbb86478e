// PlotPanel's curve cutting: each curve cut to a few points per pixel column of the
// range on show (min/max kept), again whenever zoom or pan needs it, and antialiasing
// only where a graph draws at most a point per column.
#include <algorithm>

#include "ui/plots/PlotPanel.h"

namespace ampbench::ui {

void PlotPanel::setCurve(QCPGraph* graph, const CurvePtr& curve) {
    DrawnCurve& d = drawn_[graph];
    d.curve = curve;
    d.penWidth = graph->pen().widthF();
    cutCurve(graph, d, !userView_);
}

CurvePtr PlotPanel::curveOf(QCPGraph* graph) const {
    return drawn_.value(graph).curve;
}

size_t PlotPanel::bucketCount() const {
    return static_cast<size_t>(std::max(kMinBuckets, axisRect()->width()));
}

void PlotPanel::cutCurve(QCPGraph* graph, DrawnCurve& d, bool whole) const {
    if (!d.curve || d.curve->isEmpty()) {
        graph->data()->clear();
        d.lo = d.hi = 0;
        d.buckets = 0;
        return;
    }
    const size_t px = bucketCount();
    if (whole) {
        d.lo = d.curve->firstKey();
        d.hi = d.curve->lastKey();
        d.buckets = px;
    } else {
        // The range on show and half of it either side, so small pans keep the cut.
        const QCPRange r = graph->keyAxis()->range();
        d.lo = r.lower - r.size() / 2;
        d.hi = r.upper + r.size() / 2;
        d.buckets = 2 * px;
    }
    graph->setData(d.curve->drawn(d.lo, d.hi, d.buckets));
    const bool dense = graph->dataCount() > axisRect()->width();
    graph->setAntialiased(!dense);
    QPen pen = graph->pen();
    pen.setWidthF(dense ? 1.0 : d.penWidth);
    graph->setPen(pen);
}

bool PlotPanel::needsCut(const QCPGraph* graph, const DrawnCurve& d) const {
    if (!d.curve || d.curve->isEmpty()) {
        return false;
    }
    const QCPRange r = graph->keyAxis()->range();
    const double lo = std::max(r.lower, d.curve->firstKey());
    const double hi = std::min(r.upper, d.curve->lastKey());
    if (lo > hi) {
        return false;  // none of it on show
    }
    if (lo < d.lo || hi > d.hi) {
        return true;  // part on show was left out of the cut
    }
    const double slice = (d.hi - d.lo) / static_cast<double>(std::max<size_t>(1, d.buckets));
    return slice > r.size() / static_cast<double>(bucketCount());  // coarser than a pixel
}

void PlotPanel::cutCurvesForReplot() {
    for (auto it = drawn_.begin(); it != drawn_.end(); ++it) {
        if (needsCut(it.key(), it.value())) {
            const QCPRange r = it.key()->keyAxis()->range();
            const Curve& c = *it.value().curve;
            cutCurve(it.key(), it.value(), r.lower <= c.firstKey() && r.upper >= c.lastKey());
        }
    }
}

void PlotPanel::limitAntialiasing() {
    const int px = axisRect()->width();
    for (int i = 0; i < graphCount(); ++i) {
        graph(i)->setAntialiased(graph(i)->dataCount() <= px);
    }
}

}  // namespace ampbench::ui
