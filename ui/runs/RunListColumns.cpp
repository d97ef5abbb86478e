#include "ui/runs/RunListColumns.h"

#include <QEvent>
#include <QHeaderView>
#include <QStyle>
#include <QStyleOptionViewItem>
#include <QTreeView>
#include <algorithm>
#include <functional>

#include "ui/runs/RunTreeModel.h"

namespace ampbench::ui {

RunListColumns::RunListColumns(QTreeView* view) : QObject(view), view_(view) {
    QHeaderView* header = view_->header();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(RunTreeModel::NameColumn, QHeaderView::Stretch);
    for (int c :
         {RunTreeModel::StatusColumn, RunTreeModel::StepsColumn, RunTreeModel::TagsColumn}) {
        header->setSectionResizeMode(c, QHeaderView::Fixed);
    }
    view_->setColumnHidden(RunTreeModel::TagsColumn, true);
    QAbstractItemModel* model = view_->model();
    for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved}) {
        connect(model, signal, this, &RunListColumns::schedule);
    }
    connect(model, &QAbstractItemModel::modelReset, this, &RunListColumns::schedule);
    connect(model, &QAbstractItemModel::layoutChanged, this, &RunListColumns::schedule);
    connect(model, &QAbstractItemModel::dataChanged, this, &RunListColumns::schedule);
    connect(view_, &QTreeView::expanded, this, &RunListColumns::schedule);
    connect(view_, &QTreeView::collapsed, this, &RunListColumns::schedule);
    view_->viewport()->installEventFilter(this);
}

bool RunListColumns::eventFilter(QObject* watched, QEvent* event) {
    if (watched == view_->viewport() &&
        (event->type() == QEvent::Resize || event->type() == QEvent::Show)) {
        schedule();
    }
    return QObject::eventFilter(watched, event);
}

void RunListColumns::schedule() {
    if (due_) {
        return;
    }
    due_ = true;
    QMetaObject::invokeMethod(this, &RunListColumns::fit, Qt::QueuedConnection);
}

int RunListColumns::armSeedWidth() const {
    // Where the text of a run's name cell starts, past the indentation and check box.
    QStyleOptionViewItem option;
    option.initFrom(view_->viewport());
    option.rect = QRect(0, 0, 1000, 20);
    option.features = QStyleOptionViewItem::HasDisplay | QStyleOptionViewItem::HasCheckIndicator;
    option.text = QStringLiteral("x");
    QStyle* style = view_->style();
    const QRect text = style->subElementRect(QStyle::SE_ItemViewItemText, &option, view_);
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, view_) + 1;
    const int indent = view_->indentation() * (view_->rootIsDecorated() ? 2 : 1);
    int widest = 0;
    const QFontMetrics fm = view_->fontMetrics();
    const QAbstractItemModel* model = view_->model();
    for (int r = 0; r < model->rowCount(); ++r) {
        const QModelIndex experiment = model->index(r, RunTreeModel::NameColumn);
        for (int c = 0; c < model->rowCount(experiment); ++c) {
            // "arm · seed N", without the label the user gave the run (that may be cut).
            const QString armSeed = model->index(c, RunTreeModel::NameColumn, experiment)
                                        .data()
                                        .toString()
                                        .section(QStringLiteral(" \u2014 "), 0, 0);
            widest = std::max(widest, fm.horizontalAdvance(armSeed));
        }
    }
    return indent + text.left() + 2 * margin + widest + 1;
}

int RunListColumns::headerNeed(int column) const {
    // The header's own hint is no use for a hidden section.
    const QHeaderView* header = view_->header();
    const int margin = header->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header);
    return header->fontMetrics().horizontalAdvance(
               view_->model()->headerData(column, Qt::Horizontal).toString()) +
           4 * margin;
}

int RunListColumns::columnNeed(int column) const {
    int need = headerNeed(column);
    const QFontMetrics fm = view_->fontMetrics();
    const int margin =
        2 * (view_->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, view_) + 1) + 4;
    const QAbstractItemModel* model = view_->model();
    std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
        for (int r = 0; r < model->rowCount(parent); ++r) {
            need = std::max(
                need,
                fm.horizontalAdvance(model->index(r, column, parent).data().toString()) + margin);
            walk(model->index(r, 0, parent));
        }
    };
    walk({});
    return need;
}

bool RunListColumns::tagged() const {
    const QAbstractItemModel* model = view_->model();
    std::function<bool(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
        for (int r = 0; r < model->rowCount(parent); ++r) {
            if (!model->index(r, RunTreeModel::TagsColumn, parent).data().toString().isEmpty() ||
                walk(model->index(r, 0, parent))) {
                return true;
            }
        }
        return false;
    };
    return walk({});
}

void RunListColumns::fit() {
    due_ = false;
    const bool tags = tagged();
    if (!view_->isVisible()) {
        // Widths wait for the list to be on show; whether there are tags does not.
        view_->setColumnHidden(RunTreeModel::TagsColumn, !tags);
        return;
    }
    QHeaderView* header = view_->header();
    int room = view_->viewport()->width() - armSeedWidth();
    // The state always shows: the name gives way to it on a list too narrow for both.
    const int status = columnNeed(RunTreeModel::StatusColumn);
    view_->setColumnHidden(RunTreeModel::StatusColumn, false);
    header->resizeSection(RunTreeModel::StatusColumn, status);
    room -= status;
    const int steps = columnNeed(RunTreeModel::StepsColumn);
    const bool stepsFit = steps <= room;
    view_->setColumnHidden(RunTreeModel::StepsColumn, !stepsFit);
    if (stepsFit) {
        header->resizeSection(RunTreeModel::StepsColumn, steps);
        room -= steps;
    }
    // Tags take what is left, cut at their end, once the column's title fits.
    const bool tagsFit = tags && room >= headerNeed(RunTreeModel::TagsColumn);
    view_->setColumnHidden(RunTreeModel::TagsColumn, !tagsFit);
    if (tagsFit) {
        header->resizeSection(RunTreeModel::TagsColumn,
                              std::min(room, columnNeed(RunTreeModel::TagsColumn)));
    }
}

}  // namespace ampbench::ui
