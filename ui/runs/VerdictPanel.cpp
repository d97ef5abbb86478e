#include "ui/runs/VerdictPanel.h"

#include <qcustomplot.h>

#include <QEvent>
#include <QTabWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "ui/report/HtmlText.h"
#include "ui/report/JudgementPlots.h"
#include "ui/report/ReportHtml.h"

namespace ampbench::ui {

namespace html = report::html;
using report::verdictDetailsHtml;
using report::verdictNarrowTableHtml;

namespace {

QCustomPlot* judgementPlot(const QString& name) {
    auto* plot = new QCustomPlot;
    plot->setObjectName(name);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    QFont f = plot->font();
    f.setPointSizeF(8.5);
    plot->legend->setFont(f);
    return plot;
}

/// The plot in the palette's colours: drawn for paper, the two plots were a white block
/// in the dark panel. Data colours stay (the arms' are the same on both).
void paintInPalette(QCustomPlot& plot, const QPalette& pal) {
    const QColor text = pal.color(QPalette::Text);
    const QColor base = pal.color(QPalette::Base);
    QColor grid = text;
    grid.setAlpha(base.lightness() < 128 ? 60 : 40);
    plot.setBackground(base);
    plot.axisRect()->setBackground(base);
    for (QCPAxis* axis : plot.axisRect()->axes()) {
        axis->setBasePen(QPen(text, 1));
        axis->setTickPen(QPen(text, 1));
        axis->setSubTickPen(QPen(text, 1));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    }
    plot.legend->setBrush(base);
    plot.legend->setBorderPen(QPen(pal.color(QPalette::Mid)));
    plot.legend->setTextColor(text);
}

}  // namespace

VerdictPanel::VerdictPanel(QWidget* parent)
    : QWidget(parent),
      tabs_(new QTabWidget(this)),
      text_(new QTextBrowser),
      deviation_(judgementPlot("deviation")),
      validation_(judgementPlot("validationBands")) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(tabs_);
    tabs_->setDocumentMode(true);
    tabs_->addTab(text_, tr("Verdict"));
    tabs_->addTab(deviation_, tr("Distance"));
    tabs_->setTabToolTip(1, tr("Each arm's smoothed training loss minus the baseline's mean, in "
                               "units of 2\u03c3 of the baseline's seeds: inside \u00b11 is inside "
                               "the seed noise. The verdict reads the last quarter."));
    tabs_->addTab(validation_, tr("Validation"));
    tabs_->setTabToolTip(2, tr("Each arm's validation metric as mean \u00b1 2\u03c3 over its "
                               "seeds, with the verdict's tolerance around the baseline's final "
                               "mean (dashed). Runs still training are drawn on their own, "
                               "dotted, as they evaluate."));
    text_->setOpenLinks(false);
    // Words break at their ends only ("inconclusive", never "inconclusiv" and "e"): a
    // narrow panel scrolls sideways instead.
    text_->setWordWrapMode(QTextOption::WordWrap);
    text_->setReadOnly(true);
    for (QCustomPlot* plot : {deviation_, validation_}) {
        paintInPalette(*plot, palette());
    }
    clear();
}

void VerdictPanel::setAnalysis(const analysis::ExperimentAnalysis& analysis,
                               const std::vector<report::RunningEvaluations>& running) {
    std::string body = "<p><b>" + html::escape(analysis.name) + "</b> (experiment " +
                       std::to_string(analysis.experiment_id) + ") \u00b7 each arm against <b>" +
                       html::escape(analysis.baseline) + "</b></p>";
    if (!analysis.incomplete.empty()) {
        body += "<p><b>Incomplete runs, left out:</b> ";
        for (size_t i = 0; i < analysis.incomplete.size(); ++i) {
            body += (i ? "; " : "") + analysis.incomplete[i].describe();
        }
        body += "</p>";
    }
    body += verdictNarrowTableHtml(analysis) + verdictDetailsHtml(analysis);
    for (const auto& w : analysis.warnings) {
        body += "<p><i>Note: " + html::escape(w) + "</i></p>";
    }
    if (!analysis.reproducibility.empty()) {
        body += "<p style=\"color:#666666\">Reproducibility: " +
                html::escape(analysis.reproducibility) + ".</p>";
    }
    body_ = QString::fromStdString(body);
    showBody();
    tabs_->setTabEnabled(1, report::drawDeviation(*deviation_, analysis));
    tabs_->setTabEnabled(2, report::drawValidation(*validation_, analysis, running));
    for (QCustomPlot* plot : {deviation_, validation_}) {
        paintInPalette(*plot, palette());  // the drawing sets some colours of its own
    }
    deviation_->replot();
    validation_->replot();
}

void VerdictPanel::clear(const QString& message) {
    for (auto* plot : {deviation_, validation_}) {
        plot->clearGraphs();
        plot->clearPlottables();
        plot->clearItems();
        plot->legend->setVisible(false);
        plot->replot();
    }
    tabs_->setTabEnabled(1, false);
    tabs_->setTabEnabled(2, false);
    tabs_->setCurrentIndex(0);
    body_ = "<p style=\"color:#666666\">" +
            (message.isEmpty() ? QString("No experiment selected.") : message.toHtmlEscaped()) +
            "</p>";
    showBody();
}

void VerdictPanel::showBody() {
    // The tables are written for paper (a light header band, light grey lines); on a
    // dark palette that band was a white stripe across the panel.
    const QPalette& p = palette();
    QString shown = body_;
    if (p.color(QPalette::Base).lightness() < 128) {
        const QString header =
            QStringLiteral("bgcolor=\"%1\" style=\"color:%2\"")
                .arg(p.color(QPalette::Button).name(), p.color(QPalette::ButtonText).name());
        shown.replace(QString::fromLatin1(report::html::kHeaderCell), header);
        // The lines between cells are a lighter shade of the border colour: white lines
        // across the dark panel; from a dark grey they are a quiet grey.
        shown.replace(QString::fromLatin1(report::html::kTableBorder),
                      QStringLiteral("border-color:") + p.color(QPalette::Midlight).name());
        shown.replace(
            QStringLiteral("color:#666666"),
            QStringLiteral("color:") + p.color(QPalette::Disabled, QPalette::Text).name());
    }
    text_->setHtml(shown);
}

void VerdictPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        for (QCustomPlot* plot : {deviation_, validation_}) {
            paintInPalette(*plot, palette());
            plot->replot(QCustomPlot::rpQueuedReplot);
        }
        if (!body_.isEmpty()) {
            showBody();
        }
    }
}

QString VerdictPanel::html() const {
    return text_->toHtml();
}

QString VerdictPanel::plainText() const {
    return text_->toPlainText();
}

}  // namespace ampbench::ui
