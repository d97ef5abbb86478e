// The desktop's local transport: the same launch, tail --follow and cancel as over
// ssh, run on this machine with no ssh at all; a host ticked "This machine" run from
// the window through the same runner; a missing CLI named as such.
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "RemoteTestSupport.h"
#include "core/config/BuildInfo.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/remote/HostsDialog.h"
#include "ui/remote/RemoteRun.h"
#include "ui/remote/Transport.h"

using namespace ampbench;
using namespace ampbench::ui;
using ui::test::remoteSpec;
using ui::test::rowsOf;
using ui::test::testConnection;

class TransportUiTest : public QObject {
    Q_OBJECT
    QTemporaryDir server_;
    RemoteHost host() const { return ui::test::hostOf(server_); }

  private Q_SLOTS:
    // The runner is one path whatever the transport: the same launch, tail --follow
    // and cancel through the local transport, with no ssh on PATH at all. A run that
    // finishes arrives row for row; a cancelled one ends cancelled with its rows.
    void theLocalTransportRunsTheSameLaunchTailAndCancelWithoutSsh() {
        const ui::test::NoSshOnPath noSsh(server_);
        QVERIFY(noSsh.holds());
        RemoteHost h = host();
        h.label = QStringLiteral("here");
        // What ssh would take for an option means nothing to the local transport.
        h.destination = QStringLiteral("-oProxyCommand=false");
        h.database = server_.filePath(QStringLiteral("local transport's \"db\".db"));
        // A program's own arguments: no quoting, nothing read by a shell.
        QCOMPARE(makeLocalTransport(h)->command({QStringLiteral("cancel"), QStringLiteral("it's")}),
                 QStringList({h.cli, QStringLiteral("--db"), h.database, QStringLiteral("cancel"),
                              QStringLiteral("it's")}));
        QVERIFY(makeLocalTransport(h)->problem().isEmpty());
        const QString localDb = server_.filePath(QStringLiteral("local-transport-mine.db"));
        auto mine = [&] {
            return store::Database::open(localDb.toStdString(), store::Database::Mode::ReadOnly);
        };
        auto theirs = [&] {
            return store::Database::open(h.database.toStdString(), store::Database::Mode::ReadOnly);
        };
        {
            RemoteRun run(makeLocalTransport(h), h, localDb);
            QSignalSpy launched(&run, &RemoteRun::launched);
            QSignalSpy finished(&run, &RemoteRun::finished);
            QSignalSpy failed(&run, &RemoteRun::failed);
            run.start(remoteSpec(60));
            QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), 60000);
            QVERIFY2(failed.isEmpty(),
                     failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
            QCOMPARE(launched.count(), 1);
            QCOMPARE(finished.first().first().toBool(), false);
            const auto runs = theirs()->runs(run.remoteExperiment());
            QCOMPARE(runs.size(), size_t(3));
            for (const auto& r : runs) {
                QVERIFY(r.status == run::RunStatus::Finished);
                const auto id = mine()->runFromOrigin("here", r.id);
                QVERIFY(id);
                QVERIFY(mine()->run(*id)->status == run::RunStatus::Finished);
                QVERIFY(rowsOf(*mine(), *id) == rowsOf(*theirs(), r.id));
            }
        }
        {
            RemoteRun run(makeLocalTransport(h), h, localDb);
            QSignalSpy finished(&run, &RemoteRun::finished);
            QSignalSpy failed(&run, &RemoteRun::failed);
            run.start(remoteSpec(1000000));
            QTRY_VERIFY_WITH_TIMEOUT(run.rowsAdded() > 20 || !failed.isEmpty(), 60000);
            QVERIFY2(failed.isEmpty(),
                     failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
            run.cancel();
            QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), 60000);
            QVERIFY2(failed.isEmpty(),
                     failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
            QCOMPARE(finished.first().first().toBool(), true);
            const auto runs = theirs()->runs(run.remoteExperiment());
            QCOMPARE(runs.size(), size_t(3));
            for (const auto& r : runs) {
                QVERIFY(r.status == run::RunStatus::Cancelled);
                const auto id = mine()->runFromOrigin("here", r.id);
                QVERIFY(id);
                QVERIFY(mine()->run(*id)->status == run::RunStatus::Cancelled);
                QVERIFY(rowsOf(*mine(), *id) == rowsOf(*theirs(), r.id));
            }
            QVERIFY(mine()->stepCount(*mine()->runFromOrigin("here", runs[0].id)) > 20);
        }
    }

    // A host reached "locally" is kept in the settings and Run on it goes through the
    // window's one runner: launched detached here, followed into the open database,
    // with no ssh on PATH.
    void aLocalHostRunsFromTheWindowThroughTheSameRunner() {
        const ui::test::NoSshOnPath noSsh(server_);
        QVERIFY(noSsh.holds());
        RemoteHost h = host();
        h.label = QStringLiteral("detached");
        h.transport = QStringLiteral("local");
        h.destination.clear();  // a local host needs none
        h.database = server_.filePath(QStringLiteral("detached.db"));
        QCOMPARE(hostProblem(h, {}), QString());
        // Test connection asks the same CLI here: its version and this machine's devices.
        const ConnectionResult tested = testConnection(h, QStringLiteral("ssh"));
        QVERIFY2(tested.ok(), qPrintable(tested.message));
        QCOMPARE(tested.version, QString::fromUtf8(config::buildVersion()));
        QVERIFY(!tested.devices.isEmpty());
        ui::test::Workspace ws;
        QVERIFY(ws.open());
        ws.settings->setRemoteHosts({h});
        QCOMPARE(ws.settings->remoteHosts().size(), 1);
        QVERIFY(ws.settings->remoteHosts().first() == h);
        ws.window->editor()->setHosts({QStringLiteral("detached")}, QStringLiteral("detached"));
        ws.window->editor()->setSpec(remoteSpec(60));
        QTRY_VERIFY(ws.window->runAction()->isEnabled());
        QVERIFY(ws.window->runExperiment());
        RemoteRun* remote = ws.window->remoteRun();
        QVERIFY(remote);
        QSignalSpy finished(remote, &RemoteRun::finished);
        QSignalSpy failed(remote, &RemoteRun::failed);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), 60000);
        QVERIFY2(failed.isEmpty(),
                 failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        auto mine =
            store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        auto theirs =
            store::Database::open(h.database.toStdString(), store::Database::Mode::ReadOnly);
        const auto runs = mine->runs(remote->localExperiment());
        QCOMPARE(runs.size(), size_t(3));
        for (const auto& r : runs) {
            QVERIFY(r.status == run::RunStatus::Finished);
            QVERIFY(rowsOf(*mine, r.id) == rowsOf(*theirs, r.origin_run_id));
        }
        // A transport this build does not know is named, and nothing runs.
        RemoteHost odd = h;
        odd.transport = QStringLiteral("carrier-pigeon");
        QVERIFY(hostProblem(odd, {}).contains(QStringLiteral("carrier-pigeon")));
        RemoteRun none(QStringLiteral("ssh"), odd, ws.dbPath());
        QSignalSpy refused(&none, &RemoteRun::failed);
        none.start(remoteSpec(10));
        QCOMPARE(refused.count(), 1);
        QVERIFY(refused.first().first().toString().contains(QStringLiteral("carrier-pigeon")));
    }

    // A CLI that is not there is named as such, not as a missing OpenSSH.
    // "This machine" with the default CLI runs the ampbench-cli beside the workbench's
    // own program (the one it was built or installed with), not only what PATH holds;
    // the Hosts dialog says where it is found and its SSH command box explains itself.
    void aLocalHostsDefaultCliIsTheOneBesideTheWorkbench() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString name = QStringLiteral("ampbench-cli");
        QCOMPARE(localCliProgram(QString(), dir.path()), name);  // none there: PATH's
        const QString beside = dir.filePath(name);
        QFile file(beside);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("#!/bin/sh\n");
        file.close();
        QCOMPARE(localCliProgram(name, dir.path()), name);  // not a program
        QVERIFY(file.setPermissions(file.permissions() | QFileDevice::ExeOwner));
        QCOMPARE(localCliProgram(QString(), dir.path()), beside);
        QCOMPARE(localCliProgram(QStringLiteral(" ampbench-cli "), dir.path()), beside);
        QCOMPARE(localCliProgram(QStringLiteral("/opt/ab/ampbench-cli"), dir.path()),
                 QStringLiteral("/opt/ab/ampbench-cli"));  // a path is taken as given
        RemoteHost h;
        h.transport = QStringLiteral("local");
        QCOMPARE(makeLocalTransport(h)->command({QStringLiteral("--version")}, false).first(),
                 localCliProgram(h.cli, QCoreApplication::applicationDirPath()));

        ui::test::Workspace ws;
        h.label = QStringLiteral("here");
        ws.settings->setRemoteHosts({h});
        auto* dialog = ws.window->showHosts();
        auto* cli = dialog->findChild<QLineEdit*>(QStringLiteral("cli"));
        QVERIFY(cli);
        QVERIFY(cli->text().isEmpty());  // the default, shown by the hint
        QVERIFY2(cli->placeholderText().contains(QStringLiteral("ampbench-cli")),
                 qPrintable(cli->placeholderText()));
        QVERIFY2(!cli->placeholderText().contains(QStringLiteral("server")),
                 qPrintable(cli->placeholderText()));
        auto* ssh = dialog->findChild<QLineEdit*>(QStringLiteral("sshCommand"));
        QVERIFY(ssh);
        QCOMPARE(ssh->focusPolicy(), Qt::ClickFocus);  // never where the focus lands
        bool explained = false;
        for (auto* label : dialog->findChildren<QLabel*>()) {
            explained = explained || label->text().contains(QStringLiteral("every SSH host"));
        }
        QVERIFY(explained);
        dialog->close();
    }

    void theLocalTransportNamesAMissingCli() {
        RemoteHost h = host();
        h.cli = server_.filePath(QStringLiteral("not installed/ampbench-cli"));
        RemoteRun run(makeLocalTransport(h), h,
                      server_.filePath(QStringLiteral("local-missing-cli.db")));
        QSignalSpy failed(&run, &RemoteRun::failed);
        run.start(remoteSpec(10));
        QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), kUiPatienceMs);
        const QString why = failed.first().first().toString();
        QVERIFY2(why.contains(QStringLiteral("did not start on this machine")), qPrintable(why));
        QVERIFY2(why.contains(h.cli), qPrintable(why));
        QVERIFY2(!why.contains(QStringLiteral("OpenSSH")), qPrintable(why));
    }
};

QTEST_MAIN(TransportUiTest)
#include "test_ui_transport.moc"
