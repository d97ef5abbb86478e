#include "ui/draw/ScaleHistoryPlot.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace ampbench::draw {

namespace {

/// Integer ticks of log2 labelled as the powers of two they stand for.
class PowerOfTwoTicker : public QCPAxisTickerFixed {
  protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override {
        return QString("2^%1").arg(std::lround(tick));
    }
};

QVector<double> values(const std::vector<double>& v) {
    return QVector<double>(v.begin(), v.end());  // NaN: a gap
}

// Apart from the roles' colours, so a saturated tensor stands out from its band.
const QColor kNamed[] = {QColor(214, 39, 40), QColor(148, 103, 189), QColor(140, 86, 75),
                         QColor(227, 119, 194), QColor(23, 190, 207)};

}  // namespace

QColor castRoleColor(analysis::CastRole role) {
    switch (role) {
        case analysis::CastRole::Input:
            return QColor(31, 119, 180);
        case analysis::CastRole::Weight:
            return QColor(44, 160, 44);
        case analysis::CastRole::GradOutput:
            return QColor(255, 127, 14);
        case analysis::CastRole::Other:
            return QColor(127, 127, 127);
    }
    return QColor(127, 127, 127);
}

void drawScaleHistory(QCustomPlot& plot, const analysis::ScaleHistory& h, ScaleLegend legend,
                      size_t named) {
    plot.clearGraphs();
    QVector<double> x;
    for (const int64_t s : h.steps) {
        x.push_back(static_cast<double>(s));
    }
    double low = INFINITY;
    double high = -INFINITY;
    for (const auto& b : h.bands) {
        for (size_t i = 0; i < b.min.size(); ++i) {
            if (!std::isnan(b.min[i])) {
                low = std::min(low, b.min[i]);
                high = std::max(high, b.max[i]);
            }
        }
        const QColor color = castRoleColor(b.role);
        auto* top = plot.addGraph();
        top->setData(x, values(b.max), true);
        top->setPen(QPen(color.lighter(150), 0));
        top->removeFromLegend();
        auto* bottom = plot.addGraph();
        bottom->setData(x, values(b.min), true);
        bottom->setPen(QPen(color.lighter(150), 0));
        QColor fill = color;
        fill.setAlpha(45);
        bottom->setBrush(fill);
        bottom->setChannelFillGraph(top);
        bottom->removeFromLegend();
        auto* median = plot.addGraph();
        median->setData(x, values(b.median), true);
        median->setPen(QPen(color, 2));
        median->setName(QString("%1: median, band least\u2013largest (%2 %3)")
                            .arg(analysis::castRoleName(b.role))
                            .arg(b.tensors)
                            .arg(b.tensors == 1 ? "tensor" : "tensors"));
        if (x.size() == 1) {
            median->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
        }
    }
    QVector<double> cross_x, cross_y;
    const size_t shown = std::min(named, h.saturated.size());
    for (size_t k = 0; k < h.saturated.size(); ++k) {
        const auto& c = h.curves[h.saturated[k]];
        for (size_t i = 0; i < c.saturated.size(); ++i) {
            if (c.saturated[i] > 0 && !std::isnan(c.log2_scale[i])) {
                cross_x.push_back(x[static_cast<int>(i)]);
                cross_y.push_back(c.log2_scale[i]);
            }
        }
        if (k >= shown) {
            continue;
        }
        auto* g = plot.addGraph();
        g->setData(x, values(c.log2_scale), true);
        g->setPen(QPen(kNamed[k % std::size(kNamed)], 1.5, Qt::DashLine));
        g->setName(QString::fromStdString(c.name + " (" + c.format + "), saturated up to ") +
                   QString::number(100 * c.max_saturated, 'f', 2) + "%");
    }
    if (!cross_x.isEmpty()) {
        auto* marks = plot.addGraph();
        marks->setData(cross_x, cross_y);
        marks->setLineStyle(QCPGraph::lsNone);
        marks->setPen(QPen(Qt::black, 1.5));
        marks->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, 7));
        QString name = QString("saturated at that step (%1 %2")
                           .arg(h.saturated.size())
                           .arg(h.saturated.size() == 1 ? "tensor" : "tensors");
        if (h.saturated.size() > shown) {
            name += QString(", %1 not named").arg(h.saturated.size() - shown);
        }
        marks->setName(name + ")");
    }
    auto ticker = QSharedPointer<PowerOfTwoTicker>::create();
    ticker->setTickStep(1);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    plot.yAxis->setTicker(ticker);
    plot.yAxis->setLabel("scale (log2)");
    plot.xAxis->setLabel("optimizer step");
    if (!std::isfinite(low)) {
        low = -1;
        high = 1;
    }
    const double margin = std::max(0.5, (high - low) * 0.08);
    plot.yAxis->setRange(std::floor(low - margin), std::ceil(high + margin));
    if (x.isEmpty()) {
        plot.xAxis->setRange(0, 1);
    } else if (x.front() == x.back()) {
        plot.xAxis->setRange(x.front() - 1, x.front() + 1);
    } else {
        plot.xAxis->setRange(x.front(), x.back());
    }
    plot.yAxis->setSubTicks(false);  // a linear subdivision of log2 means nothing
    // The legend in a row or column of its own: over the axes it hides the curves.
    const bool below = legend == ScaleLegend::Below;
    if (plot.legend->layout() == plot.axisRect()->insetLayout()) {
        plot.axisRect()->insetLayout()->take(plot.legend);
        QCPLayoutGrid* grid = plot.plotLayout();
        int row = 0;
        while (row < grid->rowCount() && grid->element(row, 0) != plot.axisRect()) {
            ++row;
        }
        if (below) {
            grid->addElement(grid->rowCount(), 0, plot.legend);
            grid->setRowStretchFactor(grid->rowCount() - 1, 0.001);
        } else {
            grid->addElement(row, grid->columnCount(), plot.legend);
            grid->setColumnStretchFactor(grid->columnCount() - 1, 0.001);
        }
        plot.legend->setMargins(QMargins(4, 2, 4, 2));
    }
    plot.legend->setWrap(below ? 2 : 0);
    plot.legend->setFillOrder(below ? QCPLayoutGrid::foColumnsFirst : QCPLayoutGrid::foRowsFirst,
                              true);  // the entries just added
    plot.legend->setVisible(!h.empty());
}

}  // namespace ampbench::draw
