// The GUI's remote runs with a stand-in for ssh that runs the "server's" commands
// here: hosts in the settings, Test connection's messages, a run launched on a
// host and followed into the local database (runs tree, plots), a dropped link
// resumed, and Cancel through the transport.
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

#include "UiTestSupport.h"
#include "core/config/BuildInfo.h"
#include "core/store/Database.h"
#include "core/stream/RecordStream.h"
#include "ui/data/RunDataCache.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/remote/ConnectionTest.h"
#include "ui/remote/HostsDialog.h"
#include "ui/remote/RemoteRun.h"
#include "ui/runs/RunTreeModel.h"

using namespace ampbench;
using namespace ampbench::ui;
using Kind = ConnectionResult::Kind;

namespace {

/// A synthetic experiment that trains some seconds per run on one CPU thread.
config::ExperimentSpec remoteSpec(int64_t steps) {
    config::ExperimentSpec s = test::tinySpec(steps);
    s.name = "remote-ui";
    s.data.name = "synthetic-images";
    s.model.name = "mlp";
    s.model.width = 32;
    s.micro_batch = 32;
    s.eval_interval = 100;
    s.seeds = {1};
    return s;
}

ConnectionResult testConnection(const RemoteHost& host, const QString& ssh = AMPBENCH_FAKE_SSH) {
    ConnectionTest t;
    ConnectionResult result;
    bool done = false;
    QObject::connect(&t, &ConnectionTest::finished, [&](const ConnectionResult& r) {
        result = r;
        done = true;
    });
    t.start(ssh, host);
    [&] { QTRY_VERIFY_WITH_TIMEOUT(done, 60000); }();
    return result;
}

std::vector<std::string> rowsOf(const store::Database& db, int64_t run) {
    std::vector<std::string> rows;
    for (auto& r : db.recordsSince(run, 0)) {
        rows.push_back(stream::encode(stream::Record{stream::RowRecord{0, r}}));
    }
    return rows;
}

}  // namespace

class RemoteUiTest : public QObject {
    Q_OBJECT
    QTemporaryDir server_;
    RemoteHost host() const {
        RemoteHost h;
        h.label = QStringLiteral("gpu");
        h.destination = QStringLiteral("me@gpu");
        h.port = 2222;
        h.cli = QStringLiteral(AMPBENCH_CLI_PATH);
        h.database = server_.filePath(QStringLiteral("server.db"));
        return h;
    }

  private Q_SLOTS:
    void cleanup() {
        qunsetenv("FAKE_SSH_EXIT");
        qunsetenv("FAKE_SSH_STDERR");
    }

    void commandQuotesForTheRemoteShell() {
        RemoteHost h = host();
        h.database = QStringLiteral("~/runs of mine.db");
        const QStringList argv = remoteCommand(QStringLiteral("ssh -F cfg"), h,
                                               {QStringLiteral("cancel"), QStringLiteral("it's")});
        QCOMPARE(argv.first(), QStringLiteral("ssh"));
        QVERIFY(argv.contains(QStringLiteral("BatchMode=yes")));
        QCOMPARE(argv.at(argv.indexOf(QStringLiteral("-p")) + 1), QStringLiteral("2222"));
        QCOMPARE(argv.at(argv.size() - 2), QStringLiteral("me@gpu"));
        QCOMPARE(argv.at(argv.size() - 3), QStringLiteral("--"));
        QCOMPARE(argv.last(), QStringLiteral(AMPBENCH_CLI_PATH) +
                                  QStringLiteral(" --db ~/'runs of mine.db' cancel 'it'\\''s'"));
        QCOMPARE(RemoteRun::backoffMs(1), 1000);
        QCOMPARE(RemoteRun::backoffMs(3), 4000);
        QCOMPARE(RemoteRun::backoffMs(6), 30000);
        QCOMPARE(RemoteRun::backoffMs(40), 30000);
    }

    void hostsAreKeptInSettings() {
        test::Workspace ws;
        QVERIFY(ws.settings->remoteHosts().isEmpty());
        auto* dialog = ws.window->showHosts();
        dialog->addHost();
        dialog->destinationEdit()->setText(QStringLiteral("me@gpu"));
        dialog->destinationEdit()->textEdited(QStringLiteral("me@gpu"));
        dialog->accept();  // no label: refused, says why
        QVERIFY(dialog->resultLabel()->text().contains(QStringLiteral("label")));
        QVERIFY(ws.settings->remoteHosts().isEmpty());
        dialog->labelEdit()->setText(QStringLiteral("gpu"));
        dialog->labelEdit()->textEdited(QStringLiteral("gpu"));
        dialog->dataEdit()->setText(QStringLiteral("/data/fmnist"));
        dialog->dataEdit()->textEdited(QStringLiteral("/data/fmnist"));
        dialog->accept();
        const auto saved = ws.settings->remoteHosts();
        QCOMPARE(saved.size(), 1);
        QCOMPARE(saved.first().destination, QStringLiteral("me@gpu"));
        QCOMPARE(saved.first().dataDir, QStringLiteral("/data/fmnist"));
        QCOMPARE(saved.first().cli, QStringLiteral("ampbench-cli"));
        QCOMPARE(ws.window->editor()->runOnBox()->count(), 2);  // this machine, gpu
        ws.window->editor()->setRunOn(QStringLiteral("gpu"));
        QCOMPARE(ws.settings->runOn(), QStringLiteral("gpu"));
    }

    // A host beginning with "-" is an ssh option (-oProxyCommand=... runs a program
    // on this machine): the dialog refuses it by name, Test connection does not run
    // it, and every ssh command ends ssh's options with "--" before the host.
    void aHostThatIsAnSshOptionIsRefusedAndNeverReachesSshAsOne() {
        const QString marker = server_.filePath(QStringLiteral("proxy-ran"));
        const QString script = server_.filePath(QStringLiteral("proxy.sh"));
        {
            QFile f(script);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QStringLiteral("#!/bin/sh\ntouch '%1'\n").arg(marker).toUtf8());
        }
        QFile::setPermissions(script, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        const QString evil = QStringLiteral("-oProxyCommand=") + script;  // no space to refuse
        RemoteHost h = host();
        h.destination = evil;
        QVERIFY2(hostProblem(h, {}).contains(QStringLiteral("begins with")),
                 qPrintable(hostProblem(h, {})));
        QVERIFY(destinationProblem(QStringLiteral(" -p2222")).contains(QStringLiteral("begins")));
        QVERIFY(destinationProblem(QStringLiteral("me@gpu")).isEmpty());

        test::Workspace ws;
        auto* dialog = ws.window->showHosts();
        dialog->addHost();
        dialog->labelEdit()->setText(QStringLiteral("gpu"));
        dialog->labelEdit()->textEdited(QStringLiteral("gpu"));
        dialog->destinationEdit()->setText(evil);
        dialog->destinationEdit()->textEdited(evil);
        dialog->testConnection();
        QVERIFY(dialog->resultLabel()->text().contains(QStringLiteral("begins with")));
        dialog->accept();
        QVERIFY(dialog->resultLabel()->text().contains(QStringLiteral("begins with")));
        QVERIFY(ws.settings->remoteHosts().isEmpty());

        // A host saved before this check still reaches ssh only as a host.
        const QStringList argv = remoteCommand(QStringLiteral("ssh"), h, {QStringLiteral("list")});
        QCOMPARE(argv.at(argv.size() - 3), QStringLiteral("--"));
        QCOMPARE(argv.at(argv.size() - 2), evil);
        if (!QStandardPaths::findExecutable(QStringLiteral("ssh")).isEmpty()) {
            QProcess ssh;
            ssh.start(argv.first(), argv.mid(1));
            QVERIFY(ssh.waitForFinished(30000));
            QVERIFY(ssh.exitCode() != 0);
            QVERIFY2(!QFile::exists(marker), "ssh ran the ProxyCommand of the host field");
        }
        QVERIFY(!QFile::exists(marker));
    }

    void connectionTestNamesEachFailure() {
        qputenv("FAKE_SSH_EXIT", "255");
        qputenv("FAKE_SSH_STDERR", "ssh: connect to host x port 22: Connection refused");
        ConnectionResult r = testConnection(host());
        QVERIFY(r.kind == Kind::Unreachable);
        QVERIFY2(r.message.contains(QStringLiteral("Cannot reach gpu")), qPrintable(r.message));
        QVERIFY(r.message.contains(QStringLiteral("Connection refused")));

        qputenv("FAKE_SSH_STDERR", "me@gpu: Permission denied (publickey).");
        r = testConnection(host());
        QVERIFY(r.kind == Kind::AuthRefused);
        QVERIFY2(r.message.contains(QStringLiteral("refused the login")), qPrintable(r.message));
        cleanup();

        RemoteHost missing = host();
        missing.cli = server_.filePath(QStringLiteral("bin/ampbench-cli"));
        r = testConnection(missing);
        QVERIFY(r.kind == Kind::CliMissing);
        QVERIFY2(r.message.contains(QStringLiteral("is not at")), qPrintable(r.message));

        r = testConnection(host(), server_.filePath(QStringLiteral("no-ssh")));
        QVERIFY(r.kind == Kind::NoTransport);

        const QString ours = QString::fromUtf8(config::buildVersion());
        r = classifyVersionCall(host(), true, 0, QStringLiteral("ampbench-cli 9.9.0\n"), {}, ours);
        QVERIFY(r.kind == Kind::Incompatible);
        QVERIFY(r.message.contains(QStringLiteral("9.9.0")));
        QVERIFY(r.message.contains(ours));

        RemoteHost withData = host();
        withData.dataDir = server_.filePath(QStringLiteral("absent"));
        r = testConnection(withData);
        QVERIFY(r.kind == Kind::DataMissing);
        QVERIFY2(r.message.contains(QStringLiteral("does not exist")), qPrintable(r.message));

        QDir(server_.path()).mkpath(QStringLiteral("data"));
        QFile(server_.filePath(QStringLiteral("data/train.npz"))).open(QIODevice::WriteOnly);
        withData.dataDir = server_.filePath(QStringLiteral("data"));
        r = testConnection(withData);
        QVERIFY2(r.ok(), qPrintable(r.message));
        QCOMPARE(r.version, ours);
        QVERIFY(!r.devices.isEmpty());
        QVERIFY2(r.message.contains(QStringLiteral("train.npz")), qPrintable(r.message));
    }

    void dialogShowsTheTestResult() {
        test::Workspace ws;
        ws.settings->setSshCommand(QStringLiteral(AMPBENCH_FAKE_SSH));
        ws.settings->setRemoteHosts({host()});
        qputenv("FAKE_SSH_EXIT", "255");
        qputenv("FAKE_SSH_STDERR", "ssh: connect to host x port 22: Connection refused");
        auto* dialog = ws.window->showHosts();
        QSignalSpy tested(dialog, &HostsDialog::tested);
        dialog->testButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(tested.count(), 1, 30000);
        QVERIFY2(dialog->resultLabel()->text().contains(QStringLiteral("Connection refused")),
                 qPrintable(dialog->resultLabel()->text()));
        QVERIFY(dialog->resultLabel()->text().contains(QStringLiteral("Not ready")));
    }

    void remoteRunIsPlottedAndSurvivesADrop() {
        test::Workspace ws;
        QVERIFY(ws.open());
        ws.settings->setSshCommand(QStringLiteral(AMPBENCH_FAKE_SSH));
        ws.settings->setRemoteHosts({host()});
        ws.window->editor()->setHosts({QStringLiteral("gpu")}, QStringLiteral("gpu"));
        ws.window->editor()->setSpec(remoteSpec(600));
        QTRY_VERIFY(ws.window->runAction()->isEnabled());
        QVERIFY(ws.window->runExperiment());
        RemoteRun* remote = ws.window->remoteRun();
        QVERIFY(remote);
        remote->setBackoffUnit(50);
        QSignalSpy reconnecting(remote, &RemoteRun::reconnecting);
        QSignalSpy finished(remote, &RemoteRun::finished);
        QTRY_VERIFY_WITH_TIMEOUT(remote->rowsAdded() > 20, 60000);
        QVERIFY(ws.window->cancelAction()->isEnabled());
        QVERIFY(!ws.window->runAction()->isEnabled());
        // The runs tree holds the host's runs, ticked for the plots.
        const qint64 local = remote->localExperiment();
        QVERIFY(local > 0);
        QTRY_VERIFY_WITH_TIMEOUT(!ws.window->runModel()->runsOfExperiment(local).isEmpty(), 5000);
        QTRY_VERIFY_WITH_TIMEOUT(!ws.window->runModel()->checkedRuns().isEmpty(), 5000);
        // ... and says where they train.
        QVERIFY2(
            ws.window->runModel()->experimentItem(local)->text().endsWith(QStringLiteral("on gpu")),
            qPrintable(ws.window->runModel()->experimentItem(local)->text()));
        const qint64 firstRun = ws.window->runModel()->checkedRuns().first();
        QVERIFY(ws.window->runModel()->runItem(firstRun)->toolTip().contains(
            QStringLiteral("trained on gpu")));
        QTRY_VERIFY_WITH_TIMEOUT(ws.window->cache()->series(firstRun) &&
                                     !ws.window->cache()->series(firstRun)->steps.empty(),
                                 5000);
        // The link drops mid-run: the tail dies; the run resumes after the last row here.
        QVERIFY(remote->tailProcess());
        remote->tailProcess()->kill();
        QTRY_COMPARE_WITH_TIMEOUT(reconnecting.count(), 1, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(finished.first().first().toBool(), false);
        QVERIFY(remote->state() == RemoteRun::State::Done);
        QVERIFY(ws.window->runAction()->isEnabled());

        auto mine =
            store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        auto theirs =
            store::Database::open(host().database.toStdString(), store::Database::Mode::ReadOnly);
        const auto runs = theirs->runs(remote->remoteExperiment());
        QCOMPARE(runs.size(), size_t(3));
        for (const auto& r : runs) {
            const auto id = mine->runFromOrigin("gpu", r.id);
            QVERIFY(id);
            QVERIFY(mine->run(*id)->status == run::RunStatus::Finished);
            QVERIFY(rowsOf(*mine, *id) == rowsOf(*theirs, r.id));
        }
    }

    void cancelReachesTheHost() {
        test::Workspace ws;
        QVERIFY(ws.open());
        ws.settings->setSshCommand(QStringLiteral(AMPBENCH_FAKE_SSH));
        ws.settings->setRemoteHosts({host()});
        ws.window->editor()->setHosts({QStringLiteral("gpu")}, QStringLiteral("gpu"));
        ws.window->editor()->setSpec(remoteSpec(100000));
        QTRY_VERIFY(ws.window->runAction()->isEnabled());
        QVERIFY(ws.window->runExperiment());
        RemoteRun* remote = ws.window->remoteRun();
        QSignalSpy finished(remote, &RemoteRun::finished);
        QTRY_VERIFY_WITH_TIMEOUT(remote->rowsAdded() > 20, 60000);
        ws.window->cancelRun();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QCOMPARE(finished.first().first().toBool(), true);
        auto mine =
            store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        const auto runs = mine->runs(remote->localExperiment());
        QCOMPARE(runs.size(), size_t(3));
        for (const auto& r : runs) {
            QVERIFY(r.status == run::RunStatus::Cancelled);
        }
        QVERIFY(mine->stepCount(runs.front().id) > 20);
    }

    void launchFailureIsShown() {
        test::Workspace ws;
        QVERIFY(ws.open());
        ws.settings->setSshCommand(QStringLiteral(AMPBENCH_FAKE_SSH));
        RemoteHost h = host();
        h.dataDir = server_.filePath(QStringLiteral("absent"));
        ws.settings->setRemoteHosts({h});
        ws.window->editor()->setHosts({QStringLiteral("gpu")}, QStringLiteral("gpu"));
        config::ExperimentSpec spec = remoteSpec(100);
        spec.data.name = "fashion-mnist";  // looked for in the host's (absent) data folder
        ws.window->editor()->setSpec(spec);
        QSignalSpy errors(ws.window.get(), &MainWindow::errorShown);
        QTRY_VERIFY(ws.window->runAction()->isEnabled());
        QVERIFY(ws.window->runExperiment());
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, 60000);
        const QString message = errors.first().at(1).toString();
        QVERIFY2(message.contains(QStringLiteral("did not start the experiment")),
                 qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("absent")), qPrintable(message));
        QVERIFY(ws.window->remoteRun()->state() == RemoteRun::State::Failed);
        QVERIFY(ws.window->runAction()->isEnabled());
    }
};

QTEST_MAIN(RemoteUiTest)
#include "test_ui_remote.moc"
