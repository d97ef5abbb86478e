#include "ui/draw/AdviceChart.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "ui/draw/Palette.h"

namespace ampbench::draw {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
const QColor kRuledOut(150, 150, 150);
constexpr const char* kAdviceLabel = "adviceLabel";  ///< a property of the items drawn here

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

}  // namespace

void drawAdviceChart(QCustomPlot& plot, const analysis::Advice& advice) {
    plot.clearGraphs();
    // Only the names this drawing put there: a PlotPanel keeps an item of its own (its
    // message), and clearing every item left it a dangling pointer that wrote over the
    // next label made (the recommendation's name was blanked at each replot).
    for (int i = plot.itemCount() - 1; i >= 0; --i) {
        if (plot.item(i)->property(kAdviceLabel).toBool()) {
            plot.removeItem(i);
        }
    }
    plot.legend->setVisible(false);  // each point is named beside it
    plot.xAxis->setLabel(QObject::tr("%1 (MiB)")
                             .arg(advice.memory_label.empty() ? QObject::tr("peak memory")
                                                              : q(advice.memory_label)));
    plot.yAxis->setLabel(QObject::tr("samples/s"));
    double lo_x = INFINITY, hi_x = -INFINITY, lo_y = INFINITY, hi_y = -INFINITY;
    // The front first, under the points: what nothing else beats on speed and memory.
    QVector<double> fx, fy;
    for (int i : analysis::paretoFront(advice)) {
        const auto& r = advice.rows[static_cast<size_t>(i)];
        fx.push_back(static_cast<double>(r.f.peak_bytes) / kMiB);
        fy.push_back(r.f.samples_per_s);
    }
    if (fx.size() > 1) {
        QCPGraph* front = plot.addGraph();
        front->setName(QObject::tr("front"));
        front->setPen(QPen(QColor(120, 120, 120), 1.5, Qt::DashLine));
        front->setData(fx, fy, /*alreadySorted=*/true);
    }
    const analysis::AdviceRow* recommended = advice.recommendation();
    for (const auto& r : advice.rows) {
        if (!r.f.measured || !(r.f.samples_per_s > 0) || r.f.peak_bytes <= 0) {
            continue;
        }
        const double x = static_cast<double>(r.f.peak_bytes) / kMiB;
        const double y = r.f.samples_per_s;
        lo_x = std::min(lo_x, x);
        hi_x = std::max(hi_x, x);
        lo_y = std::min(lo_y, y);
        hi_y = std::max(hi_y, y);
        const bool out = r.status != analysis::RowStatus::Ranked;
        const QColor color = out ? kRuledOut : armColor(r.f.arm_index);
        QCPGraph* g = plot.addGraph();
        g->setName(q(r.f.arm));
        g->setLineStyle(QCPGraph::lsNone);
        const auto shape = out                 ? QCPScatterStyle::ssCross
                           : &r == recommended ? QCPScatterStyle::ssStar
                                               : QCPScatterStyle::ssDisc;
        g->setScatterStyle(QCPScatterStyle(shape, color, color, &r == recommended ? 16 : 10));
        g->setData({x}, {y});
        auto* label = new QCPItemText(&plot);
        label->setProperty(kAdviceLabel, true);
        label->position->setCoords(x, y);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setPadding(QMargins(8, 0, 0, 4));
        label->setColor(out ? kRuledOut : plot.xAxis->labelColor());
        const std::string why = analysis::shortReason(r);
        label->setText(q(r.f.arm) + (why.empty() ? QString() : QString("\n") + q(why)));
    }
    if (std::isfinite(lo_x)) {
        // Room on the right and above for the names; the axes start at zero where close.
        const double span_x = std::max(hi_x - lo_x, 0.2 * hi_x);
        const double span_y = std::max(hi_y - lo_y, 0.2 * hi_y);
        plot.xAxis->setRange(std::max(0.0, lo_x - 0.15 * span_x), hi_x + 0.45 * span_x);
        plot.yAxis->setRange(std::max(0.0, lo_y - 0.2 * span_y), hi_y + 0.3 * span_y);
    }
}

}  // namespace ampbench::draw
