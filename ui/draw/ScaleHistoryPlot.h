#pragma once
// An FP8 arm's per-tensor scales over the optimizer steps drawn into a QCustomPlot:
// per role (input, weight, grad_output) the median and a least–largest band, the
// tensors that saturated as their own curves, named in the legend. One drawing for the
// History tab's numerics view and the report's image.
#include "core/analysis/ScaleHistory.h"

#include <QColor>

class QCustomPlot;

namespace ampbench::draw {

/// The colour of a role's median and band.
QColor castRoleColor(analysis::CastRole role);

/// Where the legend goes: under the axes, two entries a line (a page is narrow), or
/// right of them, one a line (a view is wide and short). Never over the curves.
enum class ScaleLegend { Below, Right };

/// Replaces `plot`'s graphs with `history`: log2 of the scale up (ticks read 2^k),
/// optimizer steps across; the `named` worst saturated tensors drawn and named (the
/// rest are counted in the legend), their saturated steps marked with crosses. The
/// legend is placed on the first call and stays there.
void drawScaleHistory(QCustomPlot& plot, const analysis::ScaleHistory& history,
                      ScaleLegend legend = ScaleLegend::Below, size_t named = 5);

}  // namespace ampbench::draw
