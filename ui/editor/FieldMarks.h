#pragma once
#include <QString>
#include <QStringList>

class QWidget;

namespace ampbench::ui {

/// Marks an input widget as invalid (a red frame drawn over it, the dynamic
/// property "invalid", the messages first in its tooltip) or, with no
/// messages, clears the mark.
void setFieldMark(QWidget* widget, const QStringList& messages, const QString& help);

/// A number as the editor shows it for editing: shortest text that reads back
/// as the same double, without an exponent for everyday magnitudes ("0.0005").
QString editableNumber(double value);

/// The red the editor marks invalid input with.
inline constexpr const char* kInvalidColor = "#d9534f";
/// objectName of the red frame child of a marked widget.
inline constexpr const char* kInvalidMarkName = "invalidMark";

}  // namespace ampbench::ui
