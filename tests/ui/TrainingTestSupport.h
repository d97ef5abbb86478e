#pragma once
// What the training QtTests share: the patience of a training test, whether Python runs,
// the editor's problems as text, a script's spec, the worker's signals, runs planned by hand.
#include <signal.h>
#include <QAction>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableWidget>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include "UiTestSupport.h"
#include "core/config/SpecJson.h"
#include "core/store/Database.h"
#include "ui/capacity/CapacityView.h"
#include "ui/data/RunDataCache.h"
#include "ui/data/StoreSession.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/plots/PlotPanel.h"
#include "ui/plots/PlotsView.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/SummaryTableModel.h"
#include "ui/runs/VerdictPanel.h"
#include "ui/training/ThreadPriority.h"
#include "ui/training/TrainingController.h"
#include "ui/training/TrainingWorker.h"

namespace ampbench::ui::training_test {

inline constexpr int kTrainTimeoutMs = 240000;

/// Whether Debian's /usr/bin/python3 imports `module` (ampbench from this checkout).
inline bool pythonImports(const char* module) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(AMPBENCH_PYTHON_DIR));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral("/usr/bin/python3"),
            {QStringLiteral("-c"), QStringLiteral("import ") + module});
    return p.waitForFinished(60000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

/// Every problem the editor lists, a line each.
inline QString errorText(const ExperimentEditor& editor) {
    QStringList lines;
    for (const auto& e : editor.errors()) {
        lines << QString::fromStdString(e.toString());
    }
    return lines.join('\n');
}

/// The user's training script as the model, run by /usr/bin/python3 on the CPU: fp32
/// and bf16 arms (or fp32 alone), one run per arm and seed.
inline config::ExperimentSpec scriptSpec(const QString& script, const QString& args,
                                         std::vector<uint64_t> seeds, int64_t steps, int arms = 2) {
    config::ExperimentSpec s = test::tinySpec(steps);
    s.name = "script";
    s.model.name = "script";
    s.model.file = script.toStdString();
    s.model.python = "/usr/bin/python3";
    s.model.args = args.toStdString();
    s.micro_batch = 32;
    s.eval_interval = 0;
    s.seeds = std::move(seeds);
    s.arms.resize(1);
    s.arms[0] = config::ArmSpec{};
    s.arms[0].name = "fp32";
    s.arms[0].precision = config::Precision::Fp32;
    if (arms > 1) {
        config::ArmSpec bf16;
        bf16.name = "bf16";
        bf16.precision = config::Precision::AmpBf16;
        s.arms.push_back(bf16);
    }
    return s;
}

/// The file in `ws`'s folder where slow_steps.py writes its process id.
inline QString pidFileOf(const test::Workspace& ws) {
    return ws.dir.filePath(QStringLiteral("pid"));
}

/// One fp32 run a seed of slow_steps.py (a step every 50 ms until it is stopped, its pid
/// in pidFileOf(ws)): runs that are still training when a test cancels them.
inline config::ExperimentSpec slowScriptSpec(const test::Workspace& ws,
                                             std::vector<uint64_t> seeds) {
    return scriptSpec(QStringLiteral(AMPBENCH_TEST_SCRIPTS "/slow_steps.py"),
                      "'" + pidFileOf(ws) + "'", std::move(seeds), 1200, 1);
}

/// An experiment of `runs` fp32 runs in `ws`'s database, planned as the training
/// worker plans one (its signals are then sent by hand), and the window's progress bar.
/// What the worker says while runs train side by side, and a run's most steps so far.
struct WorkerSignals {
    explicit WorkerSignals(TrainingWorker* w)
        : planned(w, &TrainingWorker::experimentPlanned),
          started(w, &TrainingWorker::runStarted),
          progress(w, &TrainingWorker::progress),
          runEnded(w, &TrainingWorker::runFinished),
          finished(w, &TrainingWorker::experimentFinished),
          failed(w, &TrainingWorker::failed) {}
    QSignalSpy planned, started, progress, runEnded, finished, failed;
    /// What the first failure said (empty when none), for QVERIFY2.
    QByteArray failure() const {
        return failed.isEmpty() ? QByteArray() : failed[0][0].toString().toUtf8();
    }
    qint64 stepsOf(qint64 id) const {
        qint64 most = 0;
        for (const auto& p : progress) {
            if (p[0].toLongLong() == id) {
                most = std::max(most, p[1].toLongLong());
            }
        }
        return most;
    }
};

struct PlannedByHand {
    int64_t experiment = 0;
    QList<qint64> ids;
    TrainingWorker* worker = nullptr;
    QProgressBar* bar = nullptr;
};

inline PlannedByHand planByHand(test::Workspace& ws, const std::string& name, int runs) {
    PlannedByHand p;
    auto db = store::Database::open(ws.dbPath().toStdString());
    p.experiment = db->createExperiment(name, "{}");
    for (int seed = 1; seed <= runs; ++seed) {
        p.ids.append(db->createRun(p.experiment, "fp32", 0, seed, "{}", 8));
    }
    p.bar = ws.window->findChild<QProgressBar*>("trainingProgress");
    p.worker = ws.window->training()->worker();
    Q_EMIT p.worker->experimentPlanned(p.experiment, p.ids);
    return p;
}

}  // namespace ampbench::ui::training_test
