// A cluster's scheduler in the hosts dialog, from each scheduler's declaration:
// settings stored before the declarations (Slurm's keys) load as they were, and a
// scheduler this desktop does not know is never taken for none.
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QtTest>

#include "RemoteTestSupport.h"
#include "UiTestSupport.h"
#include "ui/remote/HostsDialog.h"
#include "ui/remote/RemoteHost.h"

using namespace ampbench;
using namespace ampbench::ui;

class SchedulersUiTest : public QObject {
    Q_OBJECT
    QTemporaryDir server_;

  private Q_SLOTS:
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
};

QTEST_MAIN(SchedulersUiTest)
#include "test_ui_schedulers.moc"
