#include "ui/editor/SetupPanel.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QResizeEvent>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace ampbench::ui {
namespace {

QString shapeText(const std::vector<int64_t>& shape) {
    QStringList parts;
    for (int64_t d : shape) {
        parts << QString::number(d);
    }
    return "[" + parts.join(", ") + "]";
}

/// "ankle boot, bag, coat, … (10)".
QString classText(const std::vector<std::string>& names) {
    QStringList parts;
    for (size_t i = 0; i < names.size() && i < 8; ++i) {
        parts << QString::fromStdString(names[i]);
    }
    if (names.size() > 8) {
        parts << QStringLiteral("\u2026");
    }
    return parts.join(", ") + QStringLiteral(" (%1)").arg(names.size());
}

}  // namespace

SetupPanel::SetupPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    state_ = new QLabel;
    state_->setObjectName("setupState");
    facts_ = new QLabel;
    facts_->setObjectName("setupFacts");
    facts_->setWordWrap(true);
    facts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    tree_ = new QTreeWidget;
    tree_->setObjectName("moduleTree");
    tree_->setHeaderLabels({tr("Module"), tr("Type"), tr("Parameters")});
    tree_->setRootIsDecorated(true);
    tree_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    tree_->setToolTip(
        tr("The model's modules; double-click one to run it as an FP32 island "
           "(autocast off) in the selected arm"));
    connect(tree_, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* item, int) {
        const QString path = item->data(0, Qt::UserRole).toString();
        if (!path.isEmpty()) {
            Q_EMIT moduleChosen(path);
        }
    });
    // Five modules show whole at any window height (a laptop's showed three).
    tree_->setMinimumHeight(tree_->header()->sizeHint().height() +
                            5 * tree_->fontMetrics().height() * 5 / 4 + 2 * tree_->frameWidth());
    layout->addWidget(state_);
    layout->addWidget(facts_);
    layout->addWidget(tree_, 1);
}

void SetupPanel::showChecking() {
    state_->setText(tr("<b>Model and data</b>: checking\u2026"));
    clearFacts(tr("(checking\u2026)"));
}

void SetupPanel::showNotChecked(const QString& why) {
    state_->setText(tr("<b>Model and data</b>: %1").arg(why.toHtmlEscaped()));
    clearFacts(tr("(not checked)"));
}

void SetupPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (event->size().width() != event->oldSize().width()) {
        fitFacts();
    }
}

void SetupPanel::fitFacts() {
    // A wrapped label's minimum size hint is one line: in the splitter's pane the layout
    // gave it less than its lines, and the last one ("Task: …") was cut at 1024 pixels.
    const int need = facts_->text().isEmpty() ? 0 : facts_->heightForWidth(width());
    if (need != facts_->minimumHeight()) {
        facts_->setMinimumHeight(need);
    }
}

void SetupPanel::clearFacts(const QString& treeLine) {
    facts_->clear();
    fitFacts();
    // The tree stays, one line in it: hiding it moved the form above by its height.
    tree_->clear();
    auto* line = new QTreeWidgetItem(tree_, {treeLine});
    line->setFlags(Qt::NoItemFlags);
}

void SetupPanel::showReport(const train::SetupReport& r, bool script) {
    const QLocale locale;
    state_->setText(!r.ok()  ? tr("<b>Model and data</b>: cannot train (see the problems)")
                    : script ? tr("<b>Training script</b>: found, and its interpreter imports "
                                  "the modules it imports")
                             : tr("<b>Model and data</b>: one batch trained on the CPU"));
    QStringList lines;
    if (!r.model.empty()) {
        lines << tr("Model: %1").arg(QString::fromStdString(r.model).toHtmlEscaped());
    }
    if (r.parameters > 0) {
        lines << tr("Parameters: %1").arg(locale.toString(static_cast<qlonglong>(r.parameters)));
    }
    if (!r.data.empty()) {
        lines << tr("Data: %1").arg(QString::fromStdString(r.data).toHtmlEscaped());
    }
    if (r.train_size > 0) {
        lines << tr("Samples: %1 training, %2 validation")
                     .arg(locale.toString(static_cast<qlonglong>(r.train_size)),
                          locale.toString(static_cast<qlonglong>(r.val_size)));
        lines << tr("One sample: input %1, target %2")
                     .arg(shapeText(r.sample),
                          r.target.empty() ? tr("a label") : shapeText(r.target));
    }
    if (!r.class_names.empty()) {
        lines << tr("Classes: %1").arg(classText(r.class_names).toHtmlEscaped());
    }
    if (!r.task.empty()) {
        lines << tr("Task: %1").arg(QString::fromStdString(r.task)) +
                     (r.output.empty() ? QString()
                                       : tr("; a batch gives %1").arg(shapeText(r.output)));
    }
    for (const auto& w : r.warnings) {
        lines << QStringLiteral("<span style='color:#a15c00'>%1</span>")
                     .arg(tr("Warning: %1").arg(QString::fromStdString(w).toHtmlEscaped()));
    }
    facts_->setText(lines.join(QStringLiteral("<br>")));
    fitFacts();
    // The tree from the dotted paths: "features.0" under "features".
    tree_->clear();
    QHash<QString, QTreeWidgetItem*> items;
    for (const auto& line : r.module_tree) {
        const QStringList cols = QString::fromStdString(line).split(QStringLiteral("  "));
        const QString path = cols.value(0);
        const QString parentPath = path.contains('.') ? path.section('.', 0, -2) : QString();
        QTreeWidgetItem* parent = path == QLatin1String("(model)") ? nullptr
                                  : parentPath.isEmpty()           ? items.value("(model)")
                                                                   : items.value(parentPath);
        auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(tree_);
        item->setText(0, path.section('.', -1));
        item->setText(1, cols.value(1));
        item->setText(2, cols.value(2));
        if (path != QLatin1String("(model)")) {
            item->setData(0, Qt::UserRole, path);
        }
        items.insert(path, item);
    }
    if (r.module_tree.empty()) {
        // The tree stays, saying why it is empty: hiding it moved the form above by
        // its height, under the user's pointer.
        auto* none = new QTreeWidgetItem(
            tree_, {r.ok() ? tr("(no module list for this model)") : tr("(no model built)")});
        none->setFlags(Qt::NoItemFlags);
    }
    tree_->expandToDepth(1);
}

QString SetupPanel::factsText() const {
    return facts_->text();
}

}  // namespace ampbench::ui
