// gui_redraw: how fast the plots redraw with long runs loaded.
// Fills a temporary database with RUNS runs of STEPS steps, opens it in the
// window (offscreen unless a display is asked for), and times loading the rows,
// a redraw, and switching the x-axis, then trains a small experiment live.
// Usage: gui_redraw [RUNS] [STEPS] [LIVE] (LIVE 0 skips the live part)
#include <QApplication>
#include <QComboBox>
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
    const bool live = argc > 3 ? std::atoi(argv[3]) != 0 : true;

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

    if (!live) {
        return 0;
    }
    // Live: train a small CPU experiment into the same file while the long runs
    // stay on show, and watch the GUI thread's event loop for stalls.
    config::ExperimentSpec spec = *config::preset("smoke");
    spec.micro_steps = 240;
    spec.device = config::DeviceKind::Cpu;
    window.editor()->setSpec(spec);
    const QList<qint64> loadedRuns = window.cache()->runs();
    QObject::connect(window.training()->worker(), &ui::TrainingWorker::experimentPlanned, &window,
                     [&](qint64, const QList<qint64>& ids) {
                         window.runModel()->setCheckedRuns(loadedRuns + ids);
                     });
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
    t.restart();
    window.runExperiment();
    gap.start();
    watchdog.start();
    while (!done) {
        QApplication::processEvents(QEventLoop::WaitForMoreEvents);
    }
    watchdog.stop();
    std::sort(gaps.begin(), gaps.end());
    const auto over50 = gaps.end() - std::upper_bound(gaps.begin(), gaps.end(), 50.0);
    std::printf(
        "live: %.1f s training %d runs; GUI event-loop gaps: median %.1f ms, p99 %.1f ms, "
        "max %.1f ms; %zu redraws, median %.1f ms\n",
        t.elapsed() / 1000.0, 3, gaps[gaps.size() / 2], gaps[gaps.size() * 99 / 100], gaps.back(),
        redrawsDuringRun.size(), medianMs(redrawsDuringRun));
    std::printf("  gaps over 50 ms: %td of %zu\n", over50, gaps.size());
    return 0;
}
