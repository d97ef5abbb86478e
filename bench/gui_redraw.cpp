// gui_redraw: how fast the plots redraw with long runs loaded.
// Fills a temporary database with RUNS runs of STEPS steps, opens it in the
// window (offscreen unless a display is asked for), and times loading the rows,
// a redraw, and switching the x-axis, then trains a small experiment live and
// times each step from the trainer to the plots' cache.
// Usage: gui_redraw [RUNS] [STEPS] [LIVE [SSH CLI]]
//   LIVE 0 skips the live part, 1 trains here (the default), 2 trains on a "host"
//   reached through the program SSH (a stand-in for ssh that runs the command here)
//   with the ampbench-cli CLI, its records tailed and ingested as a remote run's are.
#include <QApplication>
#include <QComboBox>
#include <QDateTime>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/analysis/Statistics.h"
#include "core/config/Presets.h"
#include "core/store/Database.h"
#include "ui/MainWindow.h"
#include "ui/Settings.h"
#include "ui/data/RunDataCache.h"
#include "ui/data/StoreSession.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/plots/PlotPanel.h"
#include "ui/plots/PlotsView.h"
#include "ui/remote/RemoteRun.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/training/TrainingController.h"
#include "ui/training/TrainingWorker.h"

using namespace ampbench;

namespace {

void fill(const std::string& path, int runs, int64_t steps) {
    auto db = store::Database::open(path);
    const int64_t exp = db->createExperiment("bench", "{}");
    for (int r = 0; r < runs; ++r) {
        const int64_t id =
            db->createRun(exp, r % 2 ? "amp" : "fp32", r % 2, 1 + r / 2, "{}", steps);
        std::vector<run::StepRecord> rows;
        rows.reserve(static_cast<size_t>(steps));
        for (int64_t s = 1; s <= steps; ++s) {
            run::StepRecord x;
            x.step = s;
            x.samples = s * 64;
            x.loss = 2.5 * std::exp(-static_cast<double>(s) / 20000.0) + 0.05 * std::sin(s * 0.37);
            x.step_ms = 20 + 3 * std::sin(s * 0.11);
            x.wall_s = static_cast<double>(s) * 0.02;
            x.loss_scale = r % 2 ? 65536.0 / static_cast<double>(1 << (s / 30000)) : 1.0;
            x.skipped = r % 2 && s % 30000 == 0;
            // Memory grows in a few steps as the allocator caches blocks.
            x.mem_allocated = x.mem_peak = (400LL << 20) + (s / 20000) * (8LL << 20);
            rows.push_back(x);
        }
        db->insertSteps(id, rows);
        db->finishRun(id, run::RunStatus::Finished, "");
    }
}

double medianMs(std::vector<double> v) {
    return analysis::median(std::move(v));
}

}  // namespace

int main(int argc, char** argv) {
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    const int runs = argc > 1 ? std::atoi(argv[1]) : 4;
    const int64_t steps = argc > 2 ? std::atoll(argv[2]) : 100000;
    const int live = argc > 3 ? std::atoi(argv[3]) : 1;
    if (live == 2 && argc < 6) {
        std::fprintf(stderr, "gui_redraw: LIVE 2 needs SSH and CLI\n");
        return 2;
    }

    QTemporaryDir dir;
    const QString path = dir.filePath("bench.db");
    QElapsedTimer t;
    t.start();
    fill(path.toStdString(), runs, steps);
    std::printf("filled %d runs x %lld steps in %.1f s\n", runs, static_cast<long long>(steps),
                t.elapsed() / 1000.0);

    ui::Settings settings(dir.filePath("settings.ini"));
    ui::MainWindow window(settings);
    window.setMessageBoxesEnabled(false);
    window.resize(1600, 1000);
    window.show();
    ui::PlotsView* plots = window.compare()->plots();

    // The window's first paint, apart from loading.
    t.restart();
    QApplication::processEvents();
    std::printf("first paint of the window: %.1f ms\n",
                static_cast<double>(t.nsecsElapsed()) / 1e6);

    // Loading: the newest experiment is ticked on open; rows arrive in slices.
    t.restart();
    QElapsedTimer turn;
    turn.start();
    window.openDatabase(path);
    double longestTurn = static_cast<double>(turn.nsecsElapsed()) / 1e6;
    while (true) {
        turn.restart();
        QApplication::processEvents();
        longestTurn = std::max(longestTurn, static_cast<double>(turn.nsecsElapsed()) / 1e6);
        int64_t loaded = 0;
        for (qint64 id : window.cache()->runs()) {
            loaded += window.cache()->series(id)
                          ? static_cast<int64_t>(window.cache()->series(id)->steps.size())
                          : 0;
        }
        if (loaded == runs * steps) {
            break;
        }
    }
    std::printf("load rows into the cache: %.0f ms\n", static_cast<double>(t.elapsed()));
    std::printf("  longest event-loop turn while loading: %.1f ms\n", longestTurn);

    std::vector<double> redraw;
    for (int i = 0; i < 10; ++i) {
        plots->redrawNow();
        redraw.push_back(plots->lastRedrawMs());
    }
    std::printf("redraw (6 panels, median of 10): %.1f ms (max %.1f)\n", medianMs(redraw),
                *std::max_element(redraw.begin(), redraw.end()));

    for (ui::PlotPanel* p : {plots->lossPlot(), plots->validationPlot(), plots->stepTimePlot(),
                             plots->memoryPlot(), plots->lossScalePlot(), plots->armBarsPlot()}) {
        t.restart();
        p->replot();
        std::printf("  replot %-45s %6.1f ms\n", qPrintable(p->objectName()),
                    static_cast<double>(t.nsecsElapsed()) / 1e6);
    }

    auto* xAxis = plots->findChild<QComboBox*>("xAxis");
    std::vector<double> switches;
    for (int i = 0; i < 6; ++i) {
        t.restart();
        xAxis->setCurrentIndex((xAxis->currentIndex() + 1) % xAxis->count());
        switches.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    }
    std::printf("switch the x-axis (median of 6): %.1f ms (max %.1f)\n", medianMs(switches),
                *std::max_element(switches.begin(), switches.end()));

    if (live == 0) {
        return 0;
    }
    // Live: train a small CPU experiment into the same file while the long runs
    // stay on show (here, or on a host whose records are tailed and ingested), and
    // watch the GUI thread's event loop for stalls.
    config::ExperimentSpec spec = *config::preset("smoke");
    spec.micro_steps = 240;
    spec.device = config::DeviceKind::Cpu;
    window.editor()->setSpec(spec);
    const QList<qint64> loadedRuns = window.cache()->runs();
    if (live == 2) {
        ui::RemoteHost host;
        host.label = QStringLiteral("bench-host");
        host.destination = QStringLiteral("bench@host");
        host.cli = QString::fromLocal8Bit(argv[5]);
        host.database = dir.filePath("server.db");
        settings.setSshCommand(QString::fromLocal8Bit(argv[4]));
        settings.setRemoteHosts({host});
        window.editor()->setHosts({host.label}, host.label);
        QObject::connect(
            window.runModel(), &ui::RunTreeModel::runsAppeared, &window,
            [&](const QList<qint64>& ids) {
                window.runModel()->setCheckedRuns(window.runModel()->checkedRuns() + ids);
            });
    } else {
        QObject::connect(window.training()->worker(), &ui::TrainingWorker::experimentPlanned,
                         &window, [&](qint64, const QList<qint64>& ids) {
                             window.runModel()->setCheckedRuns(loadedRuns + ids);
                         });
    }
    bool done = false;
    QObject::connect(window.training(), &ui::TrainingController::runningChanged, &window,
                     [&](bool running) { done = !running; });
    QElapsedTimer gap;
    std::vector<double> gaps;
    QTimer watchdog;
    watchdog.setInterval(5);
    QObject::connect(&watchdog, &QTimer::timeout, [&] {
        gaps.push_back(static_cast<double>(gap.nsecsElapsed()) / 1e6);
        gap.restart();
    });
    std::vector<double> redrawsDuringRun;
    QObject::connect(plots, &ui::PlotsView::redrawn,
                     [&] { redrawsDuringRun.push_back(plots->lastRedrawMs()); });
    // A step's delay: from the moment the trainer finished it (its run's start plus
    // its wall time) to the moment the plots' cache holds it; the newest step of
    // every live run at each update of the cache.
    std::vector<double> delays;
    QObject::connect(window.cache(), &ui::RunDataCache::updated, &window, [&] {
        const auto now = QDateTime::currentMSecsSinceEpoch();
        for (qint64 id : window.cache()->runs()) {
            const ui::RunSeries* s = window.cache()->series(id);
            if (loadedRuns.contains(id) || !s || s->steps.empty() ||
                s->row.status != run::RunStatus::Running) {
                continue;
            }
            const QDateTime started =
                QDateTime::fromString(QString::fromStdString(s->row.started_at), Qt::ISODateWithMs);
            if (started.isValid()) {
                delays.push_back(static_cast<double>(now - started.toMSecsSinceEpoch()) -
                                 s->steps.back().wall_s * 1000.0);
            }
        }
    });
    t.restart();
    if (live == 2) {
        if (!window.runExperiment() || !window.remoteRun()) {
            std::fprintf(stderr, "gui_redraw: the remote run did not start\n");
            return 1;
        }
        QObject::connect(window.remoteRun(), &ui::RemoteRun::finished, &window,
                         [&](bool) { done = true; });
        QObject::connect(window.remoteRun(), &ui::RemoteRun::failed, &window,
                         [&](const QString& why) {
                             std::fprintf(stderr, "gui_redraw: %s\n", qPrintable(why));
                             done = true;
                         });
    } else {
        window.runExperiment();
    }
    gap.start();
    watchdog.start();
    while (!done) {
        QApplication::processEvents(QEventLoop::WaitForMoreEvents);
    }
    watchdog.stop();
    std::sort(gaps.begin(), gaps.end());
    const auto over50 = gaps.end() - std::upper_bound(gaps.begin(), gaps.end(), 50.0);
    std::printf(
        "live%s: %.1f s training %d runs; GUI event-loop gaps: median %.1f ms, p99 %.1f ms, "
        "max %.1f ms; %zu redraws, median %.1f ms\n",
        live == 2 ? " (on a host through the stand-in transport)" : "", t.elapsed() / 1000.0, 3,
        gaps[gaps.size() / 2], gaps[gaps.size() * 99 / 100], gaps.back(), redrawsDuringRun.size(),
        medianMs(redrawsDuringRun));
    std::printf("  gaps over 50 ms: %td of %zu\n", over50, gaps.size());
    if (!delays.empty()) {
        std::sort(delays.begin(), delays.end());
        std::printf(
            "  step to the plots' cache: median %.0f ms, p90 %.0f ms, max %.0f ms (%zu "
            "updates)\n",
            delays[delays.size() / 2], delays[delays.size() * 9 / 10], delays.back(),
            delays.size());
    }
    return 0;
}
