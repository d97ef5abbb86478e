#pragma once
// The report as HTML: one page, self-contained when images are embedded. The
// same markup feeds the PDF (through QTextDocument) and the GUI's verdict panel.
#include <QByteArray>
#include <QImage>
#include <QString>
#include <string>

#include "ui/report/ReportContent.h"

namespace ampbench::report {

enum class ImageMode {
    Embedded,  ///< data: URIs, for a standalone .html file
    Resource   ///< "ampbench-plot:<id>" names, for QTextDocument::addResource (PDF)
};

std::string reportHtml(const ReportContent& content, ImageMode mode);

/// Only the verdicts: a table of arms and each arm's reasons and next checks.
std::string verdictHtml(const analysis::ExperimentAnalysis& analysis);
std::string verdictTableHtml(const analysis::ExperimentAnalysis& analysis);
/// The verdict table for a narrow panel: each arm's figures on one row, the reason
/// on the row under them across the width.
std::string verdictNarrowTableHtml(const analysis::ExperimentAnalysis& analysis);
std::string verdictDetailsHtml(const analysis::ExperimentAnalysis& analysis);

/// The name under which a plot is registered with a QTextDocument in Resource mode.
QString plotResourceName(const QString& id);

QByteArray pngBytes(const QImage& image);

/// One plot: the image (embedded, or a resource of the PDF) and its caption.
std::string imageHtml(const PlotImage& plot, ImageMode mode);

/// An advice's section (ReportAdvice.cpp): the recommendation with its evidence, the
/// ranked table, why the others are not ranked, the chart and the lines for a PyTorch
/// loop; empty for an experiment that is no advice.
std::string adviceHtml(const ReportContent& content, ImageMode mode);

/// Sections on what ran: each arm's spec with its differences from the baseline
/// highlighted, the shared settings, the environment, and how to reproduce it.
std::string specSectionsHtml(const ReportContent& content, ImageMode mode);

}  // namespace ampbench::report
