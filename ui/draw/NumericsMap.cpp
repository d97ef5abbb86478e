#include "ui/draw/NumericsMap.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ampbench::draw {

using analysis::NumericsMetric;

double numericsCellValue(const analysis::NumericsGrid& grid, NumericsMetric metric, size_t row,
                         size_t column) {
    if (row >= grid.cells.size() || column >= grid.steps.size() ||
        column >= grid.cells[row].size() || !grid.cells[row][column]) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    const double v = analysis::metricValue(*grid.cells[row][column], metric);
    // −inf (non-finite) and +inf (all zero) at the ends of the scale.
    return metric == NumericsMetric::Headroom ? std::clamp(v, -1.0, 40.0) : v;
}

int numericsLabelStride(size_t rows, int height, int line) {
    const int fit = std::max(1, height / std::max(1, line));
    return std::max(1, static_cast<int>((rows + static_cast<size_t>(fit) - 1) / fit));
}

QString numericsRowLabel(const QCustomPlot& plot, const std::string& name, int width) {
    const QString full = QString::fromStdString(name);
    if (width <= 0) {
        return full;
    }
    return QFontMetrics(plot.yAxis->tickLabelFont()).elidedText(full, Qt::ElideMiddle, width);
}

void drawNumericsMap(QCustomPlot& plot, QCPColorMap& map, QCPColorScale& scale,
                     const analysis::NumericsGrid& grid, NumericsMetric metric, int label_every,
                     int label_width) {
    const int rows = static_cast<int>(grid.names.size());
    const int columns = static_cast<int>(grid.steps.size());
    map.data()->setSize(std::max(columns, 1), std::max(rows, 1));
    map.data()->setRange(QCPRange(0, std::max(columns - 1, 0)), QCPRange(0, std::max(rows - 1, 0)));
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < columns; ++c) {
            map.data()->setCell(
                c, r,
                numericsCellValue(grid, metric, static_cast<size_t>(r), static_cast<size_t>(c)));
        }
    }
    const bool headroom = metric == NumericsMetric::Headroom;
    QCPColorGradient gradient(headroom ? QCPColorGradient::gpThermal : QCPColorGradient::gpHot);
    if (headroom) {
        gradient = gradient.inverted();  // little headroom: hot
    }
    gradient.setNanHandling(QCPColorGradient::nhTransparent);
    map.setColorScale(&scale);
    map.setGradient(gradient);
    // Headroom past 40 doublings is plenty in any format (bf16's is near 128 for most
    // values): the scale's top.
    map.setDataRange(headroom ? QCPRange(-1, 40) : QCPRange(0, 1));
    scale.axis()->setLabel(headroom ? QObject::tr("log2 headroom")
                                    : QObject::tr("share of values"));
    QSharedPointer<QCPAxisTickerText> xt(new QCPAxisTickerText);
    const int every = std::max(1, columns / 10);
    for (int c = 0; c < columns; c += every) {
        xt->addTick(c, QString::number(grid.steps[static_cast<size_t>(c)]));
    }
    plot.xAxis->setTicker(xt);
    plot.xAxis->setLabel(QObject::tr("optimizer step"));
    QSharedPointer<QCPAxisTickerText> yt(new QCPAxisTickerText);
    for (int r = 0; r < rows; r += std::max(1, label_every)) {
        yt->addTick(r, numericsRowLabel(plot, grid.names[static_cast<size_t>(r)], label_width));
    }
    plot.yAxis->setTicker(yt);
    plot.xAxis->setRange(-0.5, std::max(columns, 1) - 0.5);
    plot.yAxis->setRange(-0.5, std::max(rows, 1) - 0.5);
}

}  // namespace ampbench::draw
