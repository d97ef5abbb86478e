#include "ui/editor/FieldMarks.h"

#include <QEvent>
#include <QLocale>
#include <QPainter>
#include <QVariant>
#include <QWidget>
#include <cmath>

namespace ampbench::ui {
namespace {

/// A red frame drawn over a field. An overlay rather than a style sheet, so the
/// field keeps the native look of its style (spin-box arrows, combo button).
class InvalidFrame : public QWidget {
  public:
    explicit InvalidFrame(QWidget* field) : QWidget(field) {
        setObjectName(kInvalidMarkName);
        setAttribute(Qt::WA_TransparentForMouseEvents);
        setFocusPolicy(Qt::NoFocus);
        field->installEventFilter(this);
        setGeometry(field->rect());
    }

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched == parent() && event->type() == QEvent::Resize) {
            setGeometry(parentWidget()->rect());
        }
        return false;
    }
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(QPen(QColor(kInvalidColor), 2));
        p.drawRoundedRect(QRectF(rect()).adjusted(1, 1, -1, -1), 3, 3);
    }
};

}  // namespace

QString editableNumber(double value) {
    const double magnitude = std::fabs(value);
    if (magnitude == 0 || (magnitude >= 1e-4 && magnitude < 1e9)) {
        return QString::number(value, 'f', QLocale::FloatingPointShortest);
    }
    return QString::number(value, 'g', QLocale::FloatingPointShortest);
}

void setFieldMark(QWidget* widget, const QStringList& messages, const QString& help) {
    const bool invalid = !messages.isEmpty();
    const QString tip =
        invalid ? messages.join('\n') + (help.isEmpty() ? QString() : "\n\n" + help) : help;
    widget->setProperty("invalid", invalid);
    if (widget->toolTip() != tip) {
        widget->setToolTip(tip);
    }
    auto* frame = widget->findChild<QWidget*>(kInvalidMarkName, Qt::FindDirectChildrenOnly);
    if (invalid && !frame) {
        frame = new InvalidFrame(widget);
    }
    if (frame) {
        frame->setVisible(invalid);
        frame->raise();
    }
}

}  // namespace ampbench::ui
