#include "ui/MainWindow.h"

#include <algorithm>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolBar>
#include <QTreeView>
#include <QUrl>
#include <QVBoxLayout>
#include <exception>
#include <functional>
#include <memory>

#include "core/config/SpecJson.h"
#include "core/store/Database.h"
#include "core/store/OutputFile.h"
#include "core/train/Experiment.h"
#include "ui/AboutDialog.h"
#include "ui/ColorScheme.h"
#include "ui/HelpWindow.h"
#include "ui/Settings.h"
#include "ui/StatusBar.h"
#include "ui/capacity/CapacityView.h"
#include "ui/data/RunDataCache.h"
#include "ui/data/StoreSession.h"
#include "ui/data/StoreTask.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/editor/WheelGuard.h"
#include "ui/plots/PlotExport.h"
#include "ui/plots/PlotsView.h"
#include "ui/remote/HostsDialog.h"
#include "ui/remote/RemoteRun.h"
#include "ui/report/ReportPlots.h"
#include "ui/report/ReportWriter.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/HistoryView.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/training/TrainingController.h"
#include "ui/training/TrainingWorker.h"

namespace ampbench::ui {

MainWindow::MainWindow(Settings& settings, QWidget* parent)
    : QMainWindow(parent), settings_(settings) {
    setExportSettings(&settings_);  // a plot's export remembers its size and folder
    WheelGuard::install();          // the wheel scrolls forms, not the boxes in them
    session_ = new StoreSession(this);
    cache_ = new RunDataCache(*session_, this);
    runs_ = new RunTreeModel(this);
    training_ = new TrainingController(this);

    editor_ = new ExperimentEditor;
    compare_ = new CompareView(*runs_, *cache_, *session_, settings_);
    history_ = new HistoryView(*runs_, *session_);
    tabs_ = new QTabWidget;
    tabs_->setDocumentMode(true);
    tabs_->addTab(editor_, tr("Experiment"));
    tabs_->addTab(compare_, tr("Runs && plots"));
    tabs_->addTab(history_, tr("History"));
    capacity_ = new CapacityView(*session_);
    tabs_->addTab(capacity_, tr("Max batch"));
    buildAdvice();  // the Advice tab, its action and its wiring: MainWindowAdvice.cpp
    setCentralWidget(tabs_);

    setStatusBar(new StatusBar);  // its messages end in "…" before the database's name
    progress_ = new QProgressBar;
    progress_->setObjectName("trainingProgress");
    progress_->setRange(0, 1000);
    progress_->setMinimumWidth(360);
    progress_->setVisible(false);
    dbLabel_ = new QLabel;
    dbLabel_->setObjectName("databaseLabel");
    dbLabel_->setTextFormat(Qt::RichText);
    dbLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    statusBar()->addPermanentWidget(progress_);
    buildNewRunsNotice();  // MainWindowTraining.cpp
    statusBar()->addPermanentWidget(dbLabel_);

    setWindowIcon(applicationIcon());
    if (settings_.colorScheme() != QLatin1String("system")) {
        applyColorScheme(settings_.colorScheme());
    }
    buildMenus();
    connectTraining();
    connect(session_, &StoreSession::opened, this, [this] {
        runs_->reset();
        forgetAnnouncedRuns();  // they were another database's
        showNewest_ = true;     // the first refresh ticks the newest experiment
    });
    connect(session_, &StoreSession::changed, this, &MainWindow::refreshRuns);
    connect(session_, &StoreSession::readFailed, this,
            [this](const QString& m) { statusBar()->showMessage(m, 10000); });
    connect(runs_, &RunTreeModel::runsAppeared, this, &MainWindow::announceRuns);
    // A run of the training experiment: cancel it alone, or take it out of the queue.
    compare_->picker()->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(compare_->picker(), &QWidget::customContextMenuRequested, this,
            &MainWindow::showPickerMenu);
    connect(editor_, &ExperimentEditor::validityChanged, this, &MainWindow::updateActions);
    QStringList hostLabels;
    for (const auto& h : settings_.remoteHosts()) {
        hostLabels << h.label;
    }
    editor_->setHosts(hostLabels, settings_.runOn());
    connect(editor_, &ExperimentEditor::runOnChanged, this, [this](const QString& label) {
        settings_.setRunOn(label);
        updateActions();
    });
    connect(history_, &HistoryView::error, this,
            [this](const QString& m) { showError(tr("History"), m); });
    connect(history_, &HistoryView::showRuns, this, [this](const QList<qint64>& ids) {
        runs_->setCheckedRuns(ids);
        tabs_->setCurrentWidget(compare_);
    });

    // The first size, never larger than the screen (a laptop's 1280×720 included).
    QSize first(1500, 950);
    if (const QScreen* screen = QGuiApplication::primaryScreen()) {
        first = first.boundedTo(screen->availableGeometry().size());
    }
    resize(first);
    // Left larger on another screen, the window must still fit the one it opens on.
    restoredGeometry_ = restoreGeometry(settings_.windowGeometry());
    if (restoredGeometry_) {
        keepOnScreen();
    }
    restoreState(settings_.windowState());
    settings_.restoreSplitters(this);
    updateActions();
}

MainWindow::~MainWindow() {
    forgetExportSettings(&settings_);
}

QAction* MainWindow::colorSchemeAction(const QString& scheme) const {
    for (QAction* a : findChildren<QAction*>()) {
        if (a->isCheckable() && a->data().toString() == scheme) {
            return a;
        }
    }
    return nullptr;
}

void MainWindow::updateIcons() {
    // Drawn in the palette's text colour: the style's black ones vanished on a dark one.
    run_->setIcon(toolIcon(ToolIcon::Run, palette()));
    cancel_->setIcon(toolIcon(ToolIcon::Stop, palette()));
}

void MainWindow::keepOnScreen() {
    if (isMaximized() || isFullScreen()) {
        return;  // the window system fits those to the screen
    }
    const QScreen* screen = QGuiApplication::screenAt(geometry().center());
    if (!screen) {
        screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen();
    }
    if (!screen) {
        return;
    }
    const QRect room = screen->availableGeometry();
    // The frame the window system adds, once it is known; before, a title bar and thin
    // borders as most window systems draw them.
    QMargins frame(geometry().left() - frameGeometry().left(),
                   geometry().top() - frameGeometry().top(),
                   frameGeometry().right() - geometry().right(),
                   frameGeometry().bottom() - geometry().bottom());
    if (frameGeometry() == geometry()) {
        frame = QMargins(4, style()->pixelMetric(QStyle::PM_TitleBarHeight), 4, 4);
    }
    QRect client = geometry();
    client.setSize(client.size().boundedTo(room.size().shrunkBy(frame)).expandedTo(minimumSize()));
    const QSize outer = client.size().grownBy(frame);
    const int x = std::clamp(client.x() - frame.left(), room.left(),
                             std::max(room.left(), room.right() + 1 - outer.width()));
    const int y = std::clamp(client.y() - frame.top(), room.top(),
                             std::max(room.top(), room.bottom() + 1 - outer.height()));
    client.moveTopLeft(QPoint(x + frame.left(), y + frame.top()));
    if (client != geometry()) {
        setGeometry(client);
    }
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (!shownOnce_) {
        shownOnce_ = true;
        if (restoredGeometry_) {
            keepOnScreen();  // now with the frame the window system gave it
        }
    }
}

void MainWindow::changeEvent(QEvent* event) {
    QMainWindow::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && run_) {
        updateIcons();
    }
}

AboutDialog* MainWindow::showAbout() {
    auto* dialog = new AboutDialog(session_->path(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
    return dialog;
}

QList<QPair<QString, QString>> MainWindow::shortcutRows() const {
    QList<QPair<QString, QString>> rows;
    QSet<const QAction*> listed;
    auto keys = [](const QAction* a) {
        QStringList out;
        for (const QKeySequence& k : a->shortcuts()) {
            out << k.toString(QKeySequence::NativeText);
        }
        return out.join(QStringLiteral(", "));
    };
    auto name = [](const QAction* a) { return QString(a->text()).remove(QChar('&')); };
    // The menus' own shortcuts, so the list never disagrees with them.
    std::function<void(QMenu*, const QString&)> walk = [&](QMenu* menu, const QString& path) {
        for (QAction* a : menu->actions()) {
            if (a->menu()) {
                walk(a->menu(), path + name(a) + QStringLiteral(" \u203a "));
            } else if (!a->shortcuts().isEmpty()) {
                rows.append({keys(a), path + name(a)});
                listed.insert(a);
            }
        }
    };
    for (QAction* top : menuBar()->actions()) {
        if (top->menu()) {
            walk(top->menu(), name(top) + QStringLiteral(" \u203a "));
        }
    }
    // Actions of the tabs (History's undo, say), named by the tab they work in.
    for (int i = 0; i < tabs_->count(); ++i) {
        QWidget* page = tabs_->widget(i);
        QList<QAction*> actions = page->findChildren<QAction*>();
        for (QWidget* w : page->findChildren<QWidget*>()) {
            actions += w->actions();
        }
        actions += page->actions();
        for (QAction* a : actions) {
            if (!a->shortcuts().isEmpty() && !listed.contains(a)) {
                rows.append(
                    {keys(a),
                     tr("%1 tab: %2").arg(QString(tabs_->tabText(i)).remove('&'), name(a))});
                listed.insert(a);
            }
        }
    }
    rows.append({tr("Wheel"), tr("Plots: zoom the panel under the pointer (every panel follows)")});
    rows.append({tr("Drag"), tr("Plots: pan")});
    rows.append({tr("Double-click"), tr("Plots: maximise a panel, or restore the grid")});
    rows.append({tr("Right-click"), tr("Plots: export or copy a panel as a figure")});
    rows.append({tr("Click a title"), tr("Plots: choose what the panel shows")});
    return rows;
}

HelpWindow* MainWindow::showHelp(const QString& topic) {
    if (!help_) {
        help_ = new HelpWindow(readmePath(QCoreApplication::applicationDirPath()), shortcutRows(),
                               this);
    } else {
        help_->setShortcuts(shortcutRows());  // the actions as they are now
    }
    if (!topic.isEmpty()) {
        help_->showTopic(topic);
    }
    help_->show();
    help_->raise();
    help_->activateWindow();
    return help_;
}

HelpWindow* MainWindow::showShortcuts() {
    return showHelp(HelpWindow::shortcutsTopic());
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New experiment"), QKeySequence::New, this, [this] {
        editor_->loadPreset("default");
        tabs_->setCurrentWidget(editor_);
    });
    file->addAction(advise_);
    file->addSeparator();
    file->addAction(tr("&Open database\u2026"), QKeySequence::Open, this,
                    [this] { chooseDatabase(false); });
    file->addAction(tr("New &database\u2026"), this, [this] { chooseDatabase(true); });
    recent_ = file->addMenu(tr("&Recent databases"));
    file->addSeparator();
    file->addAction(tr("&Load spec\u2026"), QKeySequence(tr("Ctrl+L")), this,
                    &MainWindow::loadSpec);
    file->addAction(tr("&Save spec\u2026"), QKeySequence::Save, this, &MainWindow::saveSpec);
    file->addSeparator();
    export_ = file->addAction(tr("&Export report\u2026"), QKeySequence(tr("Ctrl+E")), this,
                              &MainWindow::exportReport);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run_ = run->addAction(tr("&Run experiment"), QKeySequence(tr("Ctrl+R")), this,
                          &MainWindow::runExperiment);
    run_->setObjectName("runAction");
    cancel_ = run->addAction(tr("&Cancel\u2026"), QKeySequence(tr("Ctrl+.")), this,
                             &MainWindow::cancelRun);
    cancel_->setToolTip(tr("Stop the run training now, alone or with the queued runs"));
    cancelThisRun_ =
        run->addAction(tr("Cancel &this run only"), this, [this] { cancelCurrentRun(); });
    cancelThisRun_->setToolTip(tr("Stop the run training now; the queued runs train"));
    queueMenu_ = run->addMenu(tr("Remove from the &queue"));
    connect(queueMenu_, &QMenu::aboutToShow, this, &MainWindow::fillQueueMenu);
    run->addAction(tr("&Hosts\u2026"), this, [this] { showHosts(); });
    run->addSeparator();
    run->addAction(tr("Find &max batch\u2026"), QKeySequence(tr("Ctrl+B")), this,
                   &MainWindow::showCapacity);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Reset plot views"), QKeySequence(tr("Ctrl+0")), this,
                    [this] { compare_->plots()->resetViews(); });
    view->addAction(tr("&Copy summary table"), this, [this] { compare_->copySummary(); });
    // The desktop's palette by default; a light or dark one where the desktop's does
    // not suit (a dark qt6ct theme the window only half follows, say).
    QMenu* colours = view->addMenu(tr("C&olours"));
    auto* schemes = new QActionGroup(this);
    for (const auto& [key, label] : {std::pair{QStringLiteral("system"), tr("As the &desktop")},
                                     std::pair{QStringLiteral("light"), tr("&Light")},
                                     std::pair{QStringLiteral("dark"), tr("D&ark")}}) {
        QAction* a = colours->addAction(label);
        a->setCheckable(true);
        a->setChecked(settings_.colorScheme() == key);
        a->setData(key);
        schemes->addAction(a);
        connect(a, &QAction::triggered, this, [this, key = key] {
            settings_.setColorScheme(key);
            applyColorScheme(key);
        });
    }

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Contents"), QKeySequence::HelpContents, this, [this] { showHelp(); });
    // The README's sections, read when the menu opens (the installed README, else the
    // source tree's).
    QMenu* topics = help->addMenu(tr("&Topics"));
    connect(topics, &QMenu::aboutToShow, this, [this, topics] {
        topics->clear();
        QFile file(readmePath(QCoreApplication::applicationDirPath()));
        if (file.open(QIODevice::ReadOnly | QIODevice::Text)) {
            for (const HelpSection& s :
                 markdownSections(QString::fromUtf8(file.readAll()), tr("Overview"))) {
                topics->addAction(s.title, this, [this, t = s.title] { showHelp(t); });
            }
        }
        if (topics->isEmpty()) {
            topics->addAction(tr("README not found"))->setEnabled(false);
        }
    });
    help->addAction(tr("&Keyboard shortcuts"), QKeySequence(tr("Ctrl+/")), this,
                    [this] { showShortcuts(); });
    help->addSeparator();
    about_ = help->addAction(tr("&About AMP Workbench"), this, [this] { showAbout(); });
    about_->setMenuRole(QAction::AboutRole);

    updateIcons();
    QToolBar* bar = addToolBar(tr("Run"));
    bar->setObjectName("runToolbar");  // saveState() needs the name
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(run_);
    bar->addAction(cancel_);
    bar->addAction(advise_);

    rebuildRecentMenu();
}

bool MainWindow::openDatabase(const QString& path, bool readOnly) {
    QString error;
    if (!session_->open(path, &error, readOnly)) {
        showError(tr("Cannot open database"), error);
        return false;
    }
    settings_.setLastDatabase(session_->path());
    settings_.addRecentDatabase(session_->path());
    rebuildRecentMenu();
    // The file alone: Qt adds the application's display name ("runs.db \u2014 AMP Workbench").
    const QString file = QFileInfo(session_->path()).fileName();
    setWindowFilePath(session_->path());
    setWindowTitle(session_->isReadOnly() ? tr("%1 (read-only)").arg(file) : file);
    updateActions();
    return true;
}

void MainWindow::refreshRuns() {
    if (!session_->db()) {
        return;
    }
    try {
        runs_->refresh(*session_->db());
    } catch (const std::exception& e) {
        statusBar()->showMessage(QString::fromStdString(e.what()), 10000);
        return;
    }
    if (currentRun_ != 0) {
        showRunProgress();  // the rows read may be ahead of what the trainer said
    }
    if (showNewest_) {
        showNewest_ = false;
        qint64 newest = 0;
        for (int r = 0; r < runs_->rowCount(); ++r) {
            newest = std::max(newest, runs_->item(r, 0)->data(RunTreeModel::IdRole).toLongLong());
        }
        if (newest != 0) {
            runs_->setCheckedRuns(runs_->runsOfExperiment(newest));
            compare_->revealExperiment(newest);
        }
    }
}

bool MainWindow::runExperiment() {
    if (!editor_->isValid() || !session_->isOpen() || session_->isReadOnly() ||
        training_->isRunning() || remoteActive()) {
        return false;
    }
    if (!editor_->runOn().isEmpty()) {
        return runOnHost(editor_->runOn());
    }
    return training_->start(editor_->spec(), session_->path());
}

bool MainWindow::remoteActive() const {
    return remote_ && remote_->isActive();
}

bool MainWindow::runOnHost(const QString& label) {
    const auto hosts = settings_.remoteHosts();
    const auto host = std::find_if(hosts.begin(), hosts.end(),
                                   [&](const RemoteHost& h) { return h.label == label; });
    if (host == hosts.end()) {
        showError(tr("Run on %1").arg(label),
                  tr("No host is labelled %1 (Run \u203a Hosts\u2026)").arg(label));
        return false;
    }
    delete remote_;
    remote_ = new RemoteRun(settings_.sshCommand(), *host, session_->path(), this);
    connect(remote_, &RemoteRun::message, this,
            [this](const QString& m) { statusBar()->showMessage(m, 15000); });
    connect(remote_, &RemoteRun::rowsArrived, session_, &StoreSession::pollNow);
    connect(remote_, &RemoteRun::failed, this,
            [this, label](const QString& m) { showError(tr("Run on %1").arg(label), m); });
    connect(remote_, &RemoteRun::stateChanged, this, [this] {
        progress_->setVisible(remoteActive());
        progress_->setRange(0, 0);
        updateActions();
    });
    remote_->start(editor_->spec());
    updateActions();
    return remote_->state() != RemoteRun::State::Failed;
}

HostsDialog* MainWindow::showHosts() {
    auto* dialog = new HostsDialog(settings_.remoteHosts(), settings_.sshCommand(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        settings_.setRemoteHosts(dialog->hosts());
        settings_.setSshCommand(dialog->sshCommand());
        QStringList labels;
        for (const auto& h : dialog->hosts()) {
            labels << h.label;
        }
        editor_->setHosts(labels, settings_.runOn());
        updateActions();  // the host on the Run button may have gone
    });
    dialog->open();
    return dialog;
}

void MainWindow::showError(const QString& title, const QString& message) {
    Q_EMIT errorShown(title, message);
    statusBar()->showMessage(title + ": " + message.section('\n', 0, 0), 15000);
    if (!messageBoxes_) {
        return;
    }
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setModal(false);
    box->show();
}

void MainWindow::updateActions() {
    const bool running = training_->isRunning() || remoteActive();
    const bool writable = session_->isOpen() && !session_->isReadOnly();
    // Where the runs go, or that they have nowhere to go: a blank bar after a file that
    // is not a database left the window looking ready.
    if (!session_->isOpen()) {
        dbLabel_->setText(tr("<b>No database is open</b>: File \u203a Open database\u2026"));
        dbLabel_->setToolTip(
            tr("Open one (Ctrl+O) or make one (File \u203a New database\u2026) "
               "to run experiments and see their history"));
    } else {
        dbLabel_->setText((session_->isReadOnly() ? tr("%1 (read-only)") : QStringLiteral("%1"))
                              .arg(session_->path().toHtmlEscaped()));
        dbLabel_->setToolTip(session_->isReadOnly() ? tr("Open read-only: watched, never changed")
                                                    : tr("The database runs are recorded in"));
    }
    editor_->setRunBlocked(
        !session_->isOpen() ? tr("no database is open (File \u203a Open database\u2026)")
        : session_->isReadOnly()
            ? tr("the database is open read-only (File \u203a Open database\u2026 for one you "
                 "can write to)")
        : running ? tr("an experiment is training; one trains at a time")
                  : QString());
    run_->setEnabled(editor_->readyToRun() && writable && !running);
    // Where Ctrl+R trains is on the button: "Run on" is kept across restarts, so a
    // remote host chosen last week would otherwise be used without a word.
    const QString host = editor_->runOn();
    run_->setText(host.isEmpty() ? tr("&Run experiment") : tr("&Run on %1").arg(host));
    const QString where = host.isEmpty() ? tr("on this machine")
                                         : tr("on %1 (Run on, in the Experiment tab)").arg(host);
    run_->setToolTip(!writable               ? tr("Open a database you can write to first")
                     : editor_->readyToRun() ? tr("Train every arm \u00d7 seed %1").arg(where)
                     : editor_->isValid() ? tr("The training script's interpreter is being checked")
                                          : tr("Fix the problems listed in the editor first"));
    cancel_->setEnabled(running);
    const bool local = training_->isRunning() && currentRun_ != 0;
    cancelThisRun_->setEnabled(local);
    queueMenu_->setEnabled(training_->isRunning() && !queue_.isEmpty());
    export_->setEnabled(session_->isOpen() && !exporting_);
    export_->setToolTip(exporting_ ? tr("A report is being written") : QString());
}

void MainWindow::rebuildRecentMenu() {
    recent_->clear();
    const QStringList paths = settings_.recentDatabases();
    for (const QString& p : paths) {
        recent_->addAction(p, this, [this, p] { openDatabase(p); });
    }
    recent_->setEnabled(!paths.isEmpty());
}

QFileDialog* MainWindow::databaseDialog(bool create) {
    auto* dialog = new QFileDialog(this, create ? tr("New database") : tr("Open database"),
                                   QFileInfo(session_->path()).absolutePath());
    // .ampbench is the workbench's own name for a database (the desktop opens those).
    dialog->setNameFilters({tr("Workbench databases (*.db *.ampbench)"), tr("All files (*)")});
    dialog->setAcceptMode(create ? QFileDialog::AcceptSave : QFileDialog::AcceptOpen);
    dialog->setFileMode(create ? QFileDialog::AnyFile : QFileDialog::ExistingFile);
    if (create) {
        dialog->setDefaultSuffix(QStringLiteral("db"));
    }
    return dialog;
}

void MainWindow::chooseDatabase(bool create) {
    std::unique_ptr<QFileDialog> dialog(databaseDialog(create));
    if (dialog->exec() == QDialog::Accepted && !dialog->selectedFiles().isEmpty()) {
        openDatabase(dialog->selectedFiles().first());
    }
}

void MainWindow::loadSpec() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Load experiment spec"), settings_.lastSpecFolder(),
                                     tr("JSON specs (*.json);;All files (*)"));
    if (path.isEmpty()) {
        return;
    }
    settings_.setLastSpecFolder(QFileInfo(path).absolutePath());
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        showError(tr("Cannot load spec"), tr("%1: %2").arg(path, file.errorString()));
        return;
    }
    QString problem;
    if (!editor_->loadJson(QString::fromUtf8(file.readAll()), &problem)) {
        showError(tr("Cannot load spec"), tr("%1: %2").arg(path, problem));
        return;
    }
    tabs_->setCurrentWidget(editor_);
}

void MainWindow::showCapacity() {
    capacity_->setExperiment(experimentInView());
    tabs_->setCurrentWidget(capacity_);
}

bool MainWindow::findMaxBatch(qint64 experimentId, const train::CapacityOptions& options) {
    store::Database* db = session_->db();
    if (!db || session_->isReadOnly()) {
        showError(tr("Max-batch search"), tr("Open a database you can write to first."));
        return false;
    }
    config::ExperimentSpec spec;
    try {
        spec = train::storedSpec(*db, experimentId);
    } catch (const train::SpecError& e) {
        showError(tr("Max-batch search"), tr("Experiment %1's stored spec has errors:\n%2")
                                              .arg(experimentId)
                                              .arg(QString::fromStdString(e.what())));
        return false;
    } catch (const std::exception& e) {
        showError(tr("Max-batch search"), QString::fromStdString(e.what()));
        return false;
    }
    if (!training_->startFindBatch(spec, experimentId, session_->path(), options)) {
        showError(tr("Max-batch search"),
                  tr("The training worker is busy; wait for the run to end or cancel it."));
        return false;
    }
    progress_->setRange(0, 0);  // trials have no known count: a busy bar
    capacity_->beginSearch(experimentId);
    capacity_->setProgressText(tr("Searching the max batch of experiment %1's %2 arms\u2026")
                                   .arg(experimentId)
                                   .arg(spec.arms.size()));
    return true;
}

void MainWindow::saveSpec() {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save experiment spec"),
        settings_.lastSpecFolder() + "/" + QString::fromStdString(editor_->spec().name) + ".json",
        tr("JSON specs (*.json)"));
    if (path.isEmpty()) {
        return;
    }
    settings_.setLastSpecFolder(QFileInfo(path).absolutePath());
    // Never over the open database, and all or nothing.
    std::string error = store::outputClash(path.toStdString(), session_->path().toStdString());
    if (error.empty()) {
        try {
            store::writeFileAtomically(path.toStdString(), editor_->toJson().toStdString());
        } catch (const store::OutputError& e) {
            error = e.what();
        }
    }
    if (!error.empty()) {
        showError(tr("Cannot save spec"), QString::fromStdString(error));
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    settings_.setWindowGeometry(saveGeometry());
    settings_.setWindowState(saveState());
    settings_.storeSplitters(this);
    settings_.sync();
    training_->cancel();  // the controller waits for the run to stop
    event->accept();
}

}  // namespace ampbench::ui
