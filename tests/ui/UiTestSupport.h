#pragma once
// Shared by the ui tests: a temporary workspace (settings file and database)
// and a tiny experiment that trains in seconds on the CPU.
#include <QTemporaryDir>
#include <memory>

#include "core/config/Presets.h"
#include "ui/MainWindow.h"
#include "ui/Settings.h"

namespace ampbench::ui::test {

/// The smoke preset cut to 8 micro-batches with one validation batch, on CPU.
inline config::ExperimentSpec tinySpec(int64_t steps = 8) {
    config::ExperimentSpec s = *config::preset("smoke");
    s.name = "ui-test";
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
