#pragma once
// The per-layer numerics heatmap drawn into a QCustomPlot: tensors down, steps across,
// coloured by an underflow share or the headroom to overflow. One drawing for the
// History tab's widget and the report's image.
#include <QString>

#include "core/analysis/LayerNumerics.h"

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;

namespace ampbench::draw {

/// A cell's colour value: the metric's value, the headroom clamped to [-1, 40] (a
/// non-finite tensor at the bottom, an all-zero one at the top); NaN where the tensor
/// was not observed at that step.
double numericsCellValue(const analysis::NumericsGrid& grid, analysis::NumericsMetric metric,
                         size_t row, size_t column);

/// Rows between two tensor names so that names `line` pixels high do not overlap
/// in `height` pixels (1: every name).
int numericsLabelStride(size_t rows, int height, int line);

/// A tensor's name as the map shows it: elided in the middle (both the module path's
/// start and the tensor's last part stay) to at most `width` pixels of `plot`'s tick
/// labels; whole when `width` is 0 or it fits.
QString numericsRowLabel(const QCustomPlot& plot, const std::string& name, int width);

/// Fills `map` (on `plot`'s axes, coloured through `scale`) with `grid` by `metric`:
/// about ten step numbers across, every `label_every`-th tensor name down, each at most
/// `label_width` pixels wide (numericsRowLabel; 0: whole).
void drawNumericsMap(QCustomPlot& plot, QCPColorMap& map, QCPColorScale& scale,
                     const analysis::NumericsGrid& grid, analysis::NumericsMetric metric,
                     int label_every, int label_width = 0);

}  // namespace ampbench::draw
