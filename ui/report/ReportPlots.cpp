#include "ui/report/ReportPlots.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "core/analysis/Gains.h"
#include "core/analysis/Statistics.h"
#include "core/config/Placement.h"
#include "ui/draw/AdviceChart.h"
#include "ui/draw/NumericsMap.h"
#include "ui/draw/Palette.h"
#include "ui/draw/ScaleHistoryPlot.h"
#include "ui/report/JudgementPlots.h"

namespace ampbench::report {
namespace {

using analysis::ExperimentAnalysis;
using analysis::RunData;

class Plot {
  public:
    Plot(const PlotOptions& o, const QString& title) : options_(o) {
        plot_.setAttribute(Qt::WA_DontShowOnScreen);
        plot_.resize(o.width, o.height);
        plot_.setBackground(Qt::white);
        QFont f = plot_.font();
        f.setPointSizeF(9);
        plot_.setFont(f);
        // The title is part of the image so that a page break never parts it from its plot.
        QFont bold = f;
        bold.setPointSizeF(10.5);
        bold.setBold(true);
        plot_.plotLayout()->insertRow(0);
        plot_.plotLayout()->addElement(0, 0, new QCPTextElement(&plot_, title, bold));
        for (auto* axis : {plot_.xAxis, plot_.yAxis}) {
            axis->setTickLabelFont(f);
            axis->setLabelFont(f);
            axis->grid()->setPen(QPen(QColor(225, 225, 225), 0));
            axis->grid()->setSubGridVisible(false);
        }
        plot_.legend->setFont(f);
        plot_.legend->setBrush(QColor(255, 255, 255, 220));
        plot_.legend->setBorderPen(QPen(QColor(200, 200, 200)));
    }
    QCustomPlot& operator*() { return plot_; }
    QCustomPlot* operator->() { return &plot_; }
    QImage image() {
        plot_.replot(QCustomPlot::rpImmediateRefresh);
        return plot_.toPixmap(options_.width, options_.height, options_.scale).toImage();
    }

  private:
    PlotOptions options_;
    QCustomPlot plot_;
};

/// Non-finite values become NaN, which QCustomPlot draws as a gap (inf would wreck the axis range).
QVector<double> qvec(const std::vector<double>& v) {
    QVector<double> out;
    out.reserve(static_cast<int>(v.size()));
    for (double x : v) {
        out.push_back(std::isfinite(x) ? x : std::numeric_limits<double>::quiet_NaN());
    }
    return out;
}

std::vector<const RunData*> completeRuns(const ReportContent& c, const std::string& arm) {
    std::vector<const RunData*> out;
    for (const auto& r : c.data.runs) {
        if (r.row.arm == arm && !analysis::isIncomplete(r.row.status)) {
            out.push_back(&r);
        }
    }
    return out;
}

/// The heatmaps of the first run of each arm that recorded per-layer numerics: the
/// share under the smallest subnormal of each tensor's format, then the headroom to
/// its largest value; titles and captions name the formats present.
std::vector<PlotImage> numericsPlots(const ReportContent& c, const PlotOptions& o) {
    std::vector<PlotImage> out;
    std::vector<std::string> arms_done;
    for (const auto& r : c.data.runs) {
        if (r.numerics.empty() ||
            std::find(arms_done.begin(), arms_done.end(), r.row.arm) != arms_done.end()) {
            continue;
        }
        arms_done.push_back(r.row.arm);
        const auto grid = analysis::numericsGrid(r.numerics);
        const auto formats = analysis::formatsOf(analysis::summarizeNumerics(r.numerics));
        for (const auto metric :
             {analysis::NumericsMetric::UnderflowSubnormal, analysis::NumericsMetric::Headroom}) {
            const bool headroom = metric == analysis::NumericsMetric::Headroom;
            PlotOptions tall = o;
            tall.height = std::clamp(static_cast<int>(grid.names.size()) * 4 + 120, 240, 720);
            const std::string label = analysis::metricLabel(metric, formats);
            const QString title =
                QString::fromStdString(r.row.arm + ", seed " + std::to_string(r.row.seed) + ": " +
                                       (headroom ? label.substr(0, label.find(" (log2")) : label));
            Plot plot(tall, title);
            auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
            auto* scale = new QCPColorScale(&*plot);
            plot->plotLayout()->addElement(1, 1, scale);
            const int line = QFontMetrics(plot->yAxis->tickLabelFont()).height();
            draw::drawNumericsMap(
                *plot, *map, *scale, grid, metric,
                draw::numericsLabelStride(grid.names.size(), tall.height - 5 * line, line),
                tall.width / 3);
            const std::string caption =
                headroom ? "Each tensor (row) at each recorded step (column): doublings of the "
                           "value left before the largest of the format it is held in (" +
                               label.substr(0, label.find(" (log2")) +
                               "; log2 largest / abs-max; bottom of the scale: inf or NaN). "
                               "Gradients as the arm held them; an fp32 arm against fp16, as "
                               "the reference."
                         : "Each tensor (row) at each recorded step (column): the " + label +
                               " (non-zero values flushed to zero at the loss scale in use).";
            out.push_back({numericsPlotId(r.row.id, metric), title, QString::fromStdString(caption),
                           plot.image()});
        }
        const auto scales = analysis::scaleHistory(r.numerics);
        if (!scales.empty()) {
            PlotOptions tall = o;
            tall.height = std::max(o.height, 420);  // the legend names up to five tensors
            const QString title = QString::fromStdString(
                r.row.arm + ", seed " + std::to_string(r.row.seed) + ": FP8 per-tensor scales");
            Plot plot(tall, title);
            draw::drawScaleHistory(*plot, scales);
            const std::string caption =
                "The scale each FP8 cast multiplied its tensor by before the cast, on a log2 "
                "axis, at each recorded optimizer step: per role the median and the band from "
                "the least to the largest scale among the role's tensors; the tensors that "
                "saturated (values past the format's largest) drawn on their own, a cross "
                "where they did. " +
                analysis::scaleHistorySummary(scales, 5) + ".";
            out.push_back(
                {scalesPlotId(r.row.id), title, QString::fromStdString(caption), plot.image()});
        }
    }
    return out;
}

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

/// Loss over samples seen: each run's smoothed curve faint, each arm's mean bold,
/// the baseline's mean ± 2σ (and min–max) as shaded bands.
QImage lossPlot(const ReportContent& c, const PlotOptions& o) {
    const auto& a = c.analysis;
    Plot p(o, "Training loss over samples seen");
    const QColor base_color = draw::armColor(armIndex(a, a.baseline));
    const auto& band = a.band;
    if (band.known() && !band.x.empty()) {
        auto* lo = p->addGraph();
        auto* hi = p->addGraph();
        lo->setData(qvec(band.x), qvec(band.min));
        hi->setData(qvec(band.x), qvec(band.max));
        lo->setPen(Qt::NoPen);
        hi->setPen(Qt::NoPen);
        hi->setBrush(draw::faded(base_color, 35));
        hi->setChannelFillGraph(lo);
        hi->setName(q(a.baseline + " seeds min\xE2\x80\x93max"));
        lo->removeFromLegend();  // one legend entry per band
        auto* lo2 = p->addGraph();
        auto* hi2 = p->addGraph();
        lo2->setData(qvec(band.x), qvec(band.low));
        hi2->setData(qvec(band.x), qvec(band.high));
        lo2->setPen(Qt::NoPen);
        hi2->setPen(Qt::NoPen);
        hi2->setBrush(draw::faded(base_color, 70));
        hi2->setChannelFillGraph(lo2);
        hi2->setName(q(a.baseline + " mean \xC2\xB1 2\xCF\x83"));
        lo2->removeFromLegend();
    }
    for (const auto& rc : a.run_curves) {
        auto* g = p->addGraph();
        g->setData(qvec(rc.x), qvec(rc.smooth));
        g->setPen(QPen(draw::faded(draw::armColor(armIndex(a, rc.arm)), 90), 1));
        g->removeFromLegend();
    }
    for (const auto& ac : a.arm_curves) {
        auto* g = p->addGraph();
        g->setData(qvec(band.x), qvec(ac.mean));
        g->setPen(QPen(draw::armColor(armIndex(a, ac.arm)), 2.2));
        g->setName(q(ac.arm + (ac.runs > 1 ? " (mean of " + std::to_string(ac.runs) + ")" : "")));
    }
    p->rescaleAxes();
    // Start the y range at the smoothed curves, not the first raw losses.
    p->yAxis->scaleRange(1.08, p->yAxis->range().center());
    p->xAxis->setLabel("samples seen");
    p->yAxis->setLabel("training loss (EMA)");
    p->legend->setVisible(true);
    p->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    return p.image();
}

QImage deviationPlot(const ReportContent& c, const PlotOptions& o) {
    Plot p(o, "Distance from the baseline in band units");
    drawDeviation(*p, c.analysis);
    return p.image();
}

QSharedPointer<QCPAxisTickerText> armTicker(const ExperimentAnalysis& a) {
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (size_t i = 0; i < a.verdicts.size(); ++i) {
        ticker->addTick(static_cast<double>(i), q(a.verdicts[i].arm));
    }
    return ticker;
}

QImage validationPlot(const ReportContent& c, const PlotOptions& o) {
    Plot p(o, c.analysis.validation_metric == "val_accuracy" ? "Validation accuracy"
                                                             : "Validation loss");
    drawValidation(*p, c.analysis);
    return p.image();
}

QImage memoryPlot(const ReportContent& c, const PlotOptions& o) {
    const auto& a = c.analysis;
    Plot p(o, "Peak memory");
    double top = 0;
    for (size_t i = 0; i < a.verdicts.size(); ++i) {
        const double mib = static_cast<double>(a.verdicts[i].gains.peak_mem) / (1024.0 * 1024.0);
        auto* bars = new QCPBars(p->xAxis, p->yAxis);
        bars->setWidth(0.55);
        bars->addData(static_cast<double>(i), mib);
        const QColor col = draw::armColor(armIndex(a, a.verdicts[i].arm));
        bars->setPen(QPen(col.darker(130)));
        bars->setBrush(col);
        top = std::max(top, mib);
        auto* label = new QCPItemText(&*p);
        label->position->setCoords(static_cast<double>(i), mib);
        label->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
        label->setText(QString::number(mib, 'f', 0) + " MiB");
        label->setFont(p->font());
    }
    p->xAxis->setTicker(armTicker(a));
    p->xAxis->setRange(-0.6, static_cast<double>(a.verdicts.size()) - 0.4);
    p->xAxis->grid()->setVisible(false);
    p->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);
    p->yAxis->setLabel(q(a.memory_label) + " (MiB)");
    return p.image();
}

/// Time per sample (so accumulation arms compare fairly): a box per arm, whiskers at p5/p95.
QImage stepTimePlot(const ReportContent& c, const PlotOptions& o) {
    const auto& a = c.analysis;
    Plot p(o, "Time per sample");
    double top = 0;
    for (size_t i = 0; i < a.verdicts.size(); ++i) {
        std::vector<double> v;
        for (const auto* r : completeRuns(c, a.verdicts[i].arm)) {
            auto m = analysis::msPerSample(*r);
            v.insert(v.end(), m.begin(), m.end());
        }
        if (v.empty()) {
            continue;
        }
        auto* box = new QCPStatisticalBox(p->xAxis, p->yAxis);
        const QColor col = draw::armColor(armIndex(a, a.verdicts[i].arm));
        box->setBrush(draw::faded(col, 120));
        box->setPen(QPen(col.darker(140)));
        box->setMedianPen(QPen(col.darker(200), 2.5));
        box->setWidth(0.5);
        const double p95 = analysis::quantile(v, 0.95);
        box->addData(static_cast<double>(i), analysis::quantile(v, 0.05),
                     analysis::quantile(v, 0.25), analysis::median(v), analysis::quantile(v, 0.75),
                     p95);
        top = std::max(top, p95);
    }
    p->xAxis->setTicker(armTicker(a));
    p->xAxis->setRange(-0.6, static_cast<double>(a.verdicts.size()) - 0.4);
    p->xAxis->grid()->setVisible(false);
    p->yAxis->setRange(0, top > 0 ? top * 1.1 : 1);
    p->yAxis->setLabel("time per sample (ms)");
    return p.image();
}

QImage lossScalePlot(const ReportContent& c, const PlotOptions& o, bool& any_scaler) {
    const auto& a = c.analysis;
    Plot p(o, "Loss scale and skipped steps");
    any_scaler = false;
    QVector<double> skip_x, skip_y;
    std::map<std::string, bool> named;
    double lo = 1, hi = 1;
    for (const auto& v : a.verdicts) {
        any_scaler = any_scaler || v.health.scaler_active;
        for (const auto* r : completeRuns(c, v.arm)) {
            QVector<double> x, y;
            for (const auto& s : r->steps) {
                if (!(s.loss_scale > 0)) {
                    continue;
                }
                x.push_back(static_cast<double>(s.samples));
                y.push_back(s.loss_scale);
                lo = std::min(lo, s.loss_scale);
                hi = std::max(hi, s.loss_scale);
                if (s.skipped) {
                    skip_x.push_back(static_cast<double>(s.samples));
                    skip_y.push_back(s.loss_scale);
                }
            }
            auto* g = p->addGraph();
            g->setData(x, y);
            g->setLineStyle(QCPGraph::lsStepLeft);
            g->setPen(QPen(draw::armColor(armIndex(a, v.arm)), 1.6));
            if (named[v.arm]) {
                g->removeFromLegend();
            } else {
                g->setName(q(v.arm));
                named[v.arm] = true;
            }
        }
    }
    auto* skips = p->addGraph();
    skips->setData(skip_x, skip_y);
    skips->setLineStyle(QCPGraph::lsNone);
    skips->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QColor(200, 0, 0), 8));
    skips->setName(QString("skipped step (%1)").arg(skip_x.size()));
    p->yAxis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> log(new QCPAxisTickerLog);
    log->setLogBase(2);
    p->yAxis->setTicker(log);
    p->yAxis->setNumberFormat("gb");
    p->yAxis->setRange(lo / 4, hi * 4);
    p->xAxis->rescale();
    p->xAxis->scaleRange(1.02, p->xAxis->range().center());
    p->xAxis->setLabel("samples seen");
    p->yAxis->setLabel("loss scale");
    p->legend->setVisible(true);
    p->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
    return p.image();
}

}  // namespace

std::vector<PlotImage> renderPlots(const ReportContent& content, const PlotOptions& options) {
    std::vector<PlotImage> out;
    const auto& a = content.analysis;
    const std::string band_text =
        a.band.known() ? "The shaded bands are " + a.baseline + "'s mean \xC2\xB1 2\xCF\x83 and " +
                             "min\xE2\x80\x93max over its " + std::to_string(a.band.seeds) +
                             " seeds: the seed noise an arm is judged against."
                       : a.baseline + " ran with one seed, so there is no noise band.";
    out.push_back({"loss", "Training loss over samples seen",
                   QString::fromStdString(
                       "Each arm's mean (bold) and each run (faint), smoothed over 5% of the "
                       "samples. Samples seen, not steps, lines up arms with accumulation. " +
                       band_text),
                   lossPlot(content, options)});
    if (a.band.known() && !a.band.x.empty() && a.arm_curves.size() > 1) {
        out.push_back(
            {"deviation", "Distance from the baseline in band units",
             QString::fromStdString(
                 "Each arm's smoothed training loss minus " + a.baseline +
                 "'s mean, divided by 2\xCF\x83 of " + a.baseline +
                 "'s seeds at that point: inside the shaded \xC2\xB1 1 the arm is inside the "
                 "seed noise. The verdict reads the last quarter of this curve; a steady offset "
                 "with the same final metric is named, not called divergence."),
             deviationPlot(content, options)});
    }
    if (!a.validation.empty()) {
        const bool accuracy = a.validation_metric == "val_accuracy";
        const bool final_only =
            std::all_of(a.validation.begin(), a.validation.end(),
                        [](const analysis::MetricBand& b) { return b.x.size() == 1; });
        const std::string what = accuracy ? "validation accuracy" : "validation loss";
        std::string caption =
            final_only ? "The runs evaluated once, at the end: each arm's mean " + what +
                             " with bars of \xC2\xB1 2\xCF\x83 over its seeds."
                       : "Each arm's mean " + what +
                             " over its seeds at every evaluation, shaded \xC2\xB1 2\xCF\x83" +
                             (accuracy ? "; the plot shows the second half of the run" : "") + ".";
        const double tol = verdictTolerance(a);
        if (std::isfinite(tol)) {
            caption += " The dashed lines are the verdict's tolerance around " + a.baseline +
                       "'s final mean: an arm whose final mean falls below the lower line, "
                       "beyond the seeds' noise, lost quality.";
        }
        out.push_back({"validation", accuracy ? "Validation accuracy" : "Validation loss",
                       QString::fromStdString(caption), validationPlot(content, options)});
    }
    out.push_back(
        {"memory", "Peak memory",
         QString::fromStdString("The highest " + a.memory_label + " of any run of the arm" +
                                (a.memory_label == "peak allocated" ? " (CUDA caching allocator)."
                                 : a.memory_label == "peak in tensors"
                                     ? " (the bytes the run's own tensors held on the CPU)."
                                 : a.memory_label == "peak RSS"
                                     ? " (resident set of the process on CPU: an upper bound "
                                       "that includes the runtime)."
                                     : " (measured in different ways: not comparable).")),
         memoryPlot(content, options)});
    out.push_back({"step-time", "Time per sample",
                   "Step time divided by the samples in the step, over timed steps (warm-up "
                   "excluded): box p25\xE2\x80\x93p75 with the median, whiskers p5\xE2\x80\x93p95.",
                   stepTimePlot(content, options)});
    bool any_scaler = false;
    QImage scale = lossScalePlot(content, options, any_scaler);
    const bool any_skip = std::any_of(a.verdicts.begin(), a.verdicts.end(),
                                      [](const auto& v) { return v.health.skipped > 0; });
    if (any_scaler || any_skip) {
        out.push_back({"loss-scale", "Loss scale and skipped steps",
                       "The dynamic loss scale of each run (log scale); red crosses mark "
                       "steps skipped because the gradients held inf/NaN.",
                       scale});
    } else {
        // A flat line at 1 is worth a sentence, not a page: no image.
        out.push_back({"loss-scale", "Loss scale and skipped steps",
                       "Loss scale: constant at 1 in every run (no arm used loss scaling; fp32 "
                       "and bf16 need none), and no step was skipped.",
                       QImage()});
    }
    for (auto& p : numericsPlots(content, options)) {
        out.push_back(std::move(p));
    }
    if (content.advice) {
        Plot plot(options, "Throughput against memory");
        draw::drawAdviceChart(*plot, *content.advice);
        out.push_back(
            {kAdvicePlotId, "Throughput against memory",
             "Each candidate timed alone: samples/s against its peak memory. The dashed line "
             "is the front no candidate beats on both; the star is the recommendation, grey "
             "crosses were ruled out (the reason beside them).",
             plot.image()});
    }
    for (auto& p : out) {
        p.display_width = options.width;
    }
    return out;
}

QString scalesPlotId(int64_t run_id) {
    return QString("numerics-%1-scales").arg(run_id);
}

QString numericsPlotId(int64_t run_id, analysis::NumericsMetric metric) {
    return QString("numerics-%1-%2")
        .arg(run_id)
        .arg(metric == analysis::NumericsMetric::Headroom ? "headroom" : "underflow");
}

}  // namespace ampbench::report
