// PlotPanel: its interactions, title, figures, palette, menu, curves and bars with their
// visibility, and the labels and message fitted to its size.
#include "ui/plots/PlotPanel.h"

#include <QContextMenuEvent>
#include <QEvent>
#include <QFontMetrics>
#include <QMenu>
#include <algorithm>

#include "ui/plots/PlotExport.h"

namespace ampbench::ui {

PlotPanel::PlotPanel(const QString& title, QWidget* parent) : QCustomPlot(parent) {
    setObjectName(title);
    // Small enough for two beside the run list on a 1024-pixel screen; PlotsView goes
    // to two columns before a panel gets narrower than it reads well
    // (PlotsView::kReadableWidth), and scrolls the grid where rows do not fit.
    setMinimumSize(kMinimumWidth, kMinimumHeight);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    setNoAntialiasingOnDrag(true);
    setPlottingHint(QCP::phCacheLabels, true);
    // Noisy curves (step time, memory) zig-zag across the whole height in every pixel
    // column; stroking them as one polyline costs seconds, as segments milliseconds.
    setPlottingHint(QCP::phFastPolylines, true);

    plotLayout()->insertRow(0);
    QFont titleFont = font();
    titleFont.setBold(true);
    title_ = new QCPTextElement(this, title, titleFont);
    titleText_ = title;
    plotLayout()->addElement(0, 0, title_);
    connect(title_, &QCPTextElement::clicked, this, [this](QMouseEvent* e) {
        if (titleMenu_) {
            Q_EMIT titleClicked(e->globalPosition().toPoint());
        }
    });

    QFont small = font();
    small.setPointSizeF(std::max(7.0, small.pointSizeF() - 1.5));
    legend->setVisible(true);
    legend->setFont(small);
    legend->setRowSpacing(-3);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    for (QCPAxis* axis : {xAxis, yAxis, yAxis2}) {
        axis->setTickLabelFont(small);
        axis->setLabelFont(small);
    }

    // The hover marker lives on a buffered layer so moving it repaints only that layer.
    layer("overlay")->setMode(QCPLayer::lmBuffered);
    tracer_ = new QCPItemTracer(this);
    tracer_->setLayer("overlay");
    tracer_->setStyle(QCPItemTracer::tsCircle);
    tracer_->setSize(9);
    tracer_->setInterpolating(false);
    tracer_->setVisible(false);

    message_ = new QCPItemText(this);
    message_->position->setType(QCPItemPosition::ptAxisRectRatio);
    message_->position->setCoords(0.5, 0.5);
    message_->setVisible(false);
    applyPalette();

    // A press arms a drag; only the drag's first move (or the wheel) makes a user view:
    // a click, or the first click of a double click, once stopped the panel following
    // the runs, and the grid took its x range from another panel.
    connect(this, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
        dragArmed_ =
            e->button() == Qt::LeftButton && axisRect()->rect().contains(e->position().toPoint());
    });
    connect(this, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        if (dragArmed_ && (e->buttons() & Qt::LeftButton) &&
            interactions().testFlag(QCP::iRangeDrag)) {
            userView_ = true;
        }
        hover(e);
    });
    connect(this, &QCustomPlot::mouseRelease, this, [this] {
        dragArmed_ = false;
        setInteraction(QCP::iRangeDrag, true);  // after a double click, dragging again
    });
    connect(this, &QCustomPlot::mouseWheel, this, [this] { userView_ = true; });
    connect(this, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent* e) {
        // The panel is about to grow or shrink under the pointer: a move before the
        // button comes up would pan it by the difference, so no drag until then.
        dragArmed_ = false;
        setInteraction(QCP::iRangeDrag, false);
        if (title_->selectTest(e->position(), false) >= 0) {
            return;  // on the title: that is a click on the metric menu
        }
        Q_EMIT maximiseToggled();
    });
    // A drag's move and the wheel mark a user view before the axis rect moves the
    // range, so only changes the user makes reach the linked panels.
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange& range) {
                if (range.lower < 0 && !(categoryTicker_ && xAxis->ticker() == categoryTicker_)) {
                    keepXNonNegative();  // rangeChanged again, with the range kept
                    return;
                }
                if (userView_ && !following_) {
                    Q_EMIT xRangeChangedByUser(range);
                }
            });
    connect(this, &QCustomPlot::beforeReplot, this, &PlotPanel::cutCurvesForReplot);
    connect(this, &QCustomPlot::beforeReplot, this, &PlotPanel::fitAxisLabels);
    connect(this, &QCustomPlot::beforeReplot, this, &PlotPanel::blankAxesWhileEmpty);
    connect(
        this, &QCustomPlot::legendClick, this,
        [this](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) { toggleFromLegend(item); });
}

void PlotPanel::setTitle(const QString& title) {
    titleText_ = title;
    if (!screen_.active) {
        title_->setText(decoratedTitle());
    }
}

QString PlotPanel::decoratedTitle() const {
    QString text = titleText_;
    if (!titleNote_.isEmpty()) {
        text += ' ' + titleNote_;
    }
    const QString mark = titleMenu_ ? QStringLiteral(" \u25be") : QString();
    // Cut with an ellipsis where the panel is narrower than its title, never by the
    // panel's edge; the menu mark stays (a click on it lists the metrics by name).
    const QFontMetrics metrics(title_->font());
    const int room = width() - 2 * kTitleMargin - metrics.horizontalAdvance(mark);
    if (width() > 0 && metrics.horizontalAdvance(text) > room) {
        text = metrics.elidedText(text, Qt::ElideRight, std::max(room, 0));
    }
    return text + mark;
}

QString PlotPanel::screenTitle() const {
    return title_->text();
}

void PlotPanel::setTitleNote(const QString& note) {
    titleNote_ = note;
    setTitle(titleText_);
}

void PlotPanel::beginFigure(int width) {
    if (screen_.active) {
        return;
    }
    ScreenState& s = screen_;
    s.active = true;
    fitAxisLabels();  // a figure carries its axes' whole labels
    s.tracerVisible = tracer_->visible();
    s.legendVisible = legend->visible();
    s.fillOrder = legend->fillOrder();
    s.wrap = legend->wrap();
    s.legendBorder = legend->borderPen();
    s.legendBrush = legend->brush();
    s.legendItems.clear();
    for (int i = 0; i < legend->itemCount(); ++i) {
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i))) {
            s.legendItems.append({item->plottable(), item->textColor()});
        }
    }
    QCPLayoutInset* inset = axisRect()->insetLayout();
    s.legendAlignment = Qt::AlignTop | Qt::AlignRight;
    for (int i = 0; i < inset->elementCount(); ++i) {
        if (inset->elementAt(i) == legend) {
            s.legendAlignment = inset->insetAlignment(i);
        }
    }

    title_->setText(titleText_);
    tracer_->setVisible(false);
    // The figure names what it draws: curves the user hid, and arms with no point yet,
    // leave the legend.
    for (const auto& [plottable, color] : std::as_const(s.legendItems)) {
        auto* graph = qobject_cast<QCPGraph*>(plottable);
        const CurvePtr curve = graph ? curveOf(graph) : CurvePtr();
        QCPPlottableInterface1D* points = plottable->interface1D();
        const bool none = curve ? curve->isEmpty() : points && points->dataCount() == 0;
        if (!plottable->visible() || none) {
            plottable->removeFromLegend(legend);
        } else if (auto* item = legend->itemWithPlottable(plottable)) {
            item->setTextColor(palette().color(QPalette::Text));
        }
    }
    int widest = 1;
    for (int i = 0; i < legend->itemCount(); ++i) {
        widest = std::max(widest, legend->item(i)->minimumOuterSizeHint().width());
    }
    const int margins = legend->margins().left() + legend->margins().right() + 24;
    const int columns =
        std::max(1, (width - margins) / (widest + std::max(0, legend->columnSpacing())));
    // Below the plot rather than over it, so no curve hides behind an entry.
    const int row = plotLayout()->rowCount();
    plotLayout()->insertRow(row);
    plotLayout()->addElement(row, 0, legend);
    plotLayout()->setRowStretchFactor(row, 0.001);  // as tall as its entries, no more
    legend->setWrap(columns);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    legend->setBorderPen(Qt::NoPen);  // a row of its own needs no box
    legend->setBrush(Qt::NoBrush);
    legend->setVisible(legend->itemCount() > 0);
}

void PlotPanel::endFigure() {
    if (!screen_.active) {
        return;
    }
    ScreenState& s = screen_;
    axisRect()->insetLayout()->addElement(legend, s.legendAlignment);
    plotLayout()->simplify();  // drops the row the legend left
    // The wrap first: setting the fill order lays the entries out by it.
    legend->clearItems();
    legend->setWrap(s.wrap);
    legend->setFillOrder(s.fillOrder);
    for (const auto& [plottable, color] : std::as_const(s.legendItems)) {
        plottable->addToLegend(legend);
        if (auto* item = legend->itemWithPlottable(plottable)) {
            item->setTextColor(color);
        }
    }
    legend->setBorderPen(s.legendBorder);
    legend->setBrush(s.legendBrush);
    legend->setVisible(s.legendVisible);
    tracer_->setVisible(s.tracerVisible);
    s = ScreenState{};
    title_->setText(decoratedTitle());
    // Drawing at another size laid the plot out for it: lay it out for the screen before
    // the replot, so curves are cut for the screen's width as they were.
    updateLayout();
    replot();
}

QString PlotPanel::title() const {
    return titleText_;
}

void PlotPanel::setTitleMenu(bool on) {
    titleMenu_ = on;
    setTitle(titleText_);
}

void PlotPanel::applyPalette() {
    const QPalette pal = palette();
    const QColor text = pal.color(QPalette::Text);
    const QColor base = pal.color(QPalette::Base);
    const bool dark = base.lightnessF() < 0.5;
    setBackground(base);
    axisRect()->setBackground(base);
    QColor grid = text;
    grid.setAlpha(dark ? 60 : 40);
    QColor subGrid = grid;
    subGrid.setAlpha(grid.alpha() / 2);
    for (QCPAxis* axis : {xAxis, yAxis, xAxis2, yAxis2}) {
        axis->setBasePen(QPen(text, 1));
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
        axis->grid()->setSubGridPen(QPen(subGrid, 1, Qt::DotLine));
        axis->grid()->setZeroLinePen(QPen(grid, 1));
    }
    title_->setTextColor(text);
    QColor legendFill = base;
    legendFill.setAlpha(200);
    legend->setBrush(legendFill);
    legend->setBorderPen(QPen(pal.color(QPalette::Mid)));
    legend->setTextColor(text);
    tracer_->setPen(QPen(text, 1.5));
    message_->setColor(pal.color(QPalette::PlaceholderText));
    paintAxisValues();
}

void PlotPanel::changeEvent(QEvent* event) {
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette();
        replot(rpQueuedReplot);
    }
}

void PlotPanel::resizeEvent(QResizeEvent* event) {
    QCustomPlot::resizeEvent(event);
    setTitle(titleText_);  // elided to the new width
    Q_EMIT resized();
}

void PlotPanel::contextMenuEvent(QContextMenuEvent* event) {
    QMenu menu(this);
    menu.addAction(tr("Reset view"), this, [this] {
        resetView();
        Q_EMIT viewResetByUser();
    });
    menu.addAction(tr("Maximise or restore (double-click)"), this,
                   [this] { Q_EMIT maximiseToggled(); });
    Q_EMIT contextMenuAboutToShow(&menu);
    menu.addSeparator();
    menu.addAction(tr("Copy image"), this, [this] { copyPlotImage(*this); });
    menu.addAction(tr("Export image\u2026"), this, [this] { exportPlotWithDialog(*this, this); });
    menu.exec(event->globalPos());
}

void PlotPanel::clearCurves() {
    tracer_->setGraph(nullptr);
    tracer_->setVisible(false);
    clearPlottables();
    drawn_.clear();
    curves_.clear();
    companions_.clear();
    ownerOf_.clear();
    labels_.clear();
}

QCPGraph* PlotPanel::addCurve(const QString& label, const QColor& color, QCPAxis* valueAxis,
                              Qt::PenStyle style) {
    QCPGraph* g = addGraph(xAxis, valueAxis ? valueAxis : yAxis);
    g->setName(label);
    g->setPen(QPen(color, 1.6, style));
    g->setAdaptiveSampling(true);
    curves_.append(g);
    labels_.insert(g, label);
    if (hidden_.contains(label)) {
        g->setVisible(false);
        if (auto* item = legend->itemWithPlottable(g)) {
            item->setTextColor(Qt::gray);
        }
    }
    return g;
}

QCPGraph* PlotPanel::addCompanion(QCPAbstractPlottable* owner, const QColor& color,
                                  QCPAxis* valueAxis) {
    QCPGraph* g = addGraph(xAxis, valueAxis ? valueAxis : yAxis);
    g->removeFromLegend();
    g->setPen(QPen(color, 1.0));
    g->setAdaptiveSampling(true);
    g->setVisible(owner->visible());
    companions_[owner].append(g);
    ownerOf_.insert(g, owner);
    return g;
}

void PlotPanel::fitAxisLabels() {
    if (size() != labelsFittedTo_) {
        labelsFittedTo_ = size();
        if (!screen_.active) {
            title_->setText(decoratedTitle());  // a panel resized while hidden, too
        }
        setViewport(rect());  // resized while hidden: no resize event set it yet
        updateLayout();       // the axis rect for this size, not the last replot's
    }
    const QRect rect = axisRect()->rect();
    if (message_->visible() && rect.width() > 0) {
        fitMessage(rect.width() - 2 * kTitleMargin);
    }
    // As many x ticks as their labels fit side by side: a larger desktop font made
    // the default five overlap on a narrow panel.
    if (rect.width() > 0) {
        const QFontMetrics ticks(xAxis->tickLabelFont());
        int widest = ticks.horizontalAdvance(QStringLiteral("00000"));
        for (const QString& label : xAxis->tickVectorLabels()) {
            widest = std::max(widest, ticks.horizontalAdvance(label));
        }
        const int fit = rect.width() / (widest + ticks.horizontalAdvance(QStringLiteral("00")));
        xAxis->ticker()->setTickCount(std::clamp(fit, 2, kMaxXTicks));
    }
    if (categoryTicker_ && xAxis->ticker() == categoryTicker_ && rect.width() > 0) {
        // A column is the distance between two categories' centres (their keys are 1
        // apart) at the x range on show, less a gap.
        const QFontMetrics ticks(xAxis->tickLabelFont());
        const double perKey = rect.width() / std::max(1e-9, xAxis->range().size());
        const int column = std::max(24, static_cast<int>(perKey) - 8);
        if (column != categoryColumn_) {  // a hover's replot keeps the labels as they are
            categoryColumn_ = column;
            categoryTicker_->clear();
            for (const auto& [key, whole] : categoryTicks_) {
                QStringList lines = whole.split('\n');
                for (QString& line : lines) {
                    line = ticks.elidedText(line, Qt::ElideMiddle, column);
                }
                categoryTicker_->addTick(key, lines.join('\n'));
            }
        }
    }
    for (QCPAxis* axis : {xAxis, yAxis, yAxis2}) {
        // The drawing code sets whole labels; one that differs from what this panel
        // last shortened it to is a new whole label.
        const QString shown = axis->label();
        QString& whole = wholeLabels_[axis];
        if (shown != fittedLabels_.value(axis)) {
            whole = shown;
        }
        const int room =
            (axis->orientation() == Qt::Vertical ? rect.height() : rect.width()) - 2 * kTitleMargin;
        QString fit = whole;
        if (!screen_.active && room > 0) {
            fit = QFontMetrics(axis->labelFont()).elidedText(whole, Qt::ElideRight, room);
        }
        fittedLabels_[axis] = fit;
        if (fit != shown) {
            axis->setLabel(fit);
        }
    }
}

void PlotPanel::setCategoryTicks(const QVector<QPair<double, QString>>& ticks) {
    categoryTicks_ = ticks;
    categoryColumn_ = -1;  // fitted afresh at the next replot
    categoryTicker_.reset(new QCPAxisTickerText);
    for (const auto& [key, whole] : ticks) {
        categoryTicker_->addTick(key, whole);  // fitted to the columns before they show
    }
    xAxis->setTicker(categoryTicker_);
    labelsFittedTo_ = QSize();  // fit them at the next layout, at this size too
}

QStringList PlotPanel::categoryTickLabels() const {
    QStringList out;
    if (categoryTicker_ && xAxis->ticker() == categoryTicker_) {
        for (const QString& label : categoryTicker_->ticks()) {
            out << label;
        }
    }
    return out;
}

QString PlotPanel::wholeLabel(QCPAxis* axis) const {
    const QString shown = axis->label();
    return shown == fittedLabels_.value(axis) ? wholeLabels_.value(axis, shown) : shown;
}

QCPBars* PlotPanel::addBars(const QString& label, const QColor& color, QCPAxis* valueAxis) {
    auto* bars = new QCPBars(xAxis, valueAxis ? valueAxis : yAxis);
    bars->removeFromLegend();
    bars->setPen(QPen(color.darker(130)));
    bars->setBrush(color);
    labels_.insert(bars, label);
    return bars;
}

void PlotPanel::setHidden(const QString& label, bool hidden) {
    if (hidden) {
        hidden_.insert(label);
    } else {
        hidden_.remove(label);
    }
    for (QCPGraph* g : std::as_const(curves_)) {
        if (labels_.value(g) == label) {
            applyVisibility(g, !hidden);
        }
    }
}

void PlotPanel::setMessage(const QString& text) {
    if (text != wholeMessage_) {
        wholeMessage_ = text;
        message_->setText(text);  // broken into lines that fit before the next replot
    }
    message_->setVisible(!text.isEmpty());
}

QString PlotPanel::message() const {
    return message_->visible() ? wholeMessage_ : QString();
}

void PlotPanel::fitMessage(int width) {
    // Broken between words into lines as wide as the plot: one line was cut at both
    // edges of a narrow panel ("finished run on show").
    const QFontMetrics fm(message_->font());
    QStringList lines;
    QString line;
    for (const QString& word : wholeMessage_.split(' ', Qt::SkipEmptyParts)) {
        const QString longer = line.isEmpty() ? word : line + ' ' + word;
        if (!line.isEmpty() && fm.horizontalAdvance(longer) > width) {
            lines << line;
            line = word;
        } else {
            line = longer;
        }
    }
    if (!line.isEmpty()) {
        lines << line;
    }
    for (QString& l : lines) {
        l = fm.elidedText(l, Qt::ElideRight, std::max(width, 1));  // a word longer than all
    }
    const QString fitted = lines.join('\n');
    if (fitted != message_->text()) {
        message_->setText(fitted);
    }
}

void PlotPanel::toggleFromLegend(QCPAbstractLegendItem* item) {
    auto* pli = qobject_cast<QCPPlottableLegendItem*>(item);
    if (!pli) {
        return;
    }
    const QString label = labels_.value(pli->plottable());
    const bool hide = !hidden_.contains(label);
    setHidden(label, hide);
    replot();
    Q_EMIT hiddenToggled(label, hide);
}

void PlotPanel::applyVisibility(QCPAbstractPlottable* owner, bool visible) {
    owner->setVisible(visible);
    for (QCPAbstractPlottable* c : companions_.value(owner)) {
        c->setVisible(visible);
    }
    if (auto* item = legend->itemWithPlottable(owner)) {
        item->setTextColor(visible ? palette().color(QPalette::Text) : Qt::gray);
    }
}

}  // namespace ampbench::ui
