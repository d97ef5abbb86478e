#pragma once
#include <qcustomplot.h>
#include <QHash>
#include <QList>
#include <QSet>
#include <QString>

class QMenu;

#include "ui/plots/CurveCache.h"

namespace ampbench::ui {

/// One QCustomPlot with the workbench's interactions: hover shows the values
/// under the cursor, the wheel zooms, dragging pans, a double click asks to
/// maximise or restore the panel, a click on the title asks for another metric,
/// the right-click menu resets the view and copies or exports the image, and
/// clicking a legend entry hides or shows that curve (with its companions: raw
/// curve, markers, median line). Colours follow the widget's palette, light or dark. Curves are
/// rebuilt on every redraw; which ones the user hid is remembered by label. Long curves are cut to
/// a few points per pixel column (min/max kept) before every replot that needs it, so drawing costs
/// the same however long the runs are. Panels can follow each other's x range (PlotsView links
/// those that share the x-axis). GUI thread only.
class PlotPanel : public QCustomPlot {
    Q_OBJECT
  public:
    explicit PlotPanel(const QString& title, QWidget* parent = nullptr);

    void setTitle(const QString& title);
    QString title() const;
    /// Whether a click on the title offers a choice (draws a ▾ after it).
    void setTitleMenu(bool on);
    /// A word after the title on screen only, e.g. "(auto)" when the panel shows
    /// another metric than the one chosen; empty for none. Figures leave it out.
    void setTitleNote(const QString& note);
    /// The title as drawn on screen now: with its note and mark, cut with an
    /// ellipsis to the panel's width.
    QString screenTitle() const;

    /// The smallest panel: two fit beside the run list in a 1024-pixel window.
    static constexpr int kMinimumWidth = 220;
    static constexpr int kMinimumHeight = 190;

    /// Draws as a figure for readers elsewhere until endFigure(): the title alone
    /// (no note, no ▾), a legend under the plot naming each curve on show, in as
    /// many columns as `width` pixels hold, and no hover marker. Used by export and
    /// copy; endFigure() puts back exactly what the screen showed.
    void beginFigure(int width);
    void endFigure();

    /// An axis's label as set, before the screen cut it to the axis's length.
    QString wholeLabel(QCPAxis* axis) const;

    /// One x tick per category (an arm's bars), each label whole ("arm" or
    /// "arm\nexperiment"): every line that does not fit its column's width loses its
    /// middle, fitted again whenever the panel's width changes, so no label runs into
    /// its neighbour.
    void setCategoryTicks(const QVector<QPair<double, QString>>& ticks);
    /// The labels as the x axis shows them now.
    QStringList categoryTickLabels() const;

    /// Removes every curve, companion and bar (the hover marker stays).
    void clearCurves();
    /// A curve with a legend entry; hidden when the user hid `label` earlier.
    QCPGraph* addCurve(const QString& label, const QColor& color, QCPAxis* valueAxis = nullptr,
                       Qt::PenStyle style = Qt::SolidLine);
    /// A graph drawn with `owner` (not in the legend; hidden and shown with it).
    QCPGraph* addCompanion(QCPAbstractPlottable* owner, const QColor& color,
                           QCPAxis* valueAxis = nullptr);
    /// Shows `curve` in `graph` (one of this panel's), cut to what the panel's
    /// width can show; zoom and pan cut it again from the full curve.
    void setCurve(QCPGraph* graph, const CurvePtr& curve);
    /// The full curve shown in `graph`; null when its data was set directly.
    CurvePtr curveOf(QCPGraph* graph) const;
    /// Bars with a label for the hover text; no legend entry.
    QCPBars* addBars(const QString& label, const QColor& color, QCPAxis* valueAxis = nullptr);

    /// The curves with legend entries, in the order they were added.
    const QList<QCPGraph*>& curves() const { return curves_; }
    /// Whether the user hid the curve `label` from the legend.
    bool isHidden(const QString& label) const { return hidden_.contains(label); }
    void setHidden(const QString& label, bool hidden);

    /// A line of text in the middle of the plot (e.g. why it is empty); empty hides it.
    void setMessage(const QString& text);
    /// The text set by setMessage(), whole (the plot breaks it into lines that fit its
    /// width); empty when none.
    QString message() const;
    /// Whether the axes show numbers: not while no curve or bar has a point, where
    /// QCustomPlot's default range (0 to 5 samples, 0 to 5 %) read as data.
    bool showsAxisValues() const { return !blank_; }
    /// Antialiases only graphs drawing at most one point per pixel column of the
    /// axis rect: denser ones zig-zag across their pixels anyway, and smoothing
    /// their edges costs most of a replot. Cut curves are set again at each cut.
    void limitAntialiasing();
    /// Fits the axes to the visible data unless the user zoomed or panned since
    /// the last reset.
    void fitUnlessUserView();
    /// Forgets zoom and pan and fits the axes to the visible data.
    void resetView();
    /// Lets the next fitUnlessUserView() fit again (no replot).
    void forgetUserView() { userView_ = false; }
    bool userView() const { return userView_; }
    /// Takes the x range of a linked panel the user zoomed or panned; counts as
    /// a user view here too, and is not passed on (replot queued).
    void followXRange(const QCPRange& range);

    /// Fewest slices a curve is cut into, whatever the width.
    static constexpr int kMinBuckets = 200;

  Q_SIGNALS:
    /// The user hid or showed the curve `label` through the legend.
    void hiddenToggled(const QString& label, bool hidden);
    /// The user zoomed or panned the x-axis (wheel or drag), to `range`.
    void xRangeChangedByUser(const QCPRange& range);
    /// The user asked to reset the view (context menu).
    void viewResetByUser();
    /// The user double-clicked the plot: maximise it, or restore the layout.
    void maximiseToggled();
    /// The user clicked the title (to choose what the panel shows), at `globalPos`.
    void titleClicked(const QPoint& globalPos);
    /// The user opened the context menu; the receiver may add actions to `menu`.
    void contextMenuAboutToShow(QMenu* menu);
    /// The panel changed size (labels fitted to its width want a redraw).
    void resized();

  protected:
    void contextMenuEvent(QContextMenuEvent* event) override;
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

  private:
    /// After a fit: data of one key spans 0 to twice it, one value a tenth either side
    /// (a half and a double on a log axis), a flat series kFlatShare of its size, and the
    /// x axis starts at 0 or later.
    void keepAxesPossible();
    /// Moves an x range that starts below 0 to start at 0 (curves' axes only).
    void keepXNonNegative();
    /// Background, axes, grid, text and legend from the palette (light or dark).
    void applyPalette();
    /// Tick labels and tick marks in the palette's text colour, transparent while the
    /// panel is blank (but for arm names under bars).
    void paintAxisValues();
    /// Whether some curve or bar has a point (hidden ones count: their axes are real).
    bool hasPoints();
    /// Before each replot: blanks the axes' numbers of a panel without points, and shows
    /// them again once it has some.
    void blankAxesWhileEmpty();
    /// The range of a curve that was cut for its graph, and into how many slices.
    struct DrawnCurve {
        CurvePtr curve;
        double lo = 0, hi = 0;
        size_t buckets = 0;
        double penWidth = 1;  // the graph's own; dense cuts draw with 1
    };
    size_t bucketCount() const;
    /// Cuts the whole curve, or the x range on show with a margin.
    void cutCurve(QCPGraph* graph, DrawnCurve& drawn, bool whole) const;
    bool needsCut(const QCPGraph* graph, const DrawnCurve& drawn) const;
    void cutCurvesForReplot();
    /// Cuts axis labels longer than their axis with an ellipsis (on screen only: a
    /// figure shows them whole), so none runs past the panel's edge.
    void fitAxisLabels();
    /// Breaks the message into lines no wider than `width` pixels.
    void fitMessage(int width);
    void hover(QMouseEvent* event);
    void toggleFromLegend(QCPAbstractLegendItem* item);
    void applyVisibility(QCPAbstractPlottable* owner, bool visible);
    QString labelOf(QCPAbstractPlottable* plottable) const;

    /// The title as the screen shows it: with the note and the menu mark, elided.
    QString decoratedTitle() const;
    static constexpr int kTitleMargin = 8;
    static constexpr int kMaxXTicks = 5;      // QCustomPlot's default
    static constexpr double kEndRoom = 0.03;  // of the x range, after the last point
    /// The least a value axis spans, as a share of its largest value: a flatter series
    /// is drawn flat rather than magnified.
    static constexpr double kFlatShare = 0.02;

    /// What beginFigure() changed, to put back.
    struct ScreenState {
        bool active = false;
        bool tracerVisible = false;
        bool legendVisible = false;
        Qt::Alignment legendAlignment;
        QCPLegend::FillOrder fillOrder = QCPLegend::foRowsFirst;
        int wrap = 0;
        QPen legendBorder;
        QBrush legendBrush;
        QList<QPair<QCPAbstractPlottable*, QColor>> legendItems;  // in order, with text colour
    };

    QCPTextElement* title_ = nullptr;
    QString titleText_;
    QString titleNote_;
    bool titleMenu_ = false;
    ScreenState screen_;
    QCPItemTracer* tracer_ = nullptr;
    QCPItemText* message_ = nullptr;
    QString wholeMessage_;  // as set; message_ holds it broken into lines
    QList<QCPGraph*> curves_;
    QHash<QCPAbstractPlottable*, QList<QCPAbstractPlottable*>> companions_;
    QHash<QCPAbstractPlottable*, QCPAbstractPlottable*> ownerOf_;  // companion → curve
    QHash<QCPAbstractPlottable*, QString> labels_;
    QSet<QString> hidden_;                   // curve labels the user hid
    QHash<QCPGraph*, DrawnCurve> drawn_;     // graphs that show a (cut) Curve
    bool userView_ = false;                  // zoomed or panned since the last reset
    bool dragArmed_ = false;                 // the left button went down on the axis rect
    bool blank_ = true;                      // no point to plot: axes without numbers
    bool following_ = false;                 // taking a linked panel's x range
    QHash<QCPAxis*, QString> wholeLabels_;   // as the drawing code set them
    QHash<QCPAxis*, QString> fittedLabels_;  // as this panel last showed them
    QSize labelsFittedTo_;
    QVector<QPair<double, QString>> categoryTicks_;  // whole, as setCategoryTicks had them
    int categoryColumn_ = -1;                        // the column width they were fitted to
    QSharedPointer<QCPAxisTickerText> categoryTicker_;
};

}  // namespace ampbench::ui
