#pragma once
#include <QString>
#include <QWidget>
#include <optional>

#include "core/analysis/Advice.h"
#include "core/config/ExperimentSpec.h"
#include "core/train/Advise.h"
#include "ui/MetaTypes.h"

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace ampbench::ui {

class PlotPanel;
class StoreSession;

/// The Advice tab: "which precision should I train with?" for the model and data of the
/// editor's experiment (chosen here or there) within a budget; while the advice works, a
/// progress bar with the candidate measured now and what remains; then its table, the
/// throughput-memory chart with the front and the candidates ruled out, and the
/// recommendation with a button that opens it as a comparison in the editor. What it
/// shows is read from the store (analysis::readAdvice), so an advice that `ampbench-cli
/// advise` recorded shows the same way. GUI thread only.
class AdviceView : public QWidget {
    Q_OBJECT
  public:
    explicit AdviceView(StoreSession& session, QWidget* parent = nullptr);

    /// The experiment whose model, data, batch and optimizer the next advice is for.
    void setSource(const config::ExperimentSpec& spec);
    /// Reads advice `experimentId` (0: the database's newest) on a worker thread and
    /// shows it; shown() tells when it is on show.
    void showAdvice(qint64 experimentId);
    /// The advice on show (experiment 0 while none).
    const analysis::Advice& advice() const { return advice_; }
    /// An advice runs: Advise disabled, Cancel and the progress bar on.
    void setBusy(bool busy);
    /// Where the running advice is (TrainingWorker::adviceProgress); returns the line shown.
    QString showProgress(const QString& phase, const QString& candidate, int done, int total,
                         double secondsLeft);
    /// The running advice ended; `message` says why where it did not end advised.
    void showEnd(qint64 experimentId, const QString& message);
    /// The options the fields describe; nullopt (and `problem` says which) when one is bad.
    std::optional<train::AdviseOptions> options(QString* problem) const;

    QTableWidget* table() const { return table_; }
    PlotPanel* chart() const { return chart_; }
    QLabel* recommendationLabel() const { return recommendation_; }
    QLabel* sourceLabel() const { return source_; }
    QLabel* progressLabel() const { return status_; }
    QProgressBar* progressBar() const { return progress_; }
    QPushButton* adviseButton() const { return advise_; }
    QPushButton* openButton() const { return open_; }
    QSpinBox* budgetField() const { return budget_; }
    QLineEdit* memoryField() const { return memory_; }

  Q_SIGNALS:
    void adviseRequested(const ampbench::train::AdviseOptions& options);
    void cancelRequested();
    /// Open the recommended setting against the baseline as a comparison in the editor.
    void openRequested(const ampbench::config::ExperimentSpec& spec);
    /// The user picked a model file or data here, for the editor's experiment.
    void modelFileChosen(const QString& path);
    void dataChosen(const QString& path);
    void editRequested();
    /// An advice was read and is on show.
    void shown(qint64 experimentId);

  private:
    void requestAdvice();
    void fill();

    StoreSession& session_;
    config::ExperimentSpec source_spec_;
    analysis::Advice advice_;
    config::ExperimentSpec advice_spec_;  ///< the advice experiment's stored spec
    QLabel* source_ = nullptr;
    QSpinBox* budget_ = nullptr;
    QLineEdit* memory_ = nullptr;
    QPushButton* advise_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* recommendation_ = nullptr;
    QPushButton* open_ = nullptr;
    QTableWidget* table_ = nullptr;
    PlotPanel* chart_ = nullptr;
    QLabel* reasons_ = nullptr;
    qint64 loading_ = -1;  // the advice being read, -1 for none
};

}  // namespace ampbench::ui
