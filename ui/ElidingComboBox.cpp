#include "ui/ElidingComboBox.h"

#include <QStyleOptionComboBox>
#include <QStylePainter>

namespace ampbench::ui {

QString ElidingComboBox::shownText() const {
    QStyleOptionComboBox option;
    initStyleOption(&option);
    const QRect field =
        style()->subControlRect(QStyle::CC_ComboBox, &option, QStyle::SC_ComboBoxEditField, this);
    // The style draws the label 1 pixel in from each side of the field.
    return fontMetrics().elidedText(option.currentText, Qt::ElideRight, field.width() - 2);
}

void ElidingComboBox::paintEvent(QPaintEvent*) {
    // QComboBox::paintEvent, with the label elided.
    QStylePainter painter(this);
    painter.setPen(palette().color(QPalette::Text));
    QStyleOptionComboBox option;
    initStyleOption(&option);
    painter.drawComplexControl(QStyle::CC_ComboBox, option);
    if (currentIndex() < 0 && !placeholderText().isEmpty()) {
        option.palette.setBrush(QPalette::ButtonText, option.palette.placeholderText());
        option.currentText = placeholderText();
    } else {
        option.currentText = shownText();
    }
    painter.drawControl(QStyle::CE_ComboBoxLabel, option);
}

}  // namespace ampbench::ui
