// PlotPanel's hover readout: the point (or bar) under the cursor marked and its values
// shown in a tooltip.
#include <QMouseEvent>
#include <QToolTip>
#include <cmath>

#include "ui/plots/PlotPanel.h"

namespace ampbench::ui {
namespace {

constexpr double kHoverRadiusPx = 24.0;

QString valueText(double v) {
    return std::isfinite(v) ? QString::number(v, 'g', 5) : QStringLiteral("\u2013");
}

}  // namespace

QString PlotPanel::labelOf(QCPAbstractPlottable* plottable) const {
    QCPAbstractPlottable* owner = ownerOf_.value(plottable, plottable);
    // A curve may stand for more than the run it hides with ("amp mean of 3").
    return owner->name().isEmpty() ? labels_.value(owner) : owner->name();
}

void PlotPanel::hover(QMouseEvent* event) {
    const QPointF pos = event->position();
    QCPGraph* best = nullptr;
    double bestKey = 0, bestValue = 0, bestDist = kHoverRadiusPx;
    QString barText;
    for (int i = 0; i < plottableCount(); ++i) {
        QCPAbstractPlottable* p = plottable(i);
        if (!p->visible()) {
            continue;
        }
        if (auto* bars = qobject_cast<QCPBars*>(p)) {
            QVariant details;
            if (bars->selectTest(pos, false, &details) >= 0) {
                const auto sel = details.value<QCPDataSelection>();
                if (!sel.isEmpty()) {
                    const auto it = bars->data()->at(sel.dataRange().begin());
                    barText =
                        QStringLiteral("%1\n%2 = %3")
                            .arg(labelOf(bars), bars->valueAxis()->label(), valueText(it->value));
                }
            }
            continue;
        }
        auto* g = qobject_cast<QCPGraph*>(p);
        if (!g || g->data()->isEmpty()) {
            continue;
        }
        const double key = g->keyAxis()->pixelToCoord(pos.x());
        auto it = g->data()->findBegin(key, true);
        for (int n = 0; n < 3 && it != g->data()->constEnd(); ++n, ++it) {
            if (!std::isfinite(it->value)) {
                continue;
            }
            const QPointF px = g->coordsToPixels(it->key, it->value);
            const double d = std::hypot(px.x() - pos.x(), px.y() - pos.y());
            if (d < bestDist) {
                bestDist = d;
                best = g;
                bestKey = it->key;
                bestValue = it->value;
            }
        }
    }
    if (best) {
        tracer_->setGraph(best);
        tracer_->setGraphKey(bestKey);
        tracer_->setVisible(true);
        QToolTip::showText(event->globalPosition().toPoint(),
                           QStringLiteral("%1\n%2 = %3\n%4 = %5")
                               .arg(labelOf(best), best->keyAxis()->label(), valueText(bestKey),
                                    best->valueAxis()->label(), valueText(bestValue)),
                           this);
    } else {
        tracer_->setVisible(false);
        if (!barText.isEmpty()) {
            QToolTip::showText(event->globalPosition().toPoint(), barText, this);
        } else {
            QToolTip::hideText();
        }
    }
    layer("overlay")->replot();
}

}  // namespace ampbench::ui
