#pragma once
#include <QHash>
#include <QSet>
#include <QString>
#include <QWidget>

#include "core/analysis/CapacityChart.h"
#include "core/train/Capacity.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace ampbench::ui {

class PlotPanel;
class StoreSession;

/// The max-batch tab: pick an experiment, set the finder's budget, margin and
/// limits, start the search (the window runs it on the training worker), and see
/// each arm's largest micro-batch as a bar with its ratio to fp32, above a table
/// of the searches. Everything shown is read from the store, so a search that
/// `ampbench-cli find-batch --experiment` recorded appears the same way.
class CapacityView : public QWidget {
    Q_OBJECT
  public:
    CapacityView(StoreSession& session, QWidget* parent = nullptr);

    /// Shows `experimentId`'s searches (0: the newest experiment).
    void setExperiment(qint64 experimentId);
    qint64 experiment() const;
    /// Rereads the experiments and the searches of the one on show.
    void refresh();
    /// Whether a search is running (disables Find, enables Cancel).
    void setBusy(bool busy);
    /// One line under the chart, e.g. the last trial.
    void setProgressText(const QString& text);
    QString progressText() const;
    /// Shows a trial that ended, with the estimate of the search's rest
    /// (train::formatSecondsLeft: "—" until it is known); returns the line.
    QString showTrial(int armIndex, int arms, const QString& arm, qint64 batch,
                      const QString& outcome, qint64 peakBytes, double secondsLeft);
    /// A search of `experimentId` starts: the batches found to fit so far are
    /// forgotten, and its arms wait (their bars say so, not an earlier search's end)
    /// until their first trial.
    void beginSearch(qint64 experimentId = 0);
    /// The largest micro-batch arm `arm` trained at in this search so far (0: none yet).
    qint64 fitSoFar(const QString& arm) const { return fitSoFar_.value(arm, 0); }
    /// What the chart writes over arm `index`'s bar ("512 · 1.00×", "256 fit so far,
    /// searching", "waiting", "none fit (cancelled)").
    QString barLabel(int index) const;

    /// The finder options the fields describe; nullopt (and `problem` says which
    /// field) when a field is invalid.
    std::optional<train::CapacityOptions> options(QString* problem) const;
    /// Trial steps are not a field (3 is what the CLI uses); tests shorten them.
    void setTrialSteps(int steps) { trialSteps_ = steps; }

    const analysis::CapacityChart& chart() const { return chart_; }
    PlotPanel* plot() const { return plot_; }
    QTableWidget* table() const { return table_; }
    QPushButton* findButton() const { return find_; }
    QLineEdit* budgetField() const { return budget_; }
    QSpinBox* upperBoundField() const { return upper_; }

  protected:
    void showEvent(QShowEvent* event) override;

  Q_SIGNALS:
    /// The user asked for a search of `experimentId` with these options.
    void findRequested(qint64 experimentId, const ampbench::train::CapacityOptions& options);
    void cancelRequested();

  private:
    void showChart();
    void requestFind();

    StoreSession& session_;
    QComboBox* experiments_ = nullptr;
    QLineEdit* budget_ = nullptr;
    QDoubleSpinBox* margin_ = nullptr;
    QSpinBox* start_ = nullptr;
    QSpinBox* upper_ = nullptr;
    QPushButton* find_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QLabel* progress_ = nullptr;
    PlotPanel* plot_ = nullptr;
    QTableWidget* table_ = nullptr;
    analysis::CapacityChart chart_;
    QHash<QString, qint64> fitSoFar_;  // arm → largest batch that fit in the running search
    QSet<QString> armsHeard_;          // arms with a trial in the running search
    qint64 searching_ = 0;             // the experiment the running search is of
    /// Arm `arm`'s bar shows an earlier search while the running one has yet to reach it.
    bool waiting(const analysis::CapacityBar& bar) const;
    QString device_;  // of the experiment on show, from its spec
    int trialSteps_ = 3;
    bool busy_ = false;
    bool stale_ = false;  // the store changed while the tab was hidden
};

}  // namespace ampbench::ui
