#pragma once
// An advice's candidates as throughput against memory, drawn into a QCustomPlot: each
// measured candidate a point in its arm's colour, the recommendation a star, the ones
// ruled out a cross with why, and the front of what nothing beats on both drawn through
// them. One drawing for the GUI's Advice tab and the report's image.
#include "core/analysis/Advice.h"

class QCustomPlot;

namespace ampbench::draw {

/// Replaces `plot`'s graphs and items with the advice: peak memory (MiB) across,
/// samples/s up, each point named. Axes fit the points with room for their names.
void drawAdviceChart(QCustomPlot& plot, const analysis::Advice& advice);

}  // namespace ampbench::draw
