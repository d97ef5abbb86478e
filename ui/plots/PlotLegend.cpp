#include "ui/plots/PlotLegend.h"

#include <QHeaderView>
#include <QPainter>
#include <QPixmap>
#include <QStyle>

#include "ui/data/RunDataCache.h"
#include "ui/plots/PlotInput.h"

namespace ampbench::ui {
namespace {

constexpr int kLabelRole = Qt::UserRole + 1;

/// A short line in the colour and style the curves use.
QIcon swatch(const QColor& color, Qt::PenStyle style) {
    QPixmap pixmap(28, 12);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(color, 3, style, Qt::FlatCap));
    painter.drawLine(2, 6, 26, 6);
    return QIcon(pixmap);
}

}  // namespace

PlotLegend::PlotLegend(QWidget* parent) : QTreeWidget(parent) {
    setObjectName("plotLegend");
    setHeaderHidden(true);
    setColumnCount(1);
    setRootIsDecorated(true);
    setUniformRowHeights(true);
    setTextElideMode(Qt::ElideMiddle);
    setIconSize(QSize(28, 12));
    setIndentation(14);  // "seed 1" under its arm reads whole in a narrow legend
    header()->setStretchLastSection(true);
    setToolTip(tr("Untick a run or an arm to hide it in every plot"));
    connect(this, &QTreeWidget::itemChanged, this, &PlotLegend::itemTicked);
}

void PlotLegend::setInput(const PlotInput& in, const QSet<QString>& hidden) {
    QString shape;
    for (const PlotGroup& g : in.groups) {
        shape += g.label + '|' + g.color.name() + QString::number(g.style) + ';';
        for (int index : g.runs) {
            const PlotRun& r = in.runs[static_cast<size_t>(index)];
            shape += r.label + '|' + r.color.name() + ',';
        }
    }
    if (shape != shape_) {
        shape_ = shape;
        updating_ = true;
        clear();
        for (const PlotGroup& g : in.groups) {
            auto* arm = new QTreeWidgetItem(this, {g.label});
            arm->setIcon(0, swatch(g.color, g.style));
            arm->setToolTip(0, g.label);
            arm->setFlags(arm->flags() | Qt::ItemIsUserCheckable | Qt::ItemIsAutoTristate);
            for (int index : g.runs) {
                const PlotRun& r = in.runs[static_cast<size_t>(index)];
                const QString seed = tr("seed %1").arg(r.series->row.seed);
                auto* run = new QTreeWidgetItem(arm, {seed});
                run->setData(0, kLabelRole, r.label);
                run->setIcon(0, swatch(r.color, r.style));
                run->setToolTip(0, r.label);
                run->setFlags(run->flags() | Qt::ItemIsUserCheckable);
                run->setCheckState(0, hidden.contains(r.label) ? Qt::Unchecked : Qt::Checked);
            }
            // Seeds of a many-seed arm stay folded until asked for.
            arm->setExpanded(g.runs.size() <= 3);
        }
        updating_ = false;
        updateGeometry();  // the widest entry may have changed
        return;
    }
    for (QTreeWidgetItemIterator it(this); *it; ++it) {
        const QString label = (*it)->data(0, kLabelRole).toString();
        if (!label.isEmpty()) {
            setRunHidden(label, hidden.contains(label));
        }
    }
}

QSize PlotLegend::sizeHint() const {
    QSize size = QTreeWidget::sizeHint();
    // Each entry: indentation by depth, the check box, the swatch and the text.
    int widest = 0;
    const int box = style()->pixelMetric(QStyle::PM_IndicatorWidth) + 8;
    for (QTreeWidgetItemIterator it(const_cast<PlotLegend*>(this)); *it; ++it) {
        int depth = 1;  // the root decoration
        for (const QTreeWidgetItem* p = (*it)->parent(); p; p = p->parent()) {
            ++depth;
        }
        widest = std::max(widest, depth * indentation() + box + iconSize().width() + 8 +
                                      fontMetrics().horizontalAdvance((*it)->text(0)));
    }
    size.setWidth(widest + 2 * frameWidth() + style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 4);
    return size;
}

void PlotLegend::setRunHidden(const QString& label, bool hidden) {
    updating_ = true;
    for (QTreeWidgetItemIterator it(this); *it; ++it) {
        if ((*it)->data(0, kLabelRole).toString() == label) {
            (*it)->setCheckState(0, hidden ? Qt::Unchecked : Qt::Checked);
        }
    }
    updating_ = false;
}

void PlotLegend::itemTicked(QTreeWidgetItem* item) {
    if (updating_) {
        return;
    }
    const QString label = item->data(0, kLabelRole).toString();
    if (label.isEmpty()) {
        // An arm: its runs follow it (auto-tristate), and each reports its own change.
        return;
    }
    Q_EMIT hiddenToggled(label, item->checkState(0) == Qt::Unchecked);
}

}  // namespace ampbench::ui
