#include "ui/plots/PlotExport.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QBuffer>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QMessageBox>
#include <QPageSize>
#include <QPdfWriter>
#include <QSpinBox>
#include <QStandardPaths>
#include <QSvgGenerator>
#include <exception>

#include "core/store/OutputFile.h"
#include "ui/Settings.h"
#include "ui/plots/PlotPanel.h"

namespace ampbench::ui {
namespace {

/// A workbench panel drawn as a figure while this lives (legend, clean title, no
/// hover marker); any other plot as it is.
class FigureScope {
  public:
    FigureScope(QCustomPlot& plot, int width) : panel_(qobject_cast<PlotPanel*>(&plot)) {
        if (panel_) {
            panel_->beginFigure(width);
        }
    }
    ~FigureScope() {
        if (panel_) {
            panel_->endFigure();
        }
    }
    FigureScope(const FigureScope&) = delete;
    FigureScope& operator=(const FigureScope&) = delete;

  private:
    PlotPanel* panel_;
};

void paint(QCustomPlot& plot, QPaintDevice& device, int width, int height) {
    QCPPainter painter(&device);
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    plot.toPainter(&painter, width, height);
}

}  // namespace

bool imageFormatOf(const QString& path, ImageFormat* format) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == "png") {
        *format = ImageFormat::Png;
    } else if (suffix == "svg") {
        *format = ImageFormat::Svg;
    } else if (suffix == "pdf") {
        *format = ImageFormat::Pdf;
    } else {
        return false;
    }
    return true;
}

QByteArray renderPlot(QCustomPlot& plot, ImageFormat format, int width, int height) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    const FigureScope figure(plot, width);
    switch (format) {
        case ImageFormat::Png:
            plot.toPixmap(width, height).toImage().save(&buffer, "PNG");
            break;
        case ImageFormat::Svg: {
            QSvgGenerator svg;
            svg.setOutputDevice(&buffer);
            svg.setSize(QSize(width, height));
            svg.setViewBox(QRect(0, 0, width, height));
            svg.setTitle(plot.objectName());
            paint(plot, svg, width, height);
            break;
        }
        case ImageFormat::Pdf: {
            QPdfWriter pdf(&buffer);
            pdf.setCreator(QStringLiteral("AMP Workbench"));
            pdf.setTitle(plot.objectName());
            pdf.setPageSize(QPageSize(QSizeF(width, height), QPageSize::Point));
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            pdf.setResolution(72);  // one device pixel per point: the plot keeps its shape
            paint(plot, pdf, width, height);
            break;
        }
    }
    return bytes;
}

bool exportPlotImage(QCustomPlot& plot, const QString& path, int width, int height,
                     QString* error) {
    ImageFormat format{};
    if (!imageFormatOf(path, &format)) {
        *error = QObject::tr("%1: the name must end in .png, .svg or .pdf").arg(path);
        return false;
    }
    if (width < 16 || height < 16 || width > kMaxImageSide || height > kMaxImageSide) {
        *error = QObject::tr("Image size %1 \u00d7 %2: each side must be 16 to %3")
                     .arg(width)
                     .arg(height)
                     .arg(kMaxImageSide);
        return false;
    }
    const QByteArray bytes = renderPlot(plot, format, width, height);
    if (bytes.isEmpty()) {
        *error = QObject::tr("%1: the image could not be drawn").arg(path);
        return false;
    }
    try {
        store::writeFileAtomically(path.toStdString(),
                                   std::string_view(bytes.constData(), bytes.size()));
    } catch (const std::exception& e) {
        *error = QString::fromStdString(e.what());
        return false;
    }
    return true;
}

void copyPlotImage(QCustomPlot& plot) {
    QImage image;
    {
        const FigureScope figure(plot, plot.width());
        image = plot.toPixmap(plot.width(), plot.height()).toImage();
    }
    QApplication::clipboard()->setImage(image);
}

namespace {
Settings* exportSettings = nullptr;  // GUI thread only
}  // namespace

void setExportSettings(Settings* settings) {
    exportSettings = settings;
}

void forgetExportSettings(const Settings* settings) {
    if (exportSettings == settings) {
        exportSettings = nullptr;
    }
}

void exportPlotWithDialog(QCustomPlot& plot, QWidget* parent) {
    // Not the panel's size on screen (a few hundred pixels): the last size used.
    const QSize size = exportSettings ? exportSettings->plotExportSize() : QSize(1200, 700);
    const QString folder =
        exportSettings ? exportSettings->plotExportFolder()
                       : QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    QDialog dialog(parent);
    dialog.setWindowTitle(QObject::tr("Export image"));
    auto* form = new QFormLayout(&dialog);
    auto* format = new QComboBox;
    format->addItem(QObject::tr("PNG image"), "png");
    format->addItem(QObject::tr("SVG drawing (scalable)"), "svg");
    format->addItem(QObject::tr("PDF (vector)"), "pdf");
    auto* width = new QSpinBox;
    auto* height = new QSpinBox;
    for (QSpinBox* box : {width, height}) {
        box->setRange(16, kMaxImageSide);
        box->setSuffix(QObject::tr(" px"));
    }
    width->setValue(size.width());
    height->setValue(size.height());
    form->addRow(QObject::tr("Format:"), format);
    form->addRow(QObject::tr("Width:"), width);
    form->addRow(QObject::tr("Height:"), height);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(QObject::tr("Save\u2026"));
    form->addRow(buttons);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    const QString suffix = format->currentData().toString();
    const QString name = plot.objectName().isEmpty() ? QStringLiteral("plot") : plot.objectName();
    QString path = QFileDialog::getSaveFileName(
        parent, QObject::tr("Export image"),
        QDir(folder).filePath(name.toLower().replace(' ', '-') + "." + suffix),
        format->currentText() + QStringLiteral(" (*.%1)").arg(suffix));
    if (path.isEmpty()) {
        return;
    }
    ImageFormat chosen{};
    if (!imageFormatOf(path, &chosen)) {
        path += "." + suffix;
    }
    QString error;
    if (!exportPlotImage(plot, path, width->value(), height->value(), &error)) {
        QMessageBox::warning(parent, QObject::tr("Export image"), error);
        return;
    }
    if (exportSettings) {
        exportSettings->setPlotExportSize(QSize(width->value(), height->value()));
        exportSettings->setPlotExportFolder(QFileInfo(path).absolutePath());
    }
}

}  // namespace ampbench::ui
