// The main window's Advice tab: "which precision should I train with?" for the editor's
// model and data, trained on the training worker, shown from the store (MainWindow.cpp
// holds the rest of the window).
#include <QAction>
#include <QPushButton>
#include <QStatusBar>
#include <QTabWidget>

#include "core/config/DataPaths.h"
#include "core/script/Trainers.h"
#include "ui/MainWindow.h"
#include "ui/advice/AdviceView.h"
#include "ui/data/StoreSession.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/training/TrainingController.h"
#include "ui/training/TrainingWorker.h"

namespace ampbench::ui {

void MainWindow::buildAdvice() {
    advice_ = new AdviceView(*session_);
    tabs_->addTab(advice_, tr("Advice"));
    advise_ = new QAction(tr("&Advise\u2026"), this);
    advise_->setObjectName("adviseAction");
    advise_->setShortcut(QKeySequence(tr("Ctrl+Shift+A")));
    advise_->setToolTip(
        tr("Which precision, batch, accumulation and checkpointing for the "
           "editor's model and data here, and what each gains"));
    connect(advise_, &QAction::triggered, this, &MainWindow::showAdvice);
    advice_->setSource(editor_->spec());
    connect(editor_, &ExperimentEditor::edited, this,
            [this] { advice_->setSource(editor_->spec()); });
    connect(advice_, &AdviceView::adviseRequested, this, &MainWindow::startAdvice);
    connect(advice_, &AdviceView::cancelRequested, training_, &TrainingController::cancel);
    connect(advice_, &AdviceView::editRequested, this,
            [this] { tabs_->setCurrentWidget(editor_); });
    connect(advice_, &AdviceView::openRequested, this, [this](const config::ExperimentSpec& s) {
        editor_->setSpec(s);
        tabs_->setCurrentWidget(editor_);
    });
    connect(advice_, &AdviceView::modelFileChosen, this, [this](const QString& path) {
        config::ExperimentSpec s = editor_->spec();
        s.model.name = "torchscript";
        s.model.file = path.toStdString();
        editor_->setSpec(s);
        advice_->setSource(editor_->spec());
    });
    connect(advice_, &AdviceView::dataChosen, this, [this](const QString& path) {
        config::ExperimentSpec s = editor_->spec();
        const std::string kind = config::datasetForPath(path.toStdString());
        if (kind.empty()) {
            showError(tr("Advice"),
                      tr("%1 is neither an .npz, .npy or .csv file nor a folder").arg(path));
            return;
        }
        s.data.name = kind;
        (kind == "fashion-mnist" ? s.data.dir : s.data.path) = path.toStdString();
        editor_->setSpec(s);
        advice_->setSource(editor_->spec());
    });
    connect(session_, &StoreSession::opened, this, [this] { advice_->showAdvice(0); });
    connect(training_, &TrainingController::runningChanged, this, [this](bool running) {
        advice_->adviseButton()->setEnabled(!running);
        advise_->setEnabled(true);  // the tab opens whatever runs
    });
    TrainingWorker* w = training_->worker();
    connect(w, &TrainingWorker::adviceStarted, this, [this](qint64) { session_->pollNow(); });
    connect(w, &TrainingWorker::adviceProgress, this,
            [this](const QString& phase, const QString& candidate, int done, int total,
                   double secondsLeft) {
                statusBar()->showMessage(
                    advice_->showProgress(phase, candidate, done, total, secondsLeft));
            });
    connect(w, &TrainingWorker::adviceFinished, this,
            [this](qint64 experimentId, int end, const QString& message) {
                session_->pollNow();
                const auto how = static_cast<train::AdviseEnd>(end);
                const QString line =
                    how == train::AdviseEnd::Advised
                        ? tr("Advice %1 finished.").arg(experimentId)
                        : (how == train::AdviseEnd::Cancelled
                               ? tr("Advice cancelled: what was measured is kept. %1")
                               : tr("Advice: %1"))
                              .arg(message);
                advice_->showEnd(experimentId, line);
                statusBar()->showMessage(line, 15000);
            });
}

void MainWindow::showAdvice() {
    advice_->setSource(editor_->spec());
    tabs_->setCurrentWidget(advice_);
}

bool MainWindow::startAdvice(const train::AdviseOptions& options) {
    if (!session_->isOpen() || session_->isReadOnly()) {
        showError(tr("Advice"), tr("Open a database you can write to first."));
        return false;
    }
    if (!editor_->isValid()) {
        showError(tr("Advice"), tr("Fix the problems listed in the editor first: the advice "
                                   "trains its model, data and optimizer."));
        return false;
    }
    const config::ExperimentSpec spec = editor_->spec();
    if (script::trainsWithScript(spec)) {
        showError(tr("Advice"), tr("A training script's advice runs from the command line: "
                                   "ampbench-cli advise --script %1")
                                    .arg(QString::fromStdString(spec.model.file)));
        return false;
    }
    if (!training_->startAdvice(spec, options, session_->path())) {
        showError(tr("Advice"),
                  tr("The training worker is busy; wait for the run to end or cancel it."));
        return false;
    }
    advice_->setBusy(true);
    advice_->showProgress(tr("starting"), tr("the set-up"), 0, 1, NAN);
    return true;
}

}  // namespace ampbench::ui
