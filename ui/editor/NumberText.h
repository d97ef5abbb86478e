#pragma once
#include <QString>
#include <optional>

namespace ampbench::ui {

/// A number typed into the editor, surrounding spaces ignored; nullopt when the
/// text is not a number (the editor then marks the field and keeps the spec's
/// value). With `offMeansZero`, "off" (any case) reads as 0, as grad-clip shows it.
inline std::optional<double> parseNumberText(const QString& text, bool offMeansZero = false) {
    const QString t = text.trimmed();
    if (offMeansZero && t.compare(QStringLiteral("off"), Qt::CaseInsensitive) == 0) {
        return 0.0;
    }
    bool ok = false;
    const double v = t.toDouble(&ok);
    return ok ? std::optional<double>(v) : std::nullopt;
}

}  // namespace ampbench::ui
