#include "ui/report/ReportWriter.h"

#include <QAbstractTextDocumentLayout>
#include <QBuffer>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>
#include <QUrl>
#include <cmath>

#include "ui/report/ReportHtml.h"
#include "ui/report/ReportPlots.h"

namespace ampbench::report {

QByteArray renderHtml(const ReportContent& content) {
    return QByteArray::fromStdString(reportHtml(content, ImageMode::Embedded));
}

namespace {

/// The sections that start a page (Plots, Runs) leave the page before them as the last
/// of their content filled it: where that is a line spilled over (under a fifth of a
/// page), the break goes and the section follows on that page. The loss scale's one-line
/// note once had page 5 of 8 to itself.
void keepPagesFilled(QTextDocument& doc, double pageHeight) {
    QAbstractTextDocumentLayout* layout = doc.documentLayout();
    for (QTextBlock block = doc.begin(); block.isValid(); block = block.next()) {
        QTextBlockFormat format = block.blockFormat();
        const QTextBlock before = block.previous();
        if (!(format.pageBreakPolicy() & QTextFormat::PageBreak_AlwaysBefore) ||
            !before.isValid()) {
            continue;
        }
        const double bottom = layout->blockBoundingRect(before).bottom();
        const double used = bottom - std::floor(bottom / pageHeight) * pageHeight;
        if (used < pageHeight / 5) {
            format.setPageBreakPolicy(format.pageBreakPolicy() &
                                      ~QTextFormat::PageBreak_AlwaysBefore);
            QTextCursor(block).setBlockFormat(format);  // laid out again from here
        }
    }
}

}  // namespace

QByteArray renderPdf(const ReportContent& content) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QPdfWriter writer(&buffer);
    writer.setPageSize(QPageSize(QPageSize::A4));
    writer.setPageMargins(QMarginsF(15, 14, 15, 12), QPageLayout::Millimeter);
    writer.setResolution(300);
    const QString title = QString::fromStdString("AMP Workbench report: " + content.analysis.name);
    writer.setTitle(title);
    writer.setCreator("AMP Workbench");

    QTextDocument doc;
    QFont font("DejaVu Sans");
    font.setPointSizeF(8.5);
    doc.setDefaultFont(font);
    // Lay out in the writer's own units, paginated here rather than by
    // QTextDocument::print, which would add 2 cm margins and leave no room for a footer.
    doc.documentLayout()->setPaintDevice(&writer);
    QTextFrameFormat root = doc.rootFrame()->frameFormat();
    root.setMargin(0);
    doc.rootFrame()->setFrameFormat(root);
    for (const auto& p : content.plots) {
        if (!p.image.isNull()) {
            doc.addResource(QTextDocument::ImageResource, QUrl(plotResourceName(p.id)),
                            QVariant(p.image));
        }
    }
    doc.setHtml(QString::fromStdString(reportHtml(content, ImageMode::Resource)));
    const double footer = writer.resolution() * 0.3;  // inches → device pixels
    const QSizeF page(writer.width(), writer.height() - footer);
    doc.setPageSize(page);
    keepPagesFilled(doc, page.height());

    QPainter painter(&writer);
    QFont small = font;
    small.setPointSizeF(7.5);
    const int pages = doc.pageCount();
    for (int i = 0; i < pages; ++i) {
        if (i > 0) {
            writer.newPage();
        }
        painter.save();
        painter.translate(0, -i * page.height());
        // A row cut by the page break must not draw its borders into the footer.
        painter.setClipRect(QRectF(0, i * page.height(), page.width(), page.height()));
        QAbstractTextDocumentLayout::PaintContext context;
        context.clip = QRectF(0, i * page.height(), page.width(), page.height());
        context.palette.setColor(QPalette::Text, Qt::black);
        doc.documentLayout()->draw(&painter, context);
        painter.restore();
        painter.setFont(small);
        painter.setPen(QColor(110, 110, 110));
        painter.drawText(QRectF(0, page.height(), page.width(), footer),
                         Qt::AlignBottom | Qt::AlignLeft, title);
        painter.drawText(QRectF(0, page.height(), page.width(), footer),
                         Qt::AlignBottom | Qt::AlignRight,
                         QString("page %1 of %2").arg(i + 1).arg(pages));
    }
    painter.end();
    return bytes;
}

std::string renderJson(const ReportContent& content) {
    return analysis::reportJsonText(content);
}

ReportResult writeReports(ReportContent& content, const store::Database& db,
                          const ReportRequest& request) {
    ReportResult result;
    for (const auto& r : content.analysis.incomplete) {
        result.warnings.push_back("incomplete, left out: " + r.describe());
    }
    for (const auto& w : content.analysis.warnings) {
        result.warnings.push_back(w);
    }
    auto write = [&](const std::string& path, const QByteArray& bytes) {
        if (path.empty() || !result.ok()) {
            return;
        }
        std::string error = analysis::saveOutput(
            path, db.path(),
            std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())));
        if (!error.empty()) {
            result.failure = ReportResult::Failure::Io;
            result.error = error;
            return;
        }
        result.written.push_back(path);
    };
    if ((!request.html.empty() || !request.pdf.empty()) && content.plots.empty()) {
        content.plots = renderPlots(content);
    }
    if (!request.html.empty()) {
        write(request.html, renderHtml(content));
    }
    if (!request.pdf.empty()) {
        write(request.pdf, renderPdf(content));
    }
    if (result.ok()) {
        if (std::string error = analysis::writeDataFiles(db, content, request, result.written);
            !error.empty()) {
            result.failure = ReportResult::Failure::Io;
            result.error = error;
        }
    }
    return result;
}

ReportResult writeReports(const store::Database& db, int64_t experiment_id,
                          const ReportRequest& request) {
    ReportResult result;
    if (std::string error = analysis::checkOutputs(request, db.path()); !error.empty()) {
        result.failure = ReportResult::Failure::Io;
        result.error = error;
        return result;
    }
    analysis::AnalysisOptions options;
    options.baseline = request.baseline;
    auto content = report::prepareReport(db, experiment_id, options);
    if (!content) {
        result.failure = ReportResult::Failure::NotFound;
        result.error = "no experiment " + std::to_string(experiment_id) + " in " + db.path();
        return result;
    }
    return writeReports(*content, db, request);
}

}  // namespace ampbench::report
