// PlotPanel's axes policy: the fit to the visible data and what keeps it possible (one
// key, a flat series, x from 0), the user's view and a linked panel's x range, and axes
// without numbers while there is no point.
#include <QHash>
#include <algorithm>
#include <cmath>

#include "ui/plots/PlotPanel.h"

namespace ampbench::ui {

void PlotPanel::followXRange(const QCPRange& range) {
    userView_ = true;
    following_ = true;
    xAxis->setRange(range);
    following_ = false;
    replot(rpQueuedReplot);
}

bool PlotPanel::hasPoints() {
    for (int i = 0; i < plottableCount(); ++i) {
        QCPAbstractPlottable* p = plottable(i);
        auto* graph = qobject_cast<QCPGraph*>(p);
        const CurvePtr curve = graph ? curveOf(graph) : CurvePtr();
        QCPPlottableInterface1D* points = p->interface1D();
        if (curve ? !curve->isEmpty() : points && points->dataCount() > 0) {
            return true;
        }
    }
    return false;
}

void PlotPanel::blankAxesWhileEmpty() {
    blank_ = !hasPoints();
    paintAxisValues();
}

void PlotPanel::paintAxisValues() {
    // Transparent rather than switched off: the axes keep their room, so nothing moves
    // when the first point arrives. Arms named under bars are no values: they stay.
    const QColor text = palette().color(QPalette::Text);
    const QColor values = blank_ ? QColor(Qt::transparent) : text;
    const bool categories = categoryTicker_ && xAxis->ticker() == categoryTicker_;
    for (QCPAxis* axis : {xAxis, yAxis, xAxis2, yAxis2}) {
        const QColor c = axis == xAxis && categories ? text : values;
        axis->setTickPen(QPen(c, 1));
        axis->setSubTickPen(QPen(c, 1));
        axis->setTickLabelColor(c);
    }
}

void PlotPanel::fitUnlessUserView() {
    if (!userView_) {
        for (auto it = drawn_.begin(); it != drawn_.end(); ++it) {
            cutCurve(it.key(), it.value(), true);  // whole curves, so the fit sees all of them
        }
        rescaleAxes(true);
        keepAxesPossible();
        yAxis->scaleRange(1.06, yAxis->range().center());
        // Room after the last point: a marker there (the evaluation at a run's end) was
        // cut in half by the edge, and runs evaluated only at their end showed nothing
        // else. A share of the range, so panels over the same runs keep equal ranges.
        if (!(categoryTicker_ && xAxis->ticker() == categoryTicker_)) {
            const QCPRange x = xAxis->range();
            xAxis->setRangeUpper(x.upper + kEndRoom * x.size());
        }
    }
}

void PlotPanel::keepAxesPossible() {
    // Data of one key (a run's first point): QCustomPlot keeps the old width around it,
    // which put it between -4000 and 4000 samples. From 0 to twice it instead; and the
    // same on a value axis whose data is one value.
    QHash<QCPAxis*, QCPRange> data;
    // Found or widened, never read through operator[] first: that put a default 0 in
    // every range (0 to 617.44 MiB for a flat line at 617.4).
    const auto take = [&data](QCPAxis* axis, const QCPRange& r) {
        const auto it = data.find(axis);
        if (it == data.end()) {
            data.insert(axis, r);
        } else {
            it->expand(r);
        }
    };
    for (int i = 0; i < plottableCount(); ++i) {
        QCPAbstractPlottable* p = plottable(i);
        if (!p->visible()) {
            continue;
        }
        bool found = false;
        const QCPRange keys = p->getKeyRange(found);
        if (found) {
            take(p->keyAxis(), keys);
        }
        const QCPRange values = p->getValueRange(found);
        if (found) {
            take(p->valueAxis(), values);
        }
    }
    const auto single = [](const QCPRange& r) {
        return r.size() <= std::max(std::abs(r.lower), std::abs(r.upper)) * 1e-12;
    };
    if (data.contains(xAxis) && single(data[xAxis])) {
        const double k = data[xAxis].center();
        xAxis->setRange(k > 0 ? QCPRange(0, 2 * k) : QCPRange(0, 1));
    }
    keepXNonNegative();
    for (QCPAxis* axis : {yAxis, yAxis2}) {
        if (!data.contains(axis)) {
            continue;
        }
        const QCPRange values = data[axis];
        const double magnitude = std::max(std::abs(values.lower), std::abs(values.upper));
        if (!single(values) && axis->scaleType() == QCPAxis::stLinear &&
            values.size() < kFlatShare * magnitude) {
            // A flat series (617.36 to 617.44 MiB) spans a few percent of its size: ticks
            // of 0.01 MiB made the allocator's jitter a landscape.
            const double half = kFlatShare * magnitude / 2;
            QCPRange wide(values.center() - half, values.center() + half);
            if (values.lower >= 0 && wide.lower < 0) {
                wide = QCPRange(0, 2 * half);
            }
            axis->setRange(wide);
            continue;
        }
        if (!single(values)) {
            continue;
        }
        const double v = values.center();
        if (axis->scaleType() == QCPAxis::stLogarithmic) {
            axis->setRange(v > 0 ? QCPRange(v / 2, v * 2) : QCPRange(0.1, 10));
        } else {
            axis->setRange(v == 0 ? QCPRange(-1, 1)
                                  : QCPRange(v - std::abs(v) / 10, v + std::abs(v) / 10));
        }
    }
}

void PlotPanel::keepXNonNegative() {
    // Steps, samples and time start at 0: the x axis of curves never shows less, however
    // it is zoomed or panned (bars' category axes keep their margins).
    const QCPRange x = xAxis->range();
    if (x.lower < 0 && !(categoryTicker_ && xAxis->ticker() == categoryTicker_)) {
        xAxis->setRange(0, std::max(x.size(), 1e-9));
    }
}

void PlotPanel::resetView() {
    userView_ = false;
    fitUnlessUserView();
    replot();
}

}  // namespace ampbench::ui
