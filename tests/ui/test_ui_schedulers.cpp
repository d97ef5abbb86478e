// A cluster's scheduler in the hosts dialog, from each scheduler's declaration: Grid
// Engine offered beside Slurm with its own fields, kept in the settings and reaching
// `launch` as its flags; settings stored before the declarations (Slurm's keys) load as
// they were; a scheduler this desktop does not know is never taken for none; and a Grid
// Engine host's runs, launched from the desktop on a real one-host Grid Engine
// (tests/e2e/gridengine-fixture.sh), arrive row for row.
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QtTest>

#include "RemoteTestSupport.h"
#include "UiTestSupport.h"
#include "core/store/Database.h"
#include "ui/remote/HostsDialog.h"
#include "ui/remote/RemoteHost.h"
#include "ui/remote/RemoteRun.h"

using namespace ampbench;
using namespace ampbench::ui;

class SchedulersUiTest : public QObject {
    Q_OBJECT
    QTemporaryDir server_;

    /// Types `text` into a line of the dialog as a user would.
    static void type(QWidget* field, const QString& text) {
        auto* line = qobject_cast<QLineEdit*>(field);
        QVERIFY(line);
        line->setText(text);
        Q_EMIT line->textEdited(text);
    }

  private Q_SLOTS:
    // The dialog offers every declared scheduler; choosing Grid Engine shows its own
    // fields (named by their settings keys), which are kept and become its flags.
    void gridEngineIsOfferedWithTheFieldsItDeclares() {
        ui::test::Workspace ws;
        auto* dialog = ws.window->showHosts();
        dialog->addHost();
        type(dialog->labelEdit(), QStringLiteral("cluster"));
        type(dialog->destinationEdit(), QStringLiteral("me@login"));
        QComboBox* box = dialog->schedulerBox();
        QCOMPARE(box->count(), 3);  // none, Slurm, Grid Engine
        QCOMPARE(box->itemText(1), QStringLiteral("Slurm"));
        QCOMPARE(box->itemText(2), QStringLiteral("Grid Engine"));
        box->setCurrentIndex(box->findData(QStringLiteral("gridengine")));
        QWidget* queue = dialog->schedulerField(QStringLiteral("gridengine_queue"));
        QVERIFY(queue);
        QVERIFY(queue->isVisibleTo(dialog));
        QVERIFY(!dialog->schedulerField(QStringLiteral("slurm_partition"))->isVisibleTo(dialog));
        type(queue, QStringLiteral("test"));
        type(dialog->schedulerField(QStringLiteral("gridengine_time_limit")),
             QStringLiteral("two hours"));
        type(dialog->schedulerField(QStringLiteral("gridengine_qsub_options")),
             QStringLiteral("-P  lab"));
        dialog->accept();  // refused: the declaration's check names the value
        QVERIFY2(dialog->resultLabel()->text().contains(QStringLiteral("two hours")),
                 qPrintable(dialog->resultLabel()->text()));
        QVERIFY(ws.settings->remoteHosts().isEmpty());
        type(dialog->schedulerField(QStringLiteral("gridengine_time_limit")),
             QStringLiteral("600"));
        dialog->accept();
        const auto saved = ws.settings->remoteHosts();
        QCOMPARE(saved.size(), 1);
        QCOMPARE(saved.first().scheduler, QStringLiteral("gridengine"));
        QCOMPARE(launchArguments(saved.first()),
                 (QStringList{"launch", "--config-stdin", "--gridengine", "--queue", "test",
                              "--time-limit", "600", "--qsub-option=-P", "--qsub-option=lab"}));
        // Opened again, the host shows as it was saved.
        auto* again = ws.window->showHosts();
        QCOMPARE(again->schedulerBox()->currentData().toString(), QStringLiteral("gridengine"));
        QCOMPARE(qobject_cast<QLineEdit*>(again->schedulerField(QStringLiteral("gridengine_queue")))
                     ->text(),
                 QStringLiteral("test"));
        // Slurm chosen instead: its own fields, and Grid Engine's values are kept aside.
        again->schedulerBox()->setCurrentIndex(1);
        qobject_cast<QSpinBox*>(again->schedulerField(QStringLiteral("slurm_gpus_per_task")))
            ->setValue(2);
        again->accept();
        const RemoteHost h = ws.settings->remoteHosts().first();
        QCOMPARE(launchArguments(h),
                 (QStringList{"launch", "--config-stdin", "--slurm", "--gpus-per-task", "2"}));
        QCOMPARE(h.schedulerOptions.value(QStringLiteral("gridengine_queue")),
                 QStringLiteral("test"));
    }

    // Hosts saved before schedulers were declared (a Slurm switch and four slurm_* keys)
    // load as the same hosts, launching with the same flags.
    void hostsStoredBeforeTheDeclarationsLoadAsTheyWere() {
        QTemporaryDir dir;
        const QString ini = dir.filePath(QStringLiteral("settings.ini"));
        {
            QSettings old(ini, QSettings::IniFormat);
            old.beginWriteArray(QStringLiteral("remote/hosts"), 2);
            old.setArrayIndex(0);
            old.setValue(QStringLiteral("label"), QStringLiteral("cluster"));
            old.setValue(QStringLiteral("destination"), QStringLiteral("me@login"));
            old.setValue(QStringLiteral("port"), 0);
            old.setValue(QStringLiteral("cli"), QStringLiteral("ampbench-cli"));
            old.setValue(QStringLiteral("transport"), QStringLiteral("ssh"));
            old.setValue(QStringLiteral("slurm"), true);
            old.setValue(QStringLiteral("slurm_partition"), QStringLiteral("gpu"));
            old.setValue(QStringLiteral("slurm_gpus_per_task"), 2);
            old.setValue(QStringLiteral("slurm_time_limit"), QStringLiteral("2:00:00"));
            old.setValue(QStringLiteral("slurm_sbatch_options"), QStringLiteral("--qos=long"));
            old.setArrayIndex(1);
            old.setValue(QStringLiteral("label"), QStringLiteral("gpu"));
            old.setValue(QStringLiteral("destination"), QStringLiteral("me@gpu"));
            old.setValue(QStringLiteral("slurm"), false);
            old.setValue(QStringLiteral("slurm_partition"), QString());
            old.setValue(QStringLiteral("slurm_gpus_per_task"), 0);
            old.setValue(QStringLiteral("slurm_time_limit"), QString());
            old.setValue(QStringLiteral("slurm_sbatch_options"), QString());
            old.endArray();
        }
        Settings settings(ini);
        const auto hosts = settings.remoteHosts();
        QCOMPARE(hosts.size(), 2);
        QCOMPARE(hosts[0].scheduler, QStringLiteral("slurm"));
        QCOMPARE(launchArguments(hosts[0]),
                 (QStringList{"launch", "--config-stdin", "--slurm", "--partition", "gpu",
                              "--gpus-per-task", "2", "--time-limit", "2:00:00",
                              "--sbatch-option=--qos=long"}));
        QVERIFY(hosts[1].scheduler.isEmpty());
        QVERIFY(hosts[1].schedulerOptions.isEmpty());
        QCOMPARE(launchArguments(hosts[1]), (QStringList{"launch", "--config-stdin"}));
        // Saved again, they read back the same, and Slurm's switch is still there for a
        // desktop of before.
        settings.setRemoteHosts(hosts);
        QCOMPARE(settings.remoteHosts(), hosts);
        settings.sync();
        QSettings raw(ini, QSettings::IniFormat);
        QCOMPARE(raw.value(QStringLiteral("remote/hosts/1/slurm")).toBool(), true);
        QCOMPARE(raw.value(QStringLiteral("remote/hosts/1/slurm_partition")).toString(),
                 QStringLiteral("gpu"));
    }

    // A host of a scheduler this desktop does not know (a newer desktop's) shows by
    // name and cannot be saved so: it is never taken for a host that trains itself.
    void anUnknownSchedulerIsNeverTakenForNone() {
        RemoteHost h = ui::test::hostOf(server_);
        h.scheduler = QStringLiteral("pbs");
        QVERIFY2(hostProblem(h, {}).contains(QStringLiteral("pbs")),
                 qPrintable(hostProblem(h, {})));
        ui::test::Workspace ws;
        ws.settings->setRemoteHosts({h});
        QCOMPARE(ws.settings->remoteHosts().first().scheduler, QStringLiteral("pbs"));
        auto* dialog = ws.window->showHosts();
        QCOMPARE(dialog->schedulerBox()->currentData().toString(), QStringLiteral("pbs"));
        dialog->accept();
        QVERIFY(dialog->isVisible());
        QVERIFY2(dialog->resultLabel()->text().contains(QStringLiteral("pbs")),
                 qPrintable(dialog->resultLabel()->text()));
        QCOMPARE(ws.settings->remoteHosts().first().scheduler, QStringLiteral("pbs"));
        dialog->close();
    }

    // The desktop follows a Grid Engine host's runs as it does a GPU server's: launched
    // with the flags the declaration makes, as a task array on a real Grid Engine, every
    // run ends here finished, row for row with the login host's database.
    void aGridEngineHostsRunsArriveRowForRow() {
        QString cluster = qEnvironmentVariable("AMPBENCH_GRIDENGINE");
        const bool own = cluster.isEmpty();
        if (own) {
            cluster = server_.filePath(QStringLiteral("gridengine"));
            QProcess fixture;
            fixture.setProcessChannelMode(QProcess::MergedChannels);
            fixture.start(QStringLiteral(AMPBENCH_GRIDENGINE_FIXTURE),
                          {QStringLiteral("start"), cluster});
            QVERIFY(fixture.waitForFinished(180000));
            QVERIFY2(fixture.exitCode() == 0,
                     qPrintable(QStringLiteral("the one-host Grid Engine did not start:\n") +
                                QString::fromLocal8Bit(fixture.readAll())));
        }
        struct Stop {
            QString dir;
            bool own;
            ~Stop() {
                if (own) {
                    QProcess::execute(QStringLiteral(AMPBENCH_GRIDENGINE_FIXTURE),
                                      {QStringLiteral("stop"), dir});
                }
            }
        } stop{cluster, own};
        QFile env(cluster + QStringLiteral("/env"));
        QVERIFY2(env.open(QIODevice::ReadOnly), qPrintable(cluster + " holds no Grid Engine"));
        for (const QByteArray& line : env.readAll().split('\n')) {
            const int eq = line.indexOf('=');
            if (eq > 0) {
                qputenv(line.left(eq).constData(), line.mid(eq + 1));
            }
        }
        RemoteHost h = ui::test::hostOf(server_);
        h.scheduler = QStringLiteral("gridengine");
        setSchedulerOption(h, QStringLiteral("queue"), QStringLiteral("test"));
        h.database = server_.filePath(QStringLiteral("cluster.db"));
        RemoteRun run(QStringLiteral(AMPBENCH_FAKE_SSH), h,
                      server_.filePath(QStringLiteral("cluster-local.db")));
        run.setBackoffUnit(50);
        QSignalSpy finished(&run, &RemoteRun::finished);
        QSignalSpy failed(&run, &RemoteRun::failed);
        run.start(ui::test::remoteSpec(60));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), 180000);
        QVERIFY2(failed.isEmpty(),
                 failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        auto mine = store::Database::open(
            server_.filePath(QStringLiteral("cluster-local.db")).toStdString(),
            store::Database::Mode::ReadOnly);
        auto theirs =
            store::Database::open(h.database.toStdString(), store::Database::Mode::ReadOnly);
        const auto runs = theirs->runs(run.remoteExperiment());
        QVERIFY(!runs.empty());
        for (const auto& r : runs) {
            QVERIFY(r.status == run::RunStatus::Finished);
            const auto id = mine->runFromOrigin("gpu", r.id);
            QVERIFY(id);
            QVERIFY(mine->run(*id)->status == run::RunStatus::Finished);
            QVERIFY(ui::test::rowsOf(*mine, *id) == ui::test::rowsOf(*theirs, r.id));
        }
        QFile job(h.database + QStringLiteral(".jobs/") + QString::number(run.remoteExperiment()) +
                  QStringLiteral(".json"));
        QVERIFY(job.open(QIODevice::ReadOnly));
        const QByteArray text = job.readAll();
        QVERIFY(text.contains("\"scheduler\": \"gridengine\""));
        QVERIFY(text.contains("\"queue\": \"test\""));
    }
};

QTEST_MAIN(SchedulersUiTest)
#include "test_ui_schedulers.moc"
