#include "ui/report/JudgementPlots.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/draw/Palette.h"

namespace ampbench::report {
namespace {

using analysis::ExperimentAnalysis;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

/// Non-finite values become NaN, which QCustomPlot draws as a gap.
QVector<double> qvec(const std::vector<double>& v, double scale = 1.0) {
    QVector<double> out;
    out.reserve(static_cast<int>(v.size()));
    for (double x : v) {
        out.push_back(std::isfinite(x) ? x * scale : kNaN);
    }
    return out;
}

void reset(QCustomPlot& plot) {
    plot.clearGraphs();
    plot.clearPlottables();
    plot.clearItems();
    plot.xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    plot.xAxis->grid()->setVisible(true);
    plot.legend->setVisible(false);
}

/// Shows the legend in a row of its own under the axes. Inside them it hid what it
/// names: a narrow verdict panel has no empty corner, and the lower ±2σ bars, the lower
/// tolerance line and the deviation's peaks were under it.
void legendBelow(QCustomPlot& plot) {
    QCPLayoutGrid* grid = plot.plotLayout();
    if (plot.legend->layout() != grid) {
        const int row = grid->rowCount();
        grid->insertRow(row);
        grid->addElement(row, 0, plot.legend);
        grid->setRowStretchFactor(row, 0.001);  // as tall as its entries, no more
    }
    plot.legend->setVisible(true);
}

/// A shaded band between two curves, with one legend entry (or none).
void shade(QCustomPlot& plot, const QVector<double>& x, const QVector<double>& lo,
           const QVector<double>& hi, const QColor& fill, const QString& name) {
    auto* low = plot.addGraph();
    auto* high = plot.addGraph();
    low->setData(x, lo);
    high->setData(x, hi);
    low->setPen(Qt::NoPen);
    high->setPen(Qt::NoPen);
    high->setBrush(fill);
    high->setChannelFillGraph(low);
    low->removeFromLegend();
    if (name.isEmpty()) {
        high->removeFromLegend();
    } else {
        high->setName(name);
    }
}

/// Two dashed horizontal lines at centre ± tol from x0 to x1, one legend entry.
void toleranceLines(QCustomPlot& plot, double centre, double tol, double x0, double x1,
                    const QColor& color, const QString& name) {
    QPen pen(color.darker(140), 1.4, Qt::DashLine);
    for (double y : {centre - tol, centre + tol}) {
        auto* g = plot.addGraph();
        g->setData(QVector<double>{x0, x1}, QVector<double>{y, y});
        g->setPen(pen);
        if (y < centre) {
            g->setName(name);
        } else {
            g->removeFromLegend();
        }
    }
}

}  // namespace

int armIndex(const ExperimentAnalysis& a, const std::string& arm) {
    for (size_t i = 0; i < a.arm_order.size(); ++i) {
        if (a.arm_order[i] == arm) {
            return static_cast<int>(i);
        }
    }
    return 0;
}

double verdictTolerance(const ExperimentAnalysis& a) {
    for (const auto& v : a.verdicts) {
        for (const auto& f : v.reasons) {
            if (f.code == analysis::FindingCode::Tolerance) {
                return f.value(analysis::FindingKey::Tolerance);
            }
        }
    }
    return kNaN;
}

bool drawDeviation(QCustomPlot& plot, const ExperimentAnalysis& a) {
    reset(plot);
    const auto& band = a.band;
    if (!band.known() || band.x.empty() || a.arm_curves.size() < 2) {
        return false;
    }
    const QVector<double> x = qvec(band.x);
    shade(plot, x, QVector<double>(x.size(), -1.0), QVector<double>(x.size(), 1.0),
          draw::faded(draw::armColor(armIndex(a, a.baseline)), 60),
          q(a.baseline + "'s seed band (\xC2\xB1 2\xCF\x83)"));
    for (const auto& ac : a.arm_curves) {
        if (ac.arm == a.baseline) {
            continue;
        }
        QVector<double> y;
        for (size_t i = 0; i < band.x.size() && i < ac.mean.size(); ++i) {
            const double width = 2 * band.sd[i];
            const double v = width > 0 ? (ac.mean[i] - band.mean[i]) / width : kNaN;
            y.push_back(std::isfinite(v) ? v : kNaN);
        }
        auto* g = plot.addGraph();
        g->setData(x.mid(0, y.size()), y);
        g->setPen(QPen(draw::armColor(armIndex(a, ac.arm)), 2.2));
        g->setName(q(ac.arm));
    }
    plot.rescaleAxes();
    // The band (±1) always in view, and room above and below the arms.
    const double lo = std::min(-2.0, plot.yAxis->range().lower);
    const double hi = std::max(2.0, plot.yAxis->range().upper);
    plot.yAxis->setRange(lo - 0.06 * (hi - lo), hi + 0.06 * (hi - lo));
    plot.xAxis->setLabel("samples seen");
    plot.yAxis->setLabel("(arm \xE2\x88\x92 baseline mean) \xC3\xB7 2\xCF\x83");
    legendBelow(plot);
    return true;
}

std::vector<RunningEvaluations> runningEvaluations(const analysis::ExperimentData& data) {
    std::vector<RunningEvaluations> out;
    for (const auto& r : data.runs) {
        if (r.row.status == run::RunStatus::Running && !r.evals.empty()) {
            out.push_back({r.row.id, r.row.arm, r.row.seed, r.evals});
        }
    }
    return out;
}

namespace {

/// Accuracy when the finished runs were judged on it; with none finished, when every
/// running evaluation has one.
bool validationOnAccuracy(const ExperimentAnalysis& a,
                          const std::vector<const RunningEvaluations*>& live) {
    if (!a.validation_metric.empty()) {
        return a.validation_metric == "val_accuracy";
    }
    for (const auto* r : live) {
        for (const auto& e : r->evals) {
            if (!std::isfinite(e.val_accuracy)) {
                return false;
            }
        }
    }
    return true;
}

double evalValue(const run::EvalRecord& e, bool accuracy) {
    const double v = accuracy ? e.val_accuracy * 100.0 : e.val_loss;
    return std::isfinite(v) ? v : kNaN;
}

/// One running run: dotted, hollow markers, named as running, so it never reads as a
/// finished arm's band.
void addRunning(QCustomPlot& plot, const ExperimentAnalysis& a, const RunningEvaluations& r,
                const QVector<double>& x, const QVector<double>& y) {
    const QColor col = draw::armColor(armIndex(a, r.arm));
    auto* g = plot.addGraph();
    g->setData(x, y);
    g->setPen(QPen(col, 1.6, Qt::DotLine));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(col, 1.6), Qt::white, 7));
    g->setName(q(r.arm + " \xC2\xB7 seed " + std::to_string(r.seed) + " (running)"));
}

}  // namespace

bool drawValidation(QCustomPlot& plot, const ExperimentAnalysis& a,
                    const std::vector<RunningEvaluations>& running) {
    reset(plot);
    std::vector<const RunningEvaluations*> live;
    for (const auto& r : running) {
        if (!r.evals.empty()) {
            live.push_back(&r);
        }
    }
    if (a.validation.empty() && live.empty()) {
        return false;
    }
    const bool accuracy = validationOnAccuracy(a, live);
    const double scale = accuracy ? 100.0 : 1.0;
    // Columns only when the finished runs evaluated once, at the end: a running run
    // that evaluated along the way is drawn over samples seen.
    const bool final_only =
        !a.validation.empty() &&
        std::all_of(a.validation.begin(), a.validation.end(),
                    [](const analysis::MetricBand& b) { return b.x.size() == 1; }) &&
        std::all_of(live.begin(), live.end(),
                    [](const RunningEvaluations* r) { return r->evals.size() == 1; });
    const double tol = verdictTolerance(a);
    const analysis::MetricBand* base = nullptr;
    for (const auto& b : a.validation) {
        if (b.arm == a.baseline) {
            base = &b;
        }
    }
    auto label = [](const analysis::MetricBand& b) {
        // "fp32 ± 2σ (2 seeds)": the mean is the line or dot, named by the tab's tooltip;
        // a long arm name and "mean" ran past a 1024-pixel window's verdict panel.
        return q(b.arm + (b.runs > 1 ? " \xC2\xB1 2\xCF\x83 (" + std::to_string(b.runs) + " seeds)"
                                     : " (one seed)"));
    };
    const QString tol_name =
        q("tolerance \xC2\xB1 " +
          (accuracy ? QString::number(tol * 100.0, 'f', 2).toStdString() + " points"
                    : QString::number(tol, 'g', 3).toStdString()) +
          "\naround " + a.baseline + "'s final mean");
    if (final_only) {
        // One column per arm: the mean with ±2σ bars.
        QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
        std::vector<std::string> columns;
        for (size_t i = 0; i < a.validation.size(); ++i) {
            const auto& b = a.validation[i];
            const QColor col = draw::armColor(armIndex(a, b.arm));
            columns.push_back(b.arm);
            ticker->addTick(static_cast<double>(i), q(b.arm));
            auto* g = plot.addGraph();
            g->setData(QVector<double>{static_cast<double>(i)}, QVector<double>{b.mean[0] * scale});
            g->setLineStyle(QCPGraph::lsNone);
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, col, col, 9));
            g->setName(label(b));
            if (std::isfinite(b.sd[0])) {
                auto* bars = new QCPErrorBars(plot.xAxis, plot.yAxis);
                bars->setDataPlottable(g);
                bars->setData(QVector<double>{2 * b.sd[0] * scale});
                bars->setPen(QPen(col.darker(130), 1.6));
                bars->removeFromLegend();
            }
        }
        if (base && std::isfinite(tol)) {
            toleranceLines(plot, base->mean[0] * scale, tol * scale, -0.5,
                           static_cast<double>(a.validation.size()) - 0.5,
                           draw::armColor(armIndex(a, a.baseline)), tol_name);
        }
        // A running run's evaluation beside its arm's column (a column of its own
        // when no run of the arm finished).
        for (const auto* r : live) {
            auto at = std::find(columns.begin(), columns.end(), r->arm);
            if (at == columns.end()) {
                ticker->addTick(static_cast<double>(columns.size()), q(r->arm));
                at = columns.insert(columns.end(), r->arm);
            }
            const double column = static_cast<double>(at - columns.begin()) + 0.2;
            addRunning(plot, a, *r, {column}, {evalValue(r->evals.back(), accuracy)});
            plot.graph(plot.graphCount() - 1)->setLineStyle(QCPGraph::lsNone);
        }
        plot.xAxis->setTicker(ticker);
        plot.xAxis->grid()->setVisible(false);
        plot.rescaleAxes();
        plot.xAxis->setRange(-0.6, static_cast<double>(columns.size()) - 0.4);
        plot.xAxis->setLabel("");
    } else {
        double x0 = std::numeric_limits<double>::infinity(), x1 = 0;
        for (const auto& b : a.validation) {
            const QColor col = draw::armColor(armIndex(a, b.arm));
            const QVector<double> x = qvec(b.x);
            x0 = std::min(x0, b.x.front());
            x1 = std::max(x1, b.x.back());
            if (b.runs > 1) {
                QVector<double> lo, hi;
                for (size_t i = 0; i < b.mean.size(); ++i) {
                    lo.push_back(std::isfinite(b.sd[i]) ? (b.mean[i] - 2 * b.sd[i]) * scale : kNaN);
                    hi.push_back(std::isfinite(b.sd[i]) ? (b.mean[i] + 2 * b.sd[i]) * scale : kNaN);
                }
                shade(plot, x, lo, hi, draw::faded(col, 55), QString());
            }
            auto* g = plot.addGraph();
            g->setData(x, qvec(b.mean, scale));
            g->setPen(QPen(col, 2));
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, col, Qt::white, 5));
            g->setName(label(b));
        }
        if (base && std::isfinite(tol)) {
            // Over the last part of the run, where the final metric is read.
            toleranceLines(plot, base->mean.back() * scale, tol * scale, x0 + 0.75 * (x1 - x0), x1,
                           draw::armColor(armIndex(a, a.baseline)), tol_name);
        }
        for (const auto* r : live) {
            QVector<double> x, y;
            for (const auto& e : r->evals) {
                x.push_back(static_cast<double>(e.samples));
                y.push_back(evalValue(e, accuracy));
            }
            addRunning(plot, a, *r, x, y);
        }
        plot.rescaleAxes();
        plot.xAxis->scaleRange(1.04, plot.xAxis->range().center());
        plot.xAxis->setLabel("samples seen");
    }
    // A second half of one evaluation per curve is a point, not a range: short runs
    // are shown whole.
    const bool long_enough =
        std::all_of(a.validation.begin(), a.validation.end(),
                    [](const analysis::MetricBand& b) { return b.mean.size() >= 4; });
    if (accuracy && base && !final_only && long_enough) {
        // Zoom to the second half of each curve, where the final metric is read: the
        // early evaluations would flatten the tolerance into a line. A running run's
        // latest half stays in view too.
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        double from_x = std::numeric_limits<double>::infinity(), to_x = 0;
        for (const auto& b : a.validation) {
            const size_t from = b.mean.size() / 2;
            for (size_t i = from; i < b.mean.size(); ++i) {
                const double sd = std::isfinite(b.sd[i]) ? b.sd[i] : 0.0;
                lo = std::min(lo, (b.mean[i] - 2 * sd) * scale);
                hi = std::max(hi, (b.mean[i] + 2 * sd) * scale);
            }
            from_x = std::min(from_x, b.x[from]);
            to_x = std::max(to_x, b.x.back());
        }
        for (const auto* r : live) {
            const size_t from = r->evals.size() / 2;
            for (size_t i = from; i < r->evals.size(); ++i) {
                const double v = evalValue(r->evals[i], accuracy);
                if (std::isfinite(v)) {
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
            }
            from_x = std::min(from_x, static_cast<double>(r->evals[from].samples));
            to_x = std::max(to_x, static_cast<double>(r->evals.back().samples));
        }
        if (std::isfinite(tol)) {
            lo = std::min(lo, (base->mean.back() - tol) * scale);
            hi = std::max(hi, (base->mean.back() + tol) * scale);
        }
        const double pad = std::max(0.1, (hi - lo) * 0.12);
        plot.yAxis->setRange(lo - pad, hi + pad);
        const double xpad = 0.04 * std::max(1.0, to_x - from_x);
        plot.xAxis->setRange(from_x - xpad, to_x + xpad);
    } else {
        plot.yAxis->scaleRange(1.15, plot.yAxis->range().center());
    }
    // Never a range of (almost) no height, where the runs scored alike: at least two
    // points of accuracy, or a tenth of the loss.
    const QCPRange y = plot.yAxis->range();
    const double least = accuracy ? 2.0 : std::max(1e-3, 0.1 * std::fabs(y.center()));
    if (!(y.size() >= least)) {
        plot.yAxis->setRange(y.center() - least / 2, y.center() + least / 2);
    }
    if (!final_only) {
        const QCPRange x = plot.xAxis->range();
        const double upper = x.size() > 0 ? x.upper : std::max(1.0, 1.1 * x.upper);
        plot.xAxis->setRange(std::max(0.0, x.size() > 0 ? x.lower : 0.0), upper);
    }
    plot.yAxis->setLabel(accuracy ? "validation accuracy (%)" : "validation loss");
    legendBelow(plot);
    return true;
}

}  // namespace ampbench::report
