#include "ui/StatusBar.h"

#include <QPainter>
#include <QStyleOption>
#include <algorithm>

namespace ampbench::ui {

QRect StatusBar::messageRoom() const {
    // QStatusBar's own margins (6 px at the left, 12 at the right), and the gap before
    // the leftmost widget on show (the permanent ones: the window adds no other).
    int right = width() - 12;
    for (const QWidget* w : findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly)) {
        if (w->isVisible() && !w->isWindow()) {
            right = std::min(right, w->x() - kGap);
        }
    }
    return QRect(6, 0, std::max(0, right - 6), height());
}

QString StatusBar::shownMessage() const {
    const QString message = currentMessage();
    return message.isEmpty()
               ? QString()
               : fontMetrics().elidedText(message, Qt::ElideRight, messageRoom().width());
}

void StatusBar::paintEvent(QPaintEvent* event) {
    const QString message = shownMessage();
    if (message.isEmpty()) {
        QStatusBar::paintEvent(event);
        return;
    }
    // QStatusBar::paintEvent with the message elided: while a message shows, the
    // status bar's normal widgets hide and the permanent ones keep their frames.
    QPainter p(this);
    QStyleOption opt;
    opt.initFrom(this);
    style()->drawPrimitive(QStyle::PE_PanelStatusBar, &opt, &p, this);
    for (QWidget* w : findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly)) {
        if (w->isVisible() && !w->isWindow()) {
            QStyleOption frame(0);
            frame.rect = w->geometry().adjusted(-2, -1, 2, 1);
            frame.palette = palette();
            frame.state = QStyle::State_None;
            style()->drawPrimitive(QStyle::PE_FrameStatusBarItem, &frame, &p, w);
        }
    }
    p.setPen(palette().windowText().color());
    p.drawText(messageRoom(), Qt::AlignLeading | Qt::AlignVCenter | Qt::TextSingleLine, message);
}

}  // namespace ampbench::ui
