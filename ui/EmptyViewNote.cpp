#include "ui/EmptyViewNote.h"

#include <QAbstractItemModel>
#include <QAbstractItemView>
#include <QEvent>
#include <QPainter>

namespace ampbench::ui {

EmptyViewNote* EmptyViewNote::install(QAbstractItemView* view, const QString& text) {
    return new EmptyViewNote(view, text);
}

EmptyViewNote::EmptyViewNote(QAbstractItemView* view, const QString& text)
    : QObject(view), view_(view), text_(text) {
    view_->viewport()->installEventFilter(this);
    watchModel();
}

void EmptyViewNote::watchModel() {
    QAbstractItemModel* model = view_->model();
    if (!model) {
        return;
    }
    // The viewport is the connections' context: a view being destroyed resets its model
    // after its viewport has gone.
    QWidget* viewport = view_->viewport();
    auto repaint = [viewport] { viewport->update(); };
    connect(model, &QAbstractItemModel::rowsInserted, viewport, repaint);
    connect(model, &QAbstractItemModel::rowsRemoved, viewport, repaint);
    connect(model, &QAbstractItemModel::modelReset, viewport, repaint);
    connect(model, &QAbstractItemModel::layoutChanged, viewport, repaint);
}

void EmptyViewNote::setText(const QString& text) {
    text_ = text;
    view_->viewport()->update();
}

bool EmptyViewNote::isShown() const {
    return !text_.isEmpty() && (!view_->model() || view_->model()->rowCount() == 0);
}

bool EmptyViewNote::eventFilter(QObject* watched, QEvent* event) {
    if (watched == view_->viewport() && event->type() == QEvent::Paint && isShown()) {
        // Before the view's own painting, which draws nothing without rows.
        QPainter painter(view_->viewport());
        painter.setPen(view_->palette().color(QPalette::PlaceholderText));
        const QRect room = view_->viewport()->rect().adjusted(12, 12, -12, -12);
        painter.drawText(room, Qt::AlignCenter | Qt::TextWordWrap, text_);
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace ampbench::ui
