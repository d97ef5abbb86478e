#pragma once
// Shared by the ui tests: a temporary workspace (settings file and database)
// and a tiny experiment that trains in seconds on the CPU.
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "core/config/Presets.h"
#include "ui/MainWindow.h"
#include "ui/Settings.h"

// QTRY_VERIFY, QTRY_VERIFY2 and QTRY_COMPARE wait for their condition. Qt's 5 s fits
// a quiet machine, not two cores shared with builds and other tests: here they wait up
// to a minute, which only a condition that never comes reaches (it returns as soon
// as the condition holds).
constexpr int kUiPatienceMs = 60000;
#undef QTRY_VERIFY
#undef QTRY_VERIFY2
#undef QTRY_COMPARE
#define QTRY_VERIFY(expr) QTRY_VERIFY_WITH_TIMEOUT(expr, kUiPatienceMs)
#define QTRY_VERIFY2(expr, message) QTRY_VERIFY2_WITH_TIMEOUT(expr, message, kUiPatienceMs)
#define QTRY_COMPARE(expr, expected) QTRY_COMPARE_WITH_TIMEOUT(expr, expected, kUiPatienceMs)

namespace ampbench::ui::test {

/// The smoke preset cut to 8 micro-batches of 64 with one seed (one run per arm, none
/// fused) and one validation batch, on CPU.
inline config::ExperimentSpec tinySpec(int64_t steps = 8) {
    config::ExperimentSpec s = *config::preset("smoke");
    s.name = "ui-test";
    s.micro_batch = 64;
    s.seeds = {1};
    s.fuse_seeds = config::Switch::Auto;
    s.micro_steps = steps;
    s.warmup_steps = 1;  // the accumulation-4 arm makes only steps / 4 optimizer steps
    s.eval_interval = 4;
    s.eval_batches = 1;
    s.device = config::DeviceKind::Cpu;
    s.cpu_threads = 1;
    return s;
}

/// A window over a fresh database in a temporary folder, with settings kept
/// there too and errors reported by signal instead of message boxes.
struct Workspace {
    QTemporaryDir dir;
    std::unique_ptr<Settings> settings;
    std::unique_ptr<MainWindow> window;

    Workspace() {
        settings = std::make_unique<Settings>(dir.filePath("settings.ini"));
        window = std::make_unique<MainWindow>(*settings);
        window->setMessageBoxesEnabled(false);
    }
    QString dbPath() const { return dir.filePath("runs.db"); }
    bool open() { return window->openDatabase(dbPath()); }
};

}  // namespace ampbench::ui::test
