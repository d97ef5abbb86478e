#pragma once
#include <QHash>
#include <QList>
#include <QMainWindow>
#include <QPair>
#include <QPointer>
#include <QSet>
#include <QString>
#include <functional>

#include "core/run/Records.h"
#include "core/train/Advise.h"
#include "core/train/Capacity.h"

class QAction;
class QDialog;
class QFileDialog;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace ampbench::ui {

class CapacityView;
class CompareView;
class ExperimentEditor;
class AboutDialog;
class AdviceView;
class HelpWindow;
class HistoryView;
class HostsDialog;
class RemoteRun;
class RunDataCache;
class RunTreeModel;
class Settings;
class StoreSession;
class TrainingController;

/// The workbench window. It lays out the editor, runs and history tabs, the
/// menus and the status bar, and wires them together; the work happens in the
/// objects it owns (store session, run cache, training controller).
class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(Settings& settings, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens (or creates) a database; `readOnly` watches it without any change (a
    /// file this user may not write opens so anyway). On failure shows why and keeps
    /// the current one.
    bool openDatabase(const QString& path, bool readOnly = false);
    /// Starts the experiment in the editor; false when it cannot (invalid, busy, no database).
    bool runExperiment();
    /// Run › Cancel: while an experiment trains here, asks whether to stop the run
    /// training now alone (the queue goes on) or with every queued run, saying what
    /// is kept; a max-batch search or a remote experiment is cancelled at once.
    void cancelRun();
    /// What the user chose in cancelRun()'s question: nothing; the run it names alone; it
    /// and the runs queued (those training beside it go on); everything training or
    /// queued.
    enum class CancelChoice { Keep, ThisRun, ThisAndQueued, Everything };
    /// An answer the question offers, as its button says it, and the runs it cancels.
    struct CancelOption {
        CancelChoice choice = CancelChoice::Keep;
        QString label;
        QList<qint64> runs;
    };
    /// The answers cancelRun() offers about run `runId` training now: it alone; it and
    /// the queued runs (where any are queued); and, where runs train beside it, all of
    /// them. Each cancels exactly the runs it lists. Empty when `runId` is not training.
    QList<CancelOption> cancelOptions(qint64 runId) const;
    /// Asks `question` with `queued` runs behind the running one; replaceable so tests
    /// need no modal dialog. Without one (and with message boxes off) everything stops.
    using ChooseCancel = std::function<CancelChoice(const QString& question, int queued)>;
    void setCancelChooser(ChooseCancel choose) { chooseCancel_ = std::move(choose); }
    /// Stops the run training now; the runs queued after it train. False when no run
    /// of an experiment trains here.
    bool cancelCurrentRun();
    /// Stops run `runId`, one of those training here now (side by side on GPUs or
    /// alone); the others and the queue go on. False when it does not train here.
    bool cancelRunningRun(qint64 runId);
    /// Leaves a queued run of the training experiment out (no rows to lose: it never
    /// started). False, with the reason on the status bar, when it has started or is
    /// not queued here.
    bool removeQueuedRun(qint64 runId);
    /// The run training here now (0: none), and the runs queued behind it, in order.
    qint64 currentRun() const { return currentRun_; }
    QList<qint64> queuedRuns() const;
    /// Run › Hosts…: edit the hosts; the editor's "Run on" follows. Window-modal.
    HostsDialog* showHosts();
    /// The experiment on a host being followed (or the last one); null before any.
    RemoteRun* remoteRun() const { return remote_; }

    /// Errors are shown in a non-modal message box (off in tests) and always
    /// reported through errorShown().
    void setMessageBoxesEnabled(bool on) { messageBoxes_ = on; }

    ExperimentEditor* editor() const { return editor_; }
    CompareView* compare() const { return compare_; }
    HistoryView* history() const { return history_; }
    CapacityView* capacity() const { return capacity_; }
    AdviceView* advice() const { return advice_; }
    /// File › Advise…: the Advice tab, for the editor's model and data.
    QAction* adviseAction() const { return advise_; }
    void showAdvice();
    /// Starts the advice of the editor's model, data and batch on the training worker;
    /// false (and an error shown) when it cannot start.
    bool startAdvice(const ampbench::train::AdviseOptions& options);
    StoreSession* session() const { return session_; }
    RunDataCache* cache() const { return cache_; }
    RunTreeModel* runModel() const { return runs_; }
    TrainingController* training() const { return training_; }
    QAction* runAction() const { return run_; }
    QAction* cancelAction() const { return cancel_; }
    QTabWidget* tabs() const { return tabs_; }
    QAction* aboutAction() const { return about_; }
    /// View › Colours: the action choosing `scheme` ("system", "light", "dark").
    QAction* colorSchemeAction(const QString& scheme) const;
    /// Help › About: versions, commit, build type, the open database, the README.
    /// Non-modal; the dialog deletes itself when closed.
    AboutDialog* showAbout();
    /// Help › Keyboard shortcuts: the help window's page of every command's keys
    /// (shortcutRows) and the plots' mouse gestures.
    HelpWindow* showShortcuts();
    /// Help › Contents (and › Topics): the README's sections beside a list of them,
    /// at `topic` (a section's title or anchor; empty: where it was). Non-modal; one
    /// window, raised again.
    HelpWindow* showHelp(const QString& topic = {});
    /// Keys and what they do: every action of the menus and the tabs that has a
    /// shortcut, read from the actions themselves, then the plots' mouse gestures.
    QList<QPair<QString, QString>> shortcutRows() const;

    /// Runs another program started on this database while the window shows other runs
    /// (or trains): announced in the status bar, never switched to. The button there
    /// ("N new run(s): show") plots them; opening another database forgets them.
    QList<qint64> announcedRuns() const { return announced_; }
    QPushButton* newRunsButton() const { return newRuns_; }

  Q_SIGNALS:
    void errorShown(const QString& title, const QString& message);
    /// An export finished: `message` lists the files and warnings, or says what failed.
    void reportExported(bool ok, const QString& message);

  protected:
    void closeEvent(QCloseEvent* event) override;
    /// At its first show, a restored window fits its screen with the frame it got.
    void showEvent(QShowEvent* event) override;
    /// A new palette redraws the toolbar's icons in its text colour.
    void changeEvent(QEvent* event) override;

  private:
    /// Fits the window (frame included) to the available part of the screen it opens
    /// on: a size restored from a larger screen put the arm buttons, "Run on" and the
    /// status bar past a laptop's edges.
    void keepOnScreen();
    bool restoredGeometry_ = false;  // the size and place came from the last session
    bool shownOnce_ = false;
    void buildMenus();
    void buildAdvice();
    void buildNewRunsNotice();
    /// Runs that appeared in the store without this window starting them: shown where
    /// the window shows nothing else (or a host it launched on runs them), announced
    /// otherwise.
    void announceRuns(const QList<qint64>& ids);
    /// Ticks `ids` and shows their experiment; the announcement goes.
    void showAppearedRuns(const QList<qint64>& ids);
    void forgetAnnouncedRuns();
    void updateIcons();
    void connectTraining();
    void showError(const QString& title, const QString& message);
    void updateActions();
    void rebuildRecentMenu();
    void chooseDatabase(bool create);

  public:
    /// File › Open database… (or New database…, `create`): a dialog listing the
    /// workbench's databases (.db and .ampbench files), not yet shown. The caller owns it.
    QFileDialog* databaseDialog(bool create);

  private:
    void loadSpec();
    void saveSpec();
    /// File › Export report…: HTML, PDF, CSV and JSON of the experiment in view,
    /// side by side; offers to open the report when it is written.
    void exportReport();

  public:
    /// Starts writing <stem>.html/.pdf/.csv/.json for an experiment of the open
    /// database. Loading, analysis and writing run on worker threads; only the
    /// plots are drawn on this one. Returns false with the reason in `message` when
    /// it cannot start (no database, an output not writable, an export running);
    /// otherwise reportExported() follows.
    bool exportReportTo(qint64 experimentId, const QString& stem, QString* message);
    bool isExporting() const { return exporting_; }
    /// The experiment the user is looking at: the one selected in History while that
    /// tab is on show, else the ticked runs' experiment (the verdict panel's), else
    /// History's selection; 0 for none. Export and Find max batch act on it.
    qint64 experimentInView() const;
    /// The experiments of the ticked runs, in the order they are on show.
    QList<qint64> experimentsOnShow() const;
    /// Picks one of several experiments (File › Export report… with runs of several
    /// ticked); 0 when the user declines. Replaceable so tests need no modal dialog.
    using ChooseExperiment = std::function<qint64(const QList<qint64>& experiments)>;
    void setExperimentChooser(ChooseExperiment choose) { chooseExperiment_ = std::move(choose); }
    /// What File › Export report… writes: the experiment in view, or, when the ticked
    /// runs on show come from several experiments, the one the user picks.
    qint64 experimentToExport();
    /// Run › Find max batch…: the Max batch tab on the experiment in view.
    void showCapacity();
    /// Starts a max-batch search of every arm of an experiment on the training
    /// worker; false (and an error shown) when it cannot start.
    bool findMaxBatch(qint64 experimentId, const ampbench::train::CapacityOptions& options);

  private:
    void refreshRuns();
    /// Launches the editor's experiment on host `label` and follows it (ui/remote).
    bool runOnHost(const QString& label);
    bool remoteActive() const;

    Settings& settings_;
    StoreSession* session_ = nullptr;
    RunDataCache* cache_ = nullptr;
    RunTreeModel* runs_ = nullptr;
    TrainingController* training_ = nullptr;
    ExperimentEditor* editor_ = nullptr;
    CompareView* compare_ = nullptr;
    HistoryView* history_ = nullptr;
    CapacityView* capacity_ = nullptr;
    AdviceView* advice_ = nullptr;
    QAction* advise_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QAction* run_ = nullptr;
    QAction* cancel_ = nullptr;
    QAction* export_ = nullptr;
    QAction* about_ = nullptr;
    QPointer<HelpWindow> help_;  // made on first use, kept while the window lives
    RemoteRun* remote_ = nullptr;
    bool exporting_ = false;
    QMenu* recent_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* dbLabel_ = nullptr;
    QPushButton* newRuns_ = nullptr;  // "N new runs: show", while any are announced
    QList<qint64> announced_;         // runs another program started, not shown yet
    bool messageBoxes_ = true;
    ChooseExperiment chooseExperiment_;
    bool showNewest_ = false;  // after opening a database: plot its newest experiment
    /// The progress bar on the run Cancel asks about (its place in the queue, its steps
    /// as the run list shows them) and the experiment's share done.
    void showRunProgress();
    /// "runs 4–6": the queue places of the runs training side by side now.
    QString runPlaces() const;
    /// The status bar's line when the experiment ends: finished, ended with runs
    /// cancelled or failed, or cancelled, with the runs of each.
    QString endOfExperiment(bool cancelled) const;

    int runsDone_ = 0;  // runs of the current experiment finished so far
    int runsTotal_ = 0;
    QList<qint64> queue_;    // the experiment's runs in the order they train
    int runPosition_ = 0;    // 1-based place in queue_ of the run training now
    qint64 currentRun_ = 0;  // of running_, the one Cancel asks about (0: none)
    QSet<qint64> running_;   // every run training now (several side by side on GPUs)
    double currentEta_ = 0;  // the experiment's ETA its last progress gave (s)
    QHash<qint64, ampbench::run::RunStatus> ended_;  // the experiment's runs ended so far
    bool experimentCancelled_ = false;               // Cancel chose everything
    QSet<qint64> begun_;                             // runs of queue_ started, finished or removed
    ChooseCancel chooseCancel_;
    QAction* cancelThisRun_ = nullptr;
    QMenu* queueMenu_ = nullptr;  // Run › Remove from the queue
    /// Cancel's question about run `runId`: where it is, what trains beside and after
    /// it; or that it has ended.
    QString cancelQuestion(qint64 runId) const;
    /// "finished", "failed", "cancelled": how run `runId` of this experiment ended.
    QString endedWord(qint64 runId) const;
    /// A line naming run `runId` ("run #5, amp · seed 2") from the tree.
    QString runName(qint64 runId) const;
    void fillQueueMenu();
    void showPickerMenu(const QPoint& at);
};

}  // namespace ampbench::ui
