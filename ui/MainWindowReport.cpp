// The main window's report export: which experiment, the files, written off the
// GUI thread (MainWindow.cpp holds the rest of the window).
#include "ui/MainWindow.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
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
#include <cmath>
#include <exception>
#include <functional>
#include <limits>

#include "core/analysis/Format.h"
#include "core/config/SpecJson.h"
#include "core/store/Database.h"
#include "core/store/OutputFile.h"
#include "core/train/Experiment.h"
#include "ui/AboutDialog.h"
#include "ui/ColorScheme.h"
#include "ui/Settings.h"
#include "ui/capacity/CapacityView.h"
#include "ui/data/RunDataCache.h"
#include "ui/data/StoreSession.h"
#include "ui/data/StoreTask.h"
#include "ui/editor/ExperimentEditor.h"
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

qint64 MainWindow::experimentInView() const {
    // History shows one experiment's row selected; elsewhere the ticked runs'
    // experiment is what the plots and the verdict panel show.
    const qint64 selected = history_->selectedExperiment();
    if (tabs_->currentWidget() == history_ && selected != 0) {
        return selected;
    }
    const qint64 judged = compare_->verdictExperiment();
    return judged != 0 ? judged : selected;
}

QList<qint64> MainWindow::experimentsOnShow() const {
    QList<qint64> out;
    for (qint64 id : cache_->runs()) {
        if (const RunSeries* s = cache_->series(id)) {
            if (!out.contains(s->row.experiment_id)) {
                out.append(s->row.experiment_id);
            }
        }
    }
    return out;
}

qint64 MainWindow::experimentToExport() {
    const QList<qint64> shown = experimentsOnShow();
    if (tabs_->currentWidget() == history_ || shown.size() < 2) {
        return experimentInView();
    }
    if (chooseExperiment_) {
        return chooseExperiment_(shown);
    }
    QStringList items;
    for (qint64 id : shown) {
        QString name;
        try {
            if (const auto row = session_->db()->experiment(id)) {
                name = QString::fromStdString(row->name);
            }
        } catch (const std::exception&) {
        }
        items.append(tr("%1 – %2").arg(id).arg(name));
    }
    bool ok = false;
    const QString chosen = QInputDialog::getItem(
        this, tr("Export report"),
        tr("The ticked runs come from %1 experiments. Export the report of:").arg(shown.size()),
        items, 0, false, &ok);
    return ok ? shown.value(static_cast<int>(items.indexOf(chosen)), 0) : 0;
}

void MainWindow::exportReport() {
    const qint64 experiment = experimentToExport();
    if (!session_->isOpen() || experiment == 0) {
        QMessageBox::information(this, tr("Export report"),
                                 tr("Tick the runs of one experiment, or select an experiment in "
                                    "History, first."));
        return;
    }
    QString name;
    try {
        if (const auto row = session_->db()->experiment(experiment)) {
            name = QString::fromStdString(row->name);
        }
    } catch (const std::exception&) {
    }
    const QString html = QFileDialog::getSaveFileName(
        this,
        tr("Export the report of experiment %1 %2 (writes .html, .pdf, .csv and .json)")
            .arg(experiment)
            .arg(name.isEmpty() ? QString() : "\u201c" + name + "\u201d"),
        QStringLiteral("report-%1.html").arg(experiment), tr("HTML report (*.html)"));
    if (html.isEmpty()) {
        return;
    }
    const QString stem = html.endsWith(QStringLiteral(".html")) ? html.chopped(5) : html;
    QString message;
    if (!exportReportTo(experiment, stem, &message)) {
        QMessageBox::warning(this, tr("Export report"), message);
        return;
    }
    statusBar()->showMessage(tr("Writing the report of experiment %1\u2026").arg(experiment));
}

bool MainWindow::exportReportTo(qint64 experimentId, const QString& stem, QString* message) {
    if (!session_->isOpen()) {
        *message = tr("No database is open.");
        return false;
    }
    if (exporting_) {
        *message = tr("A report is being written; wait for it to finish.");
        return false;
    }
    auto request = std::make_shared<report::ReportRequest>();
    request->html = (stem + QStringLiteral(".html")).toStdString();
    request->pdf = (stem + QStringLiteral(".pdf")).toStdString();
    request->csv = (stem + QStringLiteral(".csv")).toStdString();
    request->json = (stem + QStringLiteral(".json")).toStdString();
    for (const std::string* path : {&request->html, &request->pdf, &request->csv, &request->json}) {
        const std::string problem = report::checkWritable(*path);
        if (!problem.empty()) {
            *message = QString::fromStdString(problem);
            return false;
        }
    }
    exporting_ = true;
    updateActions();
    auto finish = [this, stem](bool ok, const QString& text) {
        exporting_ = false;
        updateActions();
        if (ok) {
            statusBar()->showMessage(tr("Report written: %1").arg(text.section('\n', 0, 0)), 10000);
        } else {
            statusBar()->clearMessage();
        }
        if (messageBoxes_) {
            auto* box = new QMessageBox(ok ? QMessageBox::Information : QMessageBox::Warning,
                                        tr("Export report"), text, QMessageBox::Ok, this);
            box->setAttribute(Qt::WA_DeleteOnClose);
            if (ok) {
                QPushButton* open = box->addButton(tr("Open report"), QMessageBox::AcceptRole);
                connect(open, &QPushButton::clicked, this, [stem] {
                    QDesktopServices::openUrl(QUrl::fromLocalFile(stem + QStringLiteral(".html")));
                });
            }
            box->open();
        }
        Q_EMIT reportExported(ok, text);
    };
    using Content = std::optional<report::ReportContent>;
    const QString path = session_->path();
    // 1. Load and analyse on a worker; 2. draw the plots here (QCustomPlot);
    // 3. render HTML/PDF and write the four files on a worker.
    runStoreTask<Content>(
        this, path,
        [experimentId](const store::Database& db) {
            return report::prepareReport(db, experimentId);
        },
        [this, experimentId, path, request, finish](StoreTaskResult<Content>& loaded) {
            if (!loaded.value || !*loaded.value) {
                finish(false, loaded.error.isEmpty()
                                  ? tr("No experiment %1 in %2").arg(experimentId).arg(path)
                                  : loaded.error);
                return;
            }
            auto content = std::make_shared<report::ReportContent>(std::move(**loaded.value));
            content->plots = report::renderPlots(*content);
            runStoreTask<report::ReportResult>(
                this, path,
                [content, request](const store::Database& db) {
                    return report::writeReports(*content, db, *request);
                },
                [this, finish](StoreTaskResult<report::ReportResult>& written) {
                    if (!written.value) {
                        finish(false, written.error);
                        return;
                    }
                    const report::ReportResult& result = *written.value;
                    if (!result.ok()) {
                        finish(false, QString::fromStdString(result.error));
                        return;
                    }
                    QStringList lines;
                    for (const auto& w : result.written) {
                        lines << QString::fromStdString(w);
                    }
                    for (const auto& w : result.warnings) {
                        lines << tr("warning: %1").arg(QString::fromStdString(w));
                    }
                    finish(true, lines.join(QStringLiteral("\n")));
                });
        });
    return true;
}

}  // namespace ampbench::ui
