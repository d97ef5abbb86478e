#pragma once
// What the plots' QtTests share: a run's steps made up, a window over one run, and a
// database of two experiments.
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTreeWidgetItem>
#include <QtTest>
#include <algorithm>
#include "UiTestSupport.h"
#include "core/analysis/Decimation.h"
#include "core/analysis/PlotSeries.h"
#include "core/store/Database.h"
#include "ui/Settings.h"
#include "ui/data/RunDataCache.h"
#include "ui/data/StoreSession.h"
#include "ui/draw/Palette.h"
#include "ui/plots/PlotExport.h"
#include "ui/plots/PlotInput.h"
#include "ui/plots/PlotLegend.h"
#include "ui/plots/PlotMetric.h"
#include "ui/plots/PlotPanel.h"
#include "ui/plots/PlotsView.h"
#include "ui/plots/TimingPlots.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/runs/SummaryTableModel.h"

namespace ampbench::ui::plots_test {

inline std::vector<run::StepRecord> steps(int n, int samplesPerStep, double msPerStep) {
    std::vector<run::StepRecord> out;
    for (int s = 1; s <= n; ++s) {
        run::StepRecord r;
        r.step = s;
        r.samples = static_cast<int64_t>(s) * samplesPerStep;
        r.loss = 3.0 / s + (s % 2 ? 0.2 : -0.2);
        r.step_ms = msPerStep;
        r.wall_s = s * msPerStep / 1000.0;
        r.loss_scale = s < 5 ? 65536 : 32768;
        r.skipped = s == 5;
        r.mem_allocated = r.mem_peak = static_cast<int64_t>(samplesPerStep) << 20;
        out.push_back(r);
    }
    return out;
}

/// A window over a database with one run of `rows`, its steps all read and ticked.
struct OneRun : test::Workspace {
    int64_t run = 0;
    OneRun(const char* arm, const std::vector<run::StepRecord>& rows) {
        open();
        auto db = store::Database::open(dbPath().toStdString());
        const int64_t e = db->createExperiment("one", "{}");
        run = db->createRun(e, arm, 0, 1, "{}", static_cast<int64_t>(rows.size()));
        db->insertSteps(run, rows);
        window->session()->pollNow();
        window->runModel()->setCheckedRuns({run});
        QTRY_COMPARE(
            window->cache()->series(run) ? window->cache()->series(run)->steps.size() : size_t(0),
            rows.size());
    }
    PlotsView* plots() const { return window->compare()->plots(); }
};

/// A database with two experiments: "a" (fp32 seeds 1 and 2, amp-k4) and "b" (fp32).
struct Filled : test::Workspace {
    std::vector<int64_t> runs;
    Filled() {
        open();
        auto db = store::Database::open(dbPath().toStdString());
        const int64_t a = db->createExperiment("a", "{}");
        for (auto [arm, seed, k] : {std::tuple{"fp32", 1, 1}, {"fp32", 2, 1}, {"amp-k4", 1, 4}}) {
            const int64_t r = db->createRun(a, arm, k == 1 ? 0 : 1, seed, "{}", 40 / k);
            db->insertSteps(r, steps(40 / k, 64 * k, k == 1 ? 20.0 : 50.0));
            db->insertEvals(r,
                            {{20 / k, 20 * 64, 0.9, 0.6, 0.4}, {40 / k, 40 * 64, 0.7, 0.7, 0.8}});
            db->finishRun(r, run::RunStatus::Finished, "");
            runs.push_back(r);
        }
        const int64_t b = db->createExperiment("b", "{}");
        const int64_t r = db->createRun(b, "fp32", 0, 1, "{}", 10);
        db->insertSteps(r, steps(10, 64, 10.0));
        runs.push_back(r);
        window->session()->pollNow();
    }
    PlotsView* plots() const { return window->compare()->plots(); }
    void show(const QList<qint64>& ids) {
        window->runModel()->setCheckedRuns(ids);
        QTRY_COMPARE(window->cache()->runs(), ids);
        plots()->redrawNow();
    }
};

}  // namespace ampbench::ui::plots_test
