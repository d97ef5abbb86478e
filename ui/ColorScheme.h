#pragma once
// The workbench's colours: the desktop's palette (a qt6ct theme, say), or a light or
// dark one chosen in View › Colours; and the toolbar's icons drawn in the palette's
// text colour, so they stay visible on a dark one.
#include <QIcon>
#include <QPalette>
#include <QString>

namespace ampbench::ui {

/// "system", "light" or "dark"; anything else reads as "system".
QPalette schemePalette(const QString& scheme);
/// Makes `scheme` the application's palette; the desktop's is kept from the first call.
/// The first call also wraps the application's style so that check boxes (in forms and
/// table cells) are outlined in the text colour wherever the palette is dark.
void applyColorScheme(const QString& scheme);

enum class ToolIcon { Run, Stop };
/// A run (triangle) or stop (square) icon in `palette`'s button text colour, with a
/// greyed state for a disabled action.
QIcon toolIcon(ToolIcon kind, const QPalette& palette);

}  // namespace ampbench::ui
