#include "ui/editor/WheelGuard.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>

namespace ampbench::ui {
namespace {

/// The spin box or combo box `o` is, or is inside (a spin box's line edit).
QWidget* guarded(QObject* o) {
    for (auto* w = qobject_cast<QWidget*>(o); w; w = w->parentWidget()) {
        if (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w)) {
            return w;
        }
        if (w->isWindow()) {
            break;
        }
    }
    return nullptr;
}

}  // namespace

void WheelGuard::install() {
    static WheelGuard* guard = nullptr;
    if (!guard && qApp) {
        guard = new WheelGuard(qApp);
        qApp->installEventFilter(guard);
    }
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Polish) {
        if (auto* w = qobject_cast<QWidget*>(watched);
            w && (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w)) &&
            w->focusPolicy() == Qt::WheelFocus) {
            w->setFocusPolicy(Qt::StrongFocus);
        }
    } else if (event->type() == QEvent::Wheel) {
        QWidget* w = guarded(watched);
        const QWidget* focus = QApplication::focusWidget();
        if (w && focus != w && !w->isAncestorOf(focus)) {
            // Not taken here: QApplication hands it on to the parent, which scrolls.
            event->ignore();
            return true;
        }
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace ampbench::ui
