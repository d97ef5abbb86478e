#pragma once
#include <QColor>

/// The arm colours of the GUI's plots and of the report's, so an arm keeps its
/// colour from the screen to the page.
namespace ampbench::draw {

/// Colour of the arm at `armIndex` among the arms on show (a ten-colour cycle).
QColor armColor(int armIndex);
/// Shade of seed `seedIndex` of `seedCount` runs within an arm's colour: the
/// arm's colour itself for a single seed, lighter to darker otherwise; on a dark
/// background (`dark`) the shades keep clear of black.
QColor seedShade(const QColor& arm, int seedIndex, int seedCount, bool dark = false);
/// The same colour with alpha for faded curves (e.g. raw loss behind the EMA).
QColor faded(const QColor& color, int alpha = 60);

}  // namespace ampbench::draw
