#include "ui/runs/HistoryView.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>
#include <exception>

#include "core/store/Database.h"
#include "ui/data/StoreSession.h"
#include "ui/runs/HistoryFilter.h"
#include "ui/runs/RunTreeModel.h"

namespace ampbench::ui {

HistoryView::HistoryView(RunTreeModel& runs, StoreSession& session, QWidget* parent)
    : QWidget(parent), runs_(runs), session_(session) {
    confirm_ = [this](const QString& title, const QString& question) {
        return QMessageBox::question(this, title, question, QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    name_ = new QLineEdit;
    name_->setObjectName("historyName");
    name_->setPlaceholderText(tr("Filter by experiment or arm name"));
    name_->setClearButtonEnabled(true);
    status_ = new QComboBox;
    status_->setObjectName("historyStatus");
    status_->addItem(tr("Any status"), QString());
    for (const char* s : {"queued", "running", "finished", "failed", "cancelled", "interrupted"}) {
        status_->addItem(QString::fromLatin1(s), QString::fromLatin1(s));
    }
    show_ = new QPushButton(tr("Show in plots"));
    rename_ = new QPushButton(tr("Rename\u2026"));
    rename_->setObjectName("historyRename");
    notes_ = new QPushButton(tr("Notes\u2026"));
    notes_->setObjectName("historyNotes");
    delete_ = new QPushButton(tr("Delete\u2026"));
    bar->addWidget(name_, 1);
    bar->addWidget(status_);
    bar->addSpacing(12);
    bar->addWidget(show_);
    bar->addWidget(rename_);
    bar->addWidget(notes_);
    bar->addWidget(delete_);
    layout->addLayout(bar);

    filter_ = new HistoryFilter(this);
    filter_->setSourceModel(&runs_);
    tree_ = new QTreeView;
    tree_->setObjectName("history");
    tree_->setModel(filter_);
    tree_->setSortingEnabled(true);
    tree_->sortByColumn(RunTreeModel::DateColumn, Qt::DescendingOrder);
    tree_->setSelectionMode(QAbstractItemView::SingleSelection);
    tree_->setSelectionBehavior(QAbstractItemView::SelectRows);
    tree_->setUniformRowHeights(true);
    tree_->setAlternatingRowColors(true);
    tree_->header()->setSectionResizeMode(RunTreeModel::NameColumn, QHeaderView::Interactive);
    tree_->header()->resizeSection(RunTreeModel::NameColumn, 320);
    tree_->header()->resizeSection(RunTreeModel::StatusColumn, 100);
    tree_->header()->resizeSection(RunTreeModel::StepsColumn, 110);
    tree_->header()->resizeSection(RunTreeModel::DateColumn, 150);
    details_ = new QPlainTextEdit;
    details_->setObjectName("historyDetails");
    details_->setReadOnly(true);
    details_->setPlaceholderText(tr("Select an experiment or a run to see what was recorded"));
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(tree_);
    split->addWidget(details_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    connect(name_, &QLineEdit::textChanged, this, &HistoryView::setNameFilter);
    connect(status_, &QComboBox::currentIndexChanged, this,
            [this] { filter_->setStatusFilter(status_->currentData().toString()); });
    connect(tree_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &HistoryView::updateButtons);
    connect(filter_, &QAbstractItemModel::dataChanged, this, &HistoryView::updateButtons);
    connect(rename_, &QPushButton::clicked, this, &HistoryView::renameSelected);
    connect(notes_, &QPushButton::clicked, this, &HistoryView::editNotes);
    connect(delete_, &QPushButton::clicked, this, &HistoryView::deleteSelected);
    connect(show_, &QPushButton::clicked, this, [this] {
        const auto [id, isRun] = selected();
        if (id != 0) {
            Q_EMIT showRuns(isRun ? QList<qint64>{id} : runs_.runsOfExperiment(id));
        }
    });
    connect(tree_, &QTreeView::doubleClicked, show_, &QPushButton::click);
    updateButtons();
}

void HistoryView::setNameFilter(const QString& text) {
    if (name_->text() != text) {
        name_->setText(text);  // comes back through textChanged
        return;
    }
    filter_->setNameFilter(text);
    if (!text.isEmpty()) {
        tree_->expandAll();
    }
}

void HistoryView::setStatusFilter(const QString& status) {
    status_->setCurrentIndex(std::max(0, status_->findData(status)));
    tree_->expandAll();
}

QPair<qint64, bool> HistoryView::selected() const {
    const auto rows = tree_->selectionModel()->selectedRows();
    if (rows.isEmpty()) {
        return {0, false};
    }
    return {rows.first().data(RunTreeModel::IdRole).toLongLong(),
            rows.first().data(RunTreeModel::IsRunRole).toBool()};
}

qint64 HistoryView::selectedExperiment() const {
    const auto rows = tree_->selectionModel()->selectedRows();
    if (rows.isEmpty()) {
        return 0;
    }
    const QModelIndex row = rows.first();
    const QModelIndex experiment = row.data(RunTreeModel::IsRunRole).toBool() ? row.parent() : row;
    return experiment.data(RunTreeModel::IdRole).toLongLong();
}

void HistoryView::updateButtons() {
    const auto [id, isRun] = selected();
    show_->setEnabled(id != 0);
    const auto rows = tree_->selectionModel()->selectedRows();
    const QString details =
        rows.isEmpty() ? QString() : rows.first().data(RunTreeModel::DetailsRole).toString();
    if (details != details_->toPlainText()) {  // keeps the scroll position otherwise
        details_->setPlainText(details);
    }
    rename_->setEnabled(id != 0 && !isRun);
    notes_->setEnabled(id != 0);
    delete_->setEnabled(id != 0);
}

void HistoryView::renameSelected() {
    const auto [id, isRun] = selected();
    QStandardItem* item = isRun ? nullptr : runs_.experimentItem(id);
    if (!item || !session_.db()) {
        return;
    }
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("Rename experiment"), tr("Name:"),
                                               QLineEdit::Normal, item->text(), &ok);
    if (ok) {
        renameExperiment(id, name);
    }
}

bool HistoryView::renameExperiment(qint64 id, const QString& name) {
    if (name.trimmed().isEmpty() || !session_.db()) {
        return false;
    }
    bool done = true;
    try {
        session_.db()->renameExperiment(id, name.trimmed().toStdString());
    } catch (const std::exception& e) {
        Q_EMIT error(QString::fromStdString(e.what()));
        done = false;
    }
    session_.pollNow();
    return done;
}

void HistoryView::editNotes() {
    const auto [id, isRun] = selected();
    QStandardItem* item = isRun ? runs_.runItem(id) : runs_.experimentItem(id);
    if (!item || !session_.db()) {
        return;
    }
    const QStandardItem* notesCell =
        item->parent() ? item->parent()->child(item->row(), RunTreeModel::NotesColumn)
                       : runs_.item(item->row(), RunTreeModel::NotesColumn);
    bool ok = false;
    const QString notes = QInputDialog::getMultiLineText(
        this, isRun ? tr("Run notes") : tr("Experiment notes"), item->text(),
        notesCell ? notesCell->data(RunTreeModel::SortRole).toString() : QString(), &ok);
    if (ok) {
        setNotes(id, isRun, notes);
    }
}

bool HistoryView::setNotes(qint64 id, bool isRun, const QString& notes) {
    if (!session_.db()) {
        return false;
    }
    bool done = true;
    try {
        if (isRun) {
            session_.db()->setRunNotes(id, notes.toStdString());
        } else {
            session_.db()->setExperimentNotes(id, notes.toStdString());
        }
    } catch (const std::exception& e) {
        Q_EMIT error(QString::fromStdString(e.what()));
        done = false;
    }
    session_.pollNow();
    return done;
}

bool HistoryView::deleteSelected() {
    const auto [id, isRun] = selected();
    QStandardItem* item = isRun ? runs_.runItem(id) : runs_.experimentItem(id);
    if (!item || !session_.db()) {
        return false;
    }
    if (item->data(RunTreeModel::StatusRole).toString() == "running") {
        Q_EMIT error(tr("%1 is still training; cancel it before deleting.").arg(item->text()));
        return false;
    }
    const QString what =
        isRun ? tr("run \u201c%1\u201d").arg(item->text())
              : tr("experiment \u201c%1\u201d and its %n run(s)", nullptr, item->rowCount())
                    .arg(item->text());
    if (!confirm_(tr("Delete"),
                  tr("Delete %1 with every recorded row? This cannot be undone.").arg(what))) {
        return false;
    }
    try {
        if (isRun) {
            session_.db()->deleteRun(id);
        } else {
            session_.db()->deleteExperiment(id);
        }
    } catch (const std::exception& e) {
        Q_EMIT error(QString::fromStdString(e.what()));
        return false;
    }
    session_.pollNow();
    return true;
}

}  // namespace ampbench::ui
