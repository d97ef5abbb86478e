#pragma once
// A plot as a picture for a paper or a message: PNG, SVG or PDF at a chosen size,
// or on the clipboard. Written whole or not at all. A workbench panel is drawn as
// a figure (PlotPanel::beginFigure: legend, title without the screen's marks, no
// hover marker) and left on screen as it was.
#include <QString>

class QCustomPlot;
class QWidget;

namespace ampbench::ui {

class Settings;

enum class ImageFormat { Png, Svg, Pdf };

/// The format a file name asks for by its suffix (case-insensitive); false when it
/// names none of PNG, SVG, PDF.
bool imageFormatOf(const QString& path, ImageFormat* format);

/// The plot drawn at `width` × `height` (pixels; points for PDF) in `format`.
QByteArray renderPlot(QCustomPlot& plot, ImageFormat format, int width, int height);

/// Writes the plot to `path` (format from its suffix) at `width` × `height`. False
/// with the reason in `error` (an unknown suffix, a size out of range, a file that
/// cannot be written); nothing is left at `path` then.
bool exportPlotImage(QCustomPlot& plot, const QString& path, int width, int height, QString* error);

/// The plot at its size on screen, drawn as a figure, on the clipboard as an image.
void copyPlotImage(QCustomPlot& plot);

/// Where the export dialog keeps the size and folder it used last (the window's
/// settings); null: 1200 × 700 in the user's documents folder each time.
void setExportSettings(Settings* settings);
/// Stops using `settings` if they are the ones set (their owner goes).
void forgetExportSettings(const Settings* settings);

/// Asks for a size (the last used) and a file (in the last folder), then writes it and
/// remembers both; says what went wrong in a message box.
void exportPlotWithDialog(QCustomPlot& plot, QWidget* parent);

/// Largest side of an exported image.
inline constexpr int kMaxImageSide = 20000;

}  // namespace ampbench::ui
