#pragma once
#include <qcustomplot.h>
#include <QHash>
#include <QList>
#include <QSet>
#include <QString>

namespace ampbench::ui {

/// One QCustomPlot with the workbench's interactions: hover shows the values
/// under the cursor, the wheel zooms, dragging pans, a double click resets the
/// view, and clicking a legend entry hides or shows that curve (with its
/// companions: raw curve, markers, median line). Curves are rebuilt on every
/// redraw; which ones the user hid is remembered by label. GUI thread only.
class PlotPanel : public QCustomPlot {
    Q_OBJECT
  public:
    explicit PlotPanel(const QString& title, QWidget* parent = nullptr);

    /// Removes every curve, companion and bar (the hover marker stays).
    void clearCurves();
    /// A curve with a legend entry; hidden when the user hid `label` earlier.
    QCPGraph* addCurve(const QString& label, const QColor& color, QCPAxis* valueAxis = nullptr);
    /// A graph drawn with `owner` (not in the legend; hidden and shown with it).
    QCPGraph* addCompanion(QCPAbstractPlottable* owner, const QColor& color,
                           QCPAxis* valueAxis = nullptr);
    /// Bars with a label for the hover text; no legend entry.
    QCPBars* addBars(const QString& label, const QColor& color, QCPAxis* valueAxis = nullptr);

    /// The curves with legend entries, in the order they were added.
    const QList<QCPGraph*>& curves() const { return curves_; }
    /// Whether the user hid the curve `label` from the legend.
    bool isHidden(const QString& label) const { return hidden_.contains(label); }
    void setHidden(const QString& label, bool hidden);

    /// A line of text in the middle of the plot (e.g. why it is empty); empty hides it.
    void setMessage(const QString& text);
    /// Antialiases only curves of at most `maxPoints` points: denser ones fill
    /// their pixels anyway, and smoothing their edges costs most of a replot.
    void limitAntialiasing(int maxPoints = kMaxAntialiasedPoints);
    static constexpr int kMaxAntialiasedPoints = 20000;
    /// Fits the axes to the visible data unless the user zoomed or panned since
    /// the last reset.
    void fitUnlessUserView();
    /// Forgets zoom and pan and fits the axes to the visible data.
    void resetView();
    /// Lets the next fitUnlessUserView() fit again (no replot).
    void forgetUserView() { userView_ = false; }
    bool userView() const { return userView_; }

  Q_SIGNALS:
    /// The user hid or showed the curve `label` through the legend.
    void hiddenToggled(const QString& label, bool hidden);

  private:
    void hover(QMouseEvent* event);
    void toggleFromLegend(QCPAbstractLegendItem* item);
    void applyVisibility(QCPAbstractPlottable* owner, bool visible);
    QString labelOf(QCPAbstractPlottable* plottable) const;

    QCPItemTracer* tracer_ = nullptr;
    QCPItemText* message_ = nullptr;
    QList<QCPGraph*> curves_;
    QHash<QCPAbstractPlottable*, QList<QCPAbstractPlottable*>> companions_;
    QHash<QCPAbstractPlottable*, QCPAbstractPlottable*> ownerOf_;  // companion → curve
    QHash<QCPAbstractPlottable*, QString> labels_;
    QSet<QString> hidden_;   // curve labels the user hid
    bool userView_ = false;  // zoomed or panned since the last reset
};

}  // namespace ampbench::ui
