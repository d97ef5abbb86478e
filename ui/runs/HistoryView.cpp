#include "ui/runs/HistoryView.h"

#include <QAction>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyleOptionHeader>
#include <QTableWidget>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <exception>
#include <stdexcept>

#include "core/store/Database.h"
#include "core/store/NumericsStore.h"
#include "ui/EmptyViewNote.h"
#include "ui/data/StoreSession.h"
#include "ui/plots/NumericsHeatmap.h"
#include "ui/runs/HistoryFilter.h"
#include "ui/runs/RunDetails.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/runs/TrashModel.h"

namespace ampbench::ui {
namespace {

/// A header whose sort arrow points the way the rows run: down (▼) for a
/// descending column such as newest first. QHeaderView passes descending to the
/// style as SortUp, which Fusion on Linux (the workbench's style) draws as ▲.
class SortHeader : public QHeaderView {
  public:
    explicit SortHeader(QWidget* parent) : QHeaderView(Qt::Horizontal, parent) {
        // What QTreeView gives its own header.
        setSectionsMovable(true);
        setStretchLastSection(true);
        setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    }

  protected:
    void initStyleOptionForIndex(QStyleOptionHeader* option, int logicalIndex) const override {
        QHeaderView::initStyleOptionForIndex(option, logicalIndex);
        if (isSortIndicatorShown() && sortIndicatorSection() == logicalIndex) {
            option->sortIndicator = sortIndicatorOrder() == Qt::DescendingOrder
                                        ? QStyleOptionHeader::SortDown
                                        : QStyleOptionHeader::SortUp;
        }
    }
};

QTreeView* newTree(const char* name, QAbstractItemModel* model) {
    auto* tree = new QTreeView;
    tree->setObjectName(QString::fromLatin1(name));
    tree->setHeader(new SortHeader(tree));
    tree->setModel(model);
    tree->setSelectionMode(QAbstractItemView::SingleSelection);
    tree->setSelectionBehavior(QAbstractItemView::SelectRows);
    tree->setUniformRowHeights(true);
    tree->setAlternatingRowColors(true);
    return tree;
}

QPushButton* newButton(const QString& text, const char* name) {
    auto* b = new QPushButton(text);
    b->setObjectName(QString::fromLatin1(name));
    return b;
}

}  // namespace

HistoryView::HistoryView(RunTreeModel& runs, StoreSession& session, QWidget* parent)
    : QWidget(parent), runs_(runs), session_(session) {
    confirm_ = [this](const QString& title, const QString& question) {
        return QMessageBox::question(this, title, question, QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    mode_ = new QComboBox;
    mode_->setObjectName("historyMode");
    mode_->addItem(tr("History"));
    mode_->addItem(tr("Trash"));
    mode_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    mode_->setToolTip(tr("The history, or what was deleted: restore it, or empty the trash"));
    name_ = new QLineEdit;
    name_->setObjectName("historyName");
    name_->setPlaceholderText(tr("Filter by name, label or tag (tag:word for that tag only)"));
    name_->setClearButtonEnabled(true);
    status_ = new QComboBox;
    status_->setObjectName("historyStatus");
    status_->addItem(tr("Any status"), QString());
    for (const char* s : {"queued", "running", "finished", "failed", "cancelled", "interrupted"}) {
        status_->addItem(QString::fromLatin1(s), QString::fromLatin1(s));
    }
    show_ = newButton(tr("Show in plots"), "historyShow");
    rename_ = newButton(tr("Rename\u2026"), "historyRename");
    tags_ = newButton(tr("Tags\u2026"), "historyTags");
    notes_ = newButton(tr("Notes\u2026"), "historyNotes");
    delete_ = newButton(tr("Delete"), "historyDelete");
    restore_ = newButton(tr("Restore"), "historyRestore");
    empty_ = newButton(tr("Empty trash\u2026"), "historyEmptyTrash");
    bar->addWidget(mode_);
    bar->addWidget(name_, 1);
    bar->addWidget(status_);
    bar->addSpacing(12);
    for (QPushButton* b : {show_, rename_, tags_, notes_, delete_, restore_, empty_}) {
        bar->addWidget(b);
    }
    layout->addLayout(bar);

    auto* noticeBar = new QHBoxLayout;
    notice_ = new QLabel;
    notice_->setObjectName("historyNotice");
    notice_->setWordWrap(true);
    undo_ = newButton(tr("Undo"), "historyUndo");
    noticeBar->addWidget(notice_, 1);
    noticeBar->addWidget(undo_);
    layout->addLayout(noticeBar);
    notice_->hide();
    undo_->hide();

    filter_ = new HistoryFilter(this);
    filter_->setSourceModel(&runs_);
    tree_ = newTree("history", filter_);
    tree_->setSortingEnabled(true);
    tree_->sortByColumn(RunTreeModel::DateColumn, Qt::DescendingOrder);
    tree_->header()->setSectionResizeMode(RunTreeModel::NameColumn, QHeaderView::Interactive);
    tree_->header()->resizeSection(RunTreeModel::NameColumn, 320);
    tree_->header()->resizeSection(RunTreeModel::StatusColumn, 100);
    tree_->header()->resizeSection(RunTreeModel::StepsColumn, 110);
    tree_->header()->resizeSection(RunTreeModel::DateColumn, 150);
    tree_->header()->resizeSection(RunTreeModel::TagsColumn, 180);
    tree_->header()->moveSection(RunTreeModel::TagsColumn, RunTreeModel::NotesColumn);
    // The id beside the name: two experiments of one name differ by it.
    tree_->header()->setSectionResizeMode(RunTreeModel::IdColumn, QHeaderView::ResizeToContents);
    tree_->header()->moveSection(tree_->header()->visualIndex(RunTreeModel::IdColumn), 1);
    trash_ = new TrashModel(this);
    trashTree_ = newTree("trash", trash_);
    trashTree_->setRootIsDecorated(false);
    trashTree_->header()->resizeSection(TrashModel::NameColumn, 320);
    trashTree_->header()->resizeSection(TrashModel::WhatColumn, 320);
    stack_ = new QStackedWidget;
    stack_->addWidget(tree_);
    stack_->addWidget(trashTree_);

    details_ = new QTableWidget(0, 2);
    details_->setObjectName("historyDetails");
    details_->setHorizontalHeaderLabels({tr("Field"), tr("Value")});
    details_->verticalHeader()->hide();
    details_->horizontalHeader()->resizeSection(0, 230);
    details_->horizontalHeader()->setStretchLastSection(true);
    details_->setWordWrap(true);
    details_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    details_->setSelectionBehavior(QAbstractItemView::SelectRows);
    details_->setToolTip(tr("What was recorded about the selected experiment or run"));
    EmptyViewNote::install(
        details_, tr("Select an experiment or a run above to see what was recorded about it"));
    treeNote_ = EmptyViewNote::install(tree_, {});
    updateTreeNote();
    EmptyViewNote::install(trashTree_, tr("The trash is empty"));
    detailsTimer_ = new QTimer(this);
    detailsTimer_->setSingleShot(true);
    connect(detailsTimer_, &QTimer::timeout, this, &HistoryView::updateDetails);

    auto* split = new QSplitter(Qt::Vertical);
    split->setObjectName("historySplit");  // named: kept across starts (Settings)
    split->addWidget(stack_);
    split->addWidget(details_);
    numerics_ = new NumericsHeatmap;
    numerics_->hide();
    split->addWidget(numerics_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    // The Delete key does what the Delete button does (in the history; the trash's rows
    // go only through Empty trash…), and is listed with the tab's keys.
    deleteAction_ = new QAction(tr("Move the selected row to the trash"), this);
    deleteAction_->setShortcut(QKeySequence::Delete);
    deleteAction_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(deleteAction_);
    connect(deleteAction_, &QAction::triggered, this, [this] {
        if (!showingTrash()) {
            deleteSelected();
        }
    });
    undoAction_ = new QAction(tr("Undo delete"), this);
    undoAction_->setShortcut(QKeySequence::Undo);
    undoAction_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(undoAction_);
    connect(undoAction_, &QAction::triggered, this, &HistoryView::undoDelete);
    connect(undo_, &QPushButton::clicked, this, &HistoryView::undoDelete);

    connect(mode_, &QComboBox::currentIndexChanged, this, [this](int i) { showTrash(i == 1); });
    connect(name_, &QLineEdit::textChanged, this, &HistoryView::setNameFilter);
    connect(status_, &QComboBox::currentIndexChanged, this, [this] {
        filter_->setStatusFilter(status_->currentData().toString());
        updateTreeNote();
    });
    for (QTreeView* t : {tree_, trashTree_}) {
        connect(t->selectionModel(), &QItemSelectionModel::selectionChanged, this,
                &HistoryView::updateButtons);
    }
    connect(filter_, &QAbstractItemModel::dataChanged, this, &HistoryView::updateButtons);
    connect(filter_, &QAbstractItemModel::rowsRemoved, this, &HistoryView::updateButtons);
    connect(rename_, &QPushButton::clicked, this, &HistoryView::renameSelected);
    connect(tags_, &QPushButton::clicked, this, &HistoryView::editTags);
    connect(notes_, &QPushButton::clicked, this, &HistoryView::editNotes);
    connect(delete_, &QPushButton::clicked, this, &HistoryView::deleteSelected);
    connect(restore_, &QPushButton::clicked, this, &HistoryView::restoreSelected);
    connect(empty_, &QPushButton::clicked, this, &HistoryView::emptyTrash);
    connect(show_, &QPushButton::clicked, this, [this] {
        const auto [id, isRun] = selected();
        if (id != 0 && !showingTrash()) {
            Q_EMIT showRuns(isRun ? QList<qint64>{id} : runs_.runsOfExperiment(id));
        }
    });
    connect(tree_, &QTreeView::doubleClicked, show_, &QPushButton::click);
    connect(&session_, &StoreSession::changed, this, &HistoryView::refreshTrash);
    connect(&session_, &StoreSession::opened, this, [this] {
        undoStack_.clear();
        notify({}, false);
        updateTreeNote();
        refreshTrash();
    });
    connect(&session_, &StoreSession::closed, this, [this] {
        undoStack_.clear();
        notify({}, false);
        trash_->removeRows(0, trash_->rowCount());
        updateTreeNote();
        updateButtons();
    });
    refreshTrash();
}

void HistoryView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        paintSections(*details_);  // the headings' band in the new colours
    }
}

QTreeView* HistoryView::tree() const {
    return showingTrash() ? trashTree_ : tree_;
}

bool HistoryView::showingTrash() const {
    return stack_->currentWidget() == trashTree_;
}

void HistoryView::showTrash(bool trash) {
    if (mode_->currentIndex() != (trash ? 1 : 0)) {
        mode_->setCurrentIndex(trash ? 1 : 0);  // comes back through currentIndexChanged
        return;
    }
    stack_->setCurrentWidget(trash ? trashTree_ : tree_);
    name_->setEnabled(!trash);
    status_->setEnabled(!trash);
    if (trash) {
        refreshTrash();
    }
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
    updateTreeNote();
}

void HistoryView::updateTreeNote() {
    const bool filtered = !name_->text().isEmpty() || status_->currentIndex() > 0;
    treeNote_->setText(!session_.isOpen() ? tr("No database is open: File \u203a Open "
                                               "database\u2026 (Ctrl+O) opens one, File \u203a "
                                               "New database\u2026 makes one")
                       : filtered         ? tr("No experiment or run matches the filter")
                                          : tr("No experiments in this database yet: set one up "
                                                       "in the Experiment tab and press Run experiment"));
}

QString HistoryView::writeBlocker() const {
    if (!session_.isOpen()) {
        return tr("No database is open (File \u203a Open database\u2026)");
    }
    if (session_.isReadOnly()) {
        return tr("The database is open read-only: nothing in it can be changed");
    }
    return {};
}

void HistoryView::setStatusFilter(const QString& status) {
    status_->setCurrentIndex(std::max(0, status_->findData(status)));
    tree_->expandAll();
}

QPair<qint64, bool> HistoryView::selected() const {
    const auto rows = tree()->selectionModel()->selectedRows();
    if (rows.isEmpty()) {
        return {0, false};
    }
    return {rows.first().data(RunTreeModel::IdRole).toLongLong(),
            rows.first().data(RunTreeModel::IsRunRole).toBool()};
}

qint64 HistoryView::selectedExperiment() const {
    const auto rows = tree_->selectionModel()->selectedRows();
    if (showingTrash() || rows.isEmpty()) {
        return 0;
    }
    const QModelIndex row = rows.first();
    const QModelIndex experiment = row.data(RunTreeModel::IsRunRole).toBool() ? row.parent() : row;
    return experiment.data(RunTreeModel::IdRole).toLongLong();
}

void HistoryView::updateButtons() {
    const auto [id, isRun] = selected();
    const bool trash = showingTrash();
    for (QPushButton* b : {show_, rename_, tags_, notes_, delete_}) {
        b->setVisible(!trash);
    }
    restore_->setVisible(trash);
    empty_->setVisible(trash);
    show_->setEnabled(id != 0);
    rename_->setText(isRun ? tr("Label\u2026") : tr("Rename\u2026"));
    // What writes is off where nothing can be written, and says why (Notes… took the
    // text of a read-only database and then failed).
    const QString why = writeBlocker();
    auto offer = [&why](QPushButton* b, bool can, const QString& tip) {
        b->setEnabled(can && why.isEmpty());
        b->setToolTip(why.isEmpty() ? tip : why);
    };
    offer(rename_, id != 0,
          isRun ? tr("Label the selected run") : tr("Rename the selected experiment"));
    offer(tags_, id != 0, tr("Tag the selected experiment or run (comma-separated)"));
    offer(notes_, id != 0, tr("Write notes on the selected experiment or run"));
    offer(delete_, id != 0,
          tr("Move to the trash (Delete); Undo or the Trash view brings it back"));
    deleteAction_->setEnabled(!trash && id != 0 && why.isEmpty());
    offer(restore_, id != 0, tr("Bring the selected row back from the trash"));
    offer(empty_, trash_->rowCount() > 0, tr("Erase everything in the trash for good"));
    undoAction_->setEnabled(!undoStack_.isEmpty() && why.isEmpty());
    // At once for a new selection; live updates of the same row at most once a second.
    const bool sameRow =
        detailsKey_.startsWith(QStringLiteral("%1/%2/%3/").arg(id).arg(int(isRun)).arg(int(trash)));
    if (!sameRow || !detailsTimer_->isActive()) {
        detailsTimer_->start(sameRow ? 1000 : 0);
    }
}

void HistoryView::updateDetails() {
    const auto [id, isRun] = selected();
    store::Database* db = session_.db();
    if (id == 0 || !db) {
        details_->setRowCount(0);
        numerics_->hide();
        detailsKey_.clear();
        return;
    }
    try {
        const QString key = QStringLiteral("%1/%2/%3/%4")
                                .arg(id)
                                .arg(int(isRun))
                                .arg(int(showingTrash()))
                                .arg(db->dataVersion());
        if (key == detailsKey_) {
            return;
        }
        QList<DetailRow> rows;
        numerics_->setVisible(isRun);
        if (isRun) {
            if (const auto r = db->run(id)) {
                rows = runDetails(*db, *r);
            }
            numerics_->setRows(store::NumericsStore(*db).rows(id));
        } else if (const auto e = db->experiment(id)) {
            const auto runs = db->runs(id);  // an experiment in the trash has no row in runs_
            std::vector<const store::RunRow*> pointers;
            for (const auto& r : runs) {
                pointers.push_back(&r);
            }
            rows = experimentDetails(*db, *e, RunTreeModel::aggregateStatus(pointers));
        }
        const int scroll = details_->verticalScrollBar()->value();
        fillDetails(*details_, rows);
        if (key.section('/', 0, 2) == detailsKey_.section('/', 0, 2)) {
            details_->verticalScrollBar()->setValue(scroll);  // the same row, updated
        }
        detailsKey_ = key;
    } catch (const std::exception& e) {
        details_->setRowCount(0);
        detailsKey_.clear();
        Q_EMIT error(QString::fromStdString(e.what()));
    }
}

void HistoryView::refreshTrash() {
    const auto [id, isRun] = showingTrash() ? selected() : QPair<qint64, bool>{0, false};
    if (!session_.db()) {
        updateButtons();  // nothing to act on, and each button says why
        return;
    }
    try {
        trash_->refresh(*session_.db());
    } catch (const std::exception& e) {
        Q_EMIT error(QString::fromStdString(e.what()));
        return;
    }
    mode_->setItemText(
        1, trash_->rowCount() == 0 ? tr("Trash") : tr("Trash (%1)").arg(trash_->rowCount()));
    if (const int row = id != 0 ? trash_->rowOf(id, isRun) : -1; row >= 0) {
        trashTree_->setCurrentIndex(trash_->index(row, 0));
    }
    updateButtons();
}

void HistoryView::notify(const QString& text, bool undoable) {
    notice_->setText(text);
    notice_->setVisible(!text.isEmpty());
    undo_->setVisible(undoable && !undoStack_.isEmpty());
    undoAction_->setEnabled(!undoStack_.isEmpty());
}

QString HistoryView::describe(qint64 id, bool isRun) const {
    if (isRun) {
        const QStandardItem* item = runs_.runItem(id);
        return item && item->parent() ? tr("run \u201c%1\u201d of \u201c%2\u201d")
                                            .arg(item->text(), item->parent()->text())
                                      : tr("run #%1").arg(id);
    }
    const QStandardItem* item = runs_.experimentItem(id);
    return item ? tr("experiment \u201c%1\u201d with %n run(s)", nullptr, item->rowCount())
                      .arg(item->text())
                : tr("experiment #%1").arg(id);
}

bool HistoryView::storeCall(const std::function<void()>& call) {
    if (!session_.db()) {
        return false;
    }
    bool done = true;
    try {
        call();
    } catch (const std::exception& e) {
        Q_EMIT error(QString::fromStdString(e.what()));
        done = false;
    }
    session_.pollNow();
    return done;
}

bool HistoryView::deleteSelected() {
    const auto [id, isRun] = selected();
    if (id == 0 || showingTrash() || !session_.db()) {
        return false;
    }
    const QString what = describe(id, isRun);
    store::Database* db = session_.db();
    if (!storeCall([&] { isRun ? db->trashRun(id) : db->trashExperiment(id); })) {
        return false;
    }
    undoStack_.append({id, isRun, what});
    notify(tr("Moved %1 to the trash. Undo (Ctrl+Z) brings it back; so does Restore in the "
              "Trash view until the trash is emptied.")
               .arg(what),
           true);
    return true;
}

bool HistoryView::undoDelete() {
    if (undoStack_.isEmpty() || !session_.db()) {
        return false;
    }
    const Trashed last = undoStack_.takeLast();
    store::Database* db = session_.db();
    if (!storeCall(
            [&] { last.isRun ? db->restoreRun(last.id) : db->restoreExperiment(last.id); })) {
        notify({}, false);
        return false;
    }
    notify(tr("Restored %1.").arg(last.name), true);
    return true;
}

bool HistoryView::restoreSelected() {
    const auto [id, isRun] = selected();
    if (id == 0 || !showingTrash() || !session_.db()) {
        return false;
    }
    const int row = trash_->rowOf(id, isRun);
    const QString what = row >= 0 ? trash_->item(row, TrashModel::NameColumn)->text() : QString();
    store::Database* db = session_.db();
    if (!storeCall([&] { isRun ? db->restoreRun(id) : db->restoreExperiment(id); })) {
        return false;
    }
    undoStack_.erase(
        std::remove_if(undoStack_.begin(), undoStack_.end(),
                       [&](const Trashed& t) { return t.id == id && t.isRun == isRun; }),
        undoStack_.end());
    notify(tr("Restored %1 \u201c%2\u201d to the history.")
               .arg(isRun ? tr("run") : tr("experiment"), what),
           false);
    return true;
}

bool HistoryView::emptyTrash() {
    refreshTrash();
    const int items = trash_->rowCount();
    if (items == 0 || !session_.db()) {
        return false;
    }
    if (!confirm_(tr("Empty trash"),
                  tr("Erase the %n item(s) in the trash, with every row recorded for them, for "
                     "good? This cannot be undone.",
                     nullptr, items))) {
        return false;
    }
    store::Database* db = session_.db();
    if (!storeCall([&] { db->emptyTrash(); })) {
        return false;
    }
    undoStack_.clear();
    notify(tr("Emptied the trash: %n item(s) erased.", nullptr, items), false);
    return true;
}

void HistoryView::renameSelected() {
    const auto [id, isRun] = selected();
    QStandardItem* item = isRun ? runs_.runItem(id) : runs_.experimentItem(id);
    if (!item || !session_.db() || showingTrash()) {
        return;
    }
    bool ok = false;
    const QString text =
        isRun ? QInputDialog::getText(
                    this, tr("Label run"), tr("Label of %1 (blank for none):").arg(item->text()),
                    QLineEdit::Normal, item->data(RunTreeModel::LabelRole).toString(), &ok)
              : QInputDialog::getText(this, tr("Rename experiment"), tr("Name:"), QLineEdit::Normal,
                                      item->text(), &ok);
    if (ok) {
        isRun ? setRunLabel(id, text) : renameExperiment(id, text);
    }
}

bool HistoryView::renameExperiment(qint64 id, const QString& name) {
    if (name.trimmed().isEmpty()) {
        return false;
    }
    return storeCall([&] { session_.db()->renameExperiment(id, name.trimmed().toStdString()); });
}

bool HistoryView::setRunLabel(qint64 id, const QString& label) {
    return storeCall([&] { session_.db()->setRunLabel(id, label.trimmed().toStdString()); });
}

void HistoryView::editTags() {
    const auto [id, isRun] = selected();
    QStandardItem* item = isRun ? runs_.runItem(id) : runs_.experimentItem(id);
    if (!item || !session_.db() || showingTrash()) {
        return;
    }
    bool ok = false;
    const QString text = QInputDialog::getText(
        this, isRun ? tr("Run tags") : tr("Experiment tags"),
        tr("Tags of %1, comma-separated:").arg(item->text()), QLineEdit::Normal,
        item->data(RunTreeModel::TagsRole).toStringList().join(QStringLiteral(", ")), &ok);
    if (ok) {
        setTags(id, isRun, text);
    }
}

bool HistoryView::setTags(qint64 id, bool isRun, const QString& text) {
    if (!session_.db()) {
        return false;
    }
    std::vector<std::string> tags;
    try {
        tags = store::Database::parseTags(text.toStdString());
    } catch (const std::invalid_argument& e) {
        Q_EMIT error(tr("Tags not changed: %1").arg(QString::fromStdString(e.what())));
        return false;
    }
    return storeCall([&] {
        isRun ? session_.db()->setRunTags(id, tags) : session_.db()->setExperimentTags(id, tags);
    });
}

void HistoryView::editNotes() {
    const auto [id, isRun] = selected();
    QStandardItem* item = isRun ? runs_.runItem(id) : runs_.experimentItem(id);
    if (!item || !session_.db() || showingTrash()) {
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
    return storeCall([&] {
        isRun ? session_.db()->setRunNotes(id, notes.toStdString())
              : session_.db()->setExperimentNotes(id, notes.toStdString());
    });
}

}  // namespace ampbench::ui
