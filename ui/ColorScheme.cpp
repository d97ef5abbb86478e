#include "ui/ColorScheme.h"

#include <QApplication>
#include <QPainter>
#include <QPainterPath>
#include <QPixmap>
#include <QProxyStyle>
#include <QStyle>
#include <QStyleOption>

namespace ampbench::ui {
namespace {

/// The desktop's palette, as the application started with it.
const QPalette& systemPalette() {
    static const QPalette palette = QApplication::palette();
    return palette;
}

QPalette darkPalette() {
    QPalette p;
    const QColor window(45, 45, 48), base(30, 30, 32), text(230, 230, 230);
    const QColor disabled(130, 130, 130), highlight(66, 133, 214);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(40, 40, 43));
    p.setColor(QPalette::ToolTipBase, window);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(150, 150, 150));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(55, 55, 58));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::white);
    p.setColor(QPalette::Light, QColor(75, 75, 78));
    p.setColor(QPalette::Midlight, QColor(65, 65, 68));
    p.setColor(QPalette::Mid, QColor(90, 90, 94));
    p.setColor(QPalette::Dark, QColor(25, 25, 27));
    p.setColor(QPalette::Shadow, Qt::black);
    p.setColor(QPalette::Highlight, highlight);
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(110, 170, 240));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
        p.setColor(QPalette::Disabled, role, disabled);
    }
    p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(80, 80, 80));
    return p;
}

/// The style the application started with, with check boxes outlined in the text
/// colour on a dark palette: Fusion draws an unticked box's edge darker than the
/// window, which on a dark one leaves nothing to see.
class OutlinedIndicators : public QProxyStyle {
  public:
    using QProxyStyle::QProxyStyle;

    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget) const override {
        QProxyStyle::drawPrimitive(element, option, painter, widget);
        if ((element != PE_IndicatorCheckBox && element != PE_IndicatorItemViewItemCheck) ||
            !option || option->palette.color(QPalette::Window).lightness() >= 128) {
            return;
        }
        const bool enabled = option->state & State_Enabled;
        QColor edge =
            option->palette.color(enabled ? QPalette::Active : QPalette::Disabled, QPalette::Text);
        edge.setAlpha(enabled ? 150 : 90);
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing, false);
        painter->setPen(QPen(edge, 1));
        painter->setBrush(Qt::NoBrush);
        // Fusion's box is the indicator's rectangle less one pixel on the right and below.
        painter->drawRect(option->rect.adjusted(0, 0, -1, -1));
        painter->restore();
    }
};

}  // namespace

QPalette schemePalette(const QString& scheme) {
    if (scheme == QLatin1String("dark")) {
        return darkPalette();
    }
    if (scheme == QLatin1String("light")) {
        return QApplication::style()->standardPalette();
    }
    return systemPalette();
}

void applyColorScheme(const QString& scheme) {
    systemPalette();  // kept before the first change
    if (!dynamic_cast<OutlinedIndicators*>(QApplication::style())) {
        QApplication::setStyle(new OutlinedIndicators(QApplication::style()->name()));
    }
    QApplication::setPalette(schemePalette(scheme));
}

QIcon toolIcon(ToolIcon kind, const QPalette& palette) {
    QIcon icon;
    for (const auto mode : {QIcon::Normal, QIcon::Disabled}) {
        const QColor color = palette.color(
            mode == QIcon::Normal ? QPalette::Active : QPalette::Disabled, QPalette::ButtonText);
        for (const int side : {16, 24, 32}) {
            QPixmap pixmap(side, side);
            pixmap.fill(Qt::transparent);
            QPainter painter(&pixmap);
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setPen(Qt::NoPen);
            painter.setBrush(color);
            const double m = side * 0.2;
            if (kind == ToolIcon::Run) {
                QPainterPath path;
                path.moveTo(m, m * 0.8);
                path.lineTo(side - m, side / 2.0);
                path.lineTo(m, side - m * 0.8);
                path.closeSubpath();
                painter.drawPath(path);
            } else {
                painter.drawRoundedRect(QRectF(m, m, side - 2 * m, side - 2 * m), 1.5, 1.5);
            }
            painter.end();
            icon.addPixmap(pixmap, mode);
        }
    }
    return icon;
}

}  // namespace ampbench::ui
