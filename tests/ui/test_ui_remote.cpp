// The GUI's remote runs with a stand-in for ssh that runs the "server's" commands
// here: hosts in the settings, Test connection's messages, a run launched on a
// host and followed into the local database (runs tree, plots), a dropped link
// resumed, and Cancel through the transport. Then the same through a real OpenSSH
// server (tests/e2e/RealSsh.h): Test connection, a run whose connection is killed
// mid-stream, Cancel, a refused key, a missing CLI; and host strings that would be
// ssh options or shell syntax, refused before anything runs. The local transport's
// tests are in test_ui_transport.cpp.
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>
#include <memory>

#include "RemoteTestSupport.h"
#include "UiTestSupport.h"
#include "core/config/BuildInfo.h"
#include "core/store/Database.h"
#include "core/stream/RecordStream.h"
#include "tests/e2e/Hold.h"
#include "tests/e2e/RealSsh.h"
#include "ui/data/RunDataCache.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/remote/ConnectionTest.h"
#include "ui/remote/HostsDialog.h"
#include "ui/remote/RemoteRun.h"
#include "ui/remote/Transport.h"
#include "ui/runs/RunTreeModel.h"

using namespace ampbench;
using namespace ampbench::ui;
using Kind = ConnectionResult::Kind;

using ui::test::remoteSpec;
using ui::test::rowsOf;

namespace {

ConnectionResult testConnection(const RemoteHost& host, const QString& ssh = AMPBENCH_FAKE_SSH) {
    return ui::test::testConnection(host, ssh);
}

}  // namespace

class RemoteUiTest : public QObject {
    Q_OBJECT
    QTemporaryDir server_;
    std::unique_ptr<ampbench::test::RealSshd> sshd_;
    /// The real server, started by the first test that needs it.
    ampbench::test::RealSshd& sshd() {
        if (!sshd_) {
            sshd_ = std::make_unique<ampbench::test::RealSshd>(
                server_.filePath(QStringLiteral("sshd")).toStdString());
        }
        return *sshd_;
    }
    /// A host on the real server: its port, this user, the CLI of this build.
    RemoteHost realHost() {
        RemoteHost h = host();
        h.destination = QString::fromStdString(sshd().destination());
        h.port = sshd().port();
        return h;
    }
    QString realSsh(bool refusedKey = false) {
        return QString::fromStdString(sshd().sshProgram(refusedKey));
    }
    RemoteHost host() const { return ui::test::hostOf(server_); }

    /// Waits until `remote`'s job on `h` has stored more than 20 steps of its first run,
    /// then holds it still (SIGSTOP) until the returned hold is released. Null when the
    /// job could not be found, or `failed` (if given) saw the run fail.
    static std::unique_ptr<ampbench::test::Hold> holdOnceTraining(RemoteRun* remote,
                                                                  const RemoteHost& h,
                                                                  QSignalSpy* failed = nullptr) {
        const auto gaveUp = [&] { return failed && !failed->isEmpty(); };
        if (!QTest::qWaitFor([&] { return remote->remoteExperiment() > 0 || gaveUp(); },
                             kUiPatienceMs) ||
            gaveUp()) {
            return nullptr;
        }
        const qint64 experiment = remote->remoteExperiment();
        const auto job = static_cast<pid_t>(ui::test::jobPid(h, experiment));
        if (job <= 0) {
            return nullptr;
        }
        const auto ended = [&] {
            const char state = ampbench::test::processState(job);
            return state == 'Z' || state == '?';
        };
        (void)QTest::qWaitFor(
            [&] { return ui::test::firstRunSteps(h, experiment) > 20 || ended() || gaveUp(); },
            kUiPatienceMs);
        return std::make_unique<ampbench::test::Hold>(job);
    }

    /// Trains the long remote spec on `h` through `ssh`, cancels it once rows have come,
    /// and checks every run ended cancelled here with the rows the host holds.
    void cancelEndsTheRunsCancelledWithTheirRows(const QString& ssh, const RemoteHost& h) {
        ui::test::Workspace ws;
        QVERIFY(ws.open());
        ws.settings->setSshCommand(ssh);
        ws.settings->setRemoteHosts({h});
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
        auto theirs =
            store::Database::open(h.database.toStdString(), store::Database::Mode::ReadOnly);
        const auto runs = mine->runs(remote->localExperiment());
        QCOMPARE(runs.size(), size_t(3));
        for (const auto& r : runs) {
            QVERIFY(r.status == run::RunStatus::Cancelled);
            QCOMPARE(mine->stepCount(r.id), theirs->stepCount(r.origin_run_id));
        }
        QVERIFY(mine->stepCount(runs.front().id) > 20);
    }

  private Q_SLOTS:
    void cleanup() {
        qunsetenv("FAKE_SSH_EXIT");
        qunsetenv("FAKE_SSH_STDERR");
    }

    void cleanupTestCase() {
        if (sshd_) {
            const pid_t pid = sshd_->pid();
            QVERIFY(sshd_->stop());
            QVERIFY2(pid <= 0 || ::kill(pid, 0) != 0, "sshd still runs");
            QCOMPARE(QString::fromStdString(sshd_->running()), QString());
            sshd_.reset();
        }
    }

    void realServerConnectionTestNamesSuccessAndEachFailure() {
        QVERIFY2(sshd().ok(), sshd().why().c_str());
        ConnectionResult r = testConnection(realHost(), realSsh());
        QVERIFY2(r.ok(), qPrintable(r.message));
        QCOMPARE(r.version, QString::fromUtf8(config::buildVersion()));
        QVERIFY(!r.devices.isEmpty());
        QVERIFY2(r.message.contains(QStringLiteral("Connected to gpu")), qPrintable(r.message));

        // A key the server does not hold: ssh exits 255 "Permission denied".
        r = testConnection(realHost(), realSsh(true));
        QVERIFY2(r.kind == Kind::AuthRefused, qPrintable(r.message));
        QVERIFY2(r.message.contains(QStringLiteral("refused the login")), qPrintable(r.message));
        QVERIFY2(r.message.contains(QStringLiteral("Permission denied")), qPrintable(r.message));

        RemoteHost missing = realHost();
        missing.cli = server_.filePath(QStringLiteral("not installed/ampbench-cli"));
        r = testConnection(missing, realSsh());
        QVERIFY2(r.kind == Kind::CliMissing, qPrintable(r.message));
        QVERIFY2(r.message.contains(QStringLiteral("is not at")), qPrintable(r.message));
        QVERIFY2(r.message.contains(missing.cli), qPrintable(r.message));

        // Nothing listens on the port any more: unreachable, in ssh's words.
        const std::string dir = server_.filePath(QStringLiteral("closed")).toStdString();
        RemoteHost closed = realHost();
        {
            ampbench::test::RealSshd gone(dir);
            QVERIFY2(gone.ok(), gone.why().c_str());
            closed.port = gone.port();
        }
        r = testConnection(closed, realSsh());
        QVERIFY2(r.kind == Kind::Unreachable, qPrintable(r.message));
        QVERIFY2(r.message.contains(QStringLiteral("Cannot reach gpu")), qPrintable(r.message));
        QVERIFY2(r.message.contains(QStringLiteral("Connection refused")), qPrintable(r.message));
    }

    // The remote database's path holds spaces, quotes and shell syntax: it is one
    // word on the server. The connection serving the tail is killed mid-stream; the
    // run resumes after the last row here and ends row for row equal.
    void realServerRunWithAnOddDatabasePathSurvivesAKilledConnection() {
        QVERIFY2(sshd().ok(), sshd().why().c_str());
        const QString home = QDir::homePath();
        QVERIFY(!QFile::exists(home + QStringLiteral("/pwned")));
        RemoteHost h = realHost();
        h.database =
            server_.filePath(QStringLiteral("it's a \"db\" $(touch pwned); `touch pwned`.db"));
        ui::test::Workspace ws;
        QVERIFY(ws.open());
        ws.settings->setSshCommand(realSsh());
        ws.settings->setRemoteHosts({h});
        ws.window->editor()->setHosts({QStringLiteral("gpu")}, QStringLiteral("gpu"));
        ws.window->editor()->setSpec(remoteSpec(300));
        QTRY_VERIFY(ws.window->runAction()->isEnabled());
        QVERIFY(ws.window->runExperiment());
        RemoteRun* remote = ws.window->remoteRun();
        QVERIFY(remote);
        remote->setBackoffUnit(50);
        QSignalSpy reconnecting(remote, &RemoteRun::reconnecting);
        QSignalSpy finished(remote, &RemoteRun::finished);
        QSignalSpy failed(remote, &RemoteRun::failed);
        // Held still from its first stored steps until the run has reconnected.
        std::unique_ptr<ampbench::test::Hold> hold = holdOnceTraining(remote, h, &failed);
        QVERIFY2(failed.isEmpty(),
                 failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QVERIFY(hold && hold->holds());
        QTRY_VERIFY_WITH_TIMEOUT(remote->rowsAdded() > 20 || !failed.isEmpty(), 60000);
        QVERIFY2(failed.isEmpty(),
                 failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QVERIFY(remote->tailProcess());
        QVERIFY2(sshd().killConnections() >= 1, "no connection served the tail");
        QTRY_COMPARE_WITH_TIMEOUT(reconnecting.count(), 1, kUiPatienceMs);
        hold->release();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
        QCOMPARE(finished.first().first().toBool(), false);
        QVERIFY(remote->state() == RemoteRun::State::Done);

        QVERIFY2(QFile::exists(h.database), qPrintable(h.database));
        auto mine =
            store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        auto theirs =
            store::Database::open(h.database.toStdString(), store::Database::Mode::ReadOnly);
        const auto runs = theirs->runs(remote->remoteExperiment());
        QCOMPARE(runs.size(), size_t(3));
        for (const auto& r : runs) {
            const auto id = mine->runFromOrigin("gpu", r.id);
            QVERIFY(id);
            QVERIFY(mine->run(*id)->status == run::RunStatus::Finished);
            QVERIFY(rowsOf(*mine, *id) == rowsOf(*theirs, r.id));
            const auto seqs = mine->recordsSince(*id, 0);
            for (size_t i = 0; i < seqs.size(); ++i) {
                QCOMPARE(seqs[i].seq, static_cast<int64_t>(i + 1));
            }
        }
        QVERIFY2(!QFile::exists(home + QStringLiteral("/pwned")),
                 "the remote shell ran part of the database path");
        QVERIFY(!QFile::exists(server_.filePath(QStringLiteral("pwned"))));
    }

    void realServerCancelEndsTheRunsCancelledHere() {
        QVERIFY2(sshd().ok(), sshd().why().c_str());
        cancelEndsTheRunsCancelledWithTheirRows(realSsh(), realHost());
    }

    // What the user typed as the host is only ever a host: one beginning with "-"
    // (an ssh option), or holding ;, $(...), backquotes, quotes, |, &, spaces or a
    // newline (syntax for the shell ssh runs ProxyCommand and Match exec in) is
    // refused by name, and neither Test connection nor a run starts ssh for it.
    void hostStringsNeverBecomeSshOptionsOrShellSyntax() {
        QVERIFY2(sshd().ok(), sshd().why().c_str());
        const QString marker = server_.filePath(QStringLiteral("host-ran"));
        const QString script = server_.filePath(QStringLiteral("mark.sh"));
        {
            QFile f(script);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QStringLiteral("#!/bin/sh\ntouch '%1'\n").arg(marker).toUtf8());
        }
        QFile::setPermissions(script, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        const QString real = QString::fromStdString(sshd().destination());
        const QList<QPair<QString, QString>> evil = {
            {QStringLiteral("-oProxyCommand=") + script, QStringLiteral("begins with")},
            {QStringLiteral("me@-oProxyCommand=") + script, QStringLiteral("begins with")},
            {QStringLiteral("ssh://-oProxyCommand=") + script, QStringLiteral("begins with")},
            {real + QStringLiteral(";") + script, QStringLiteral("\u201c;\u201d")},
            {QStringLiteral("$(") + script + QStringLiteral(")@127.0.0.1"),
             QStringLiteral("\u201c$\u201d")},
            {QStringLiteral("`") + script + QStringLiteral("`@127.0.0.1"),
             QStringLiteral("\u201c`\u201d")},
            {real + QStringLiteral("|") + script, QStringLiteral("\u201c|\u201d")},
            {real + QStringLiteral("&&") + script, QStringLiteral("\u201c&\u201d")},
            {QStringLiteral("'") + real + QStringLiteral("'"), QStringLiteral("\u201c'\u201d")},
            {QStringLiteral("\"") + real + QStringLiteral("\""), QStringLiteral("\u201c\"\u201d")},
            {real + QStringLiteral(" ") + script, QStringLiteral("a space")},
            {real + QStringLiteral("\n") + script, QStringLiteral("a control character")},
        };
        for (const auto& [destination, named] : evil) {
            const QString problem = destinationProblem(destination);
            QVERIFY2(problem.contains(named),
                     qPrintable(destination + QStringLiteral(": ") + problem));
            RemoteHost h = realHost();
            h.destination = destination;
            QCOMPARE(hostProblem(h, {}), problem);

            const ConnectionResult r = testConnection(h, realSsh());
            QVERIFY2(r.kind == Kind::BadHost,
                     qPrintable(destination + QStringLiteral(": ") + r.message));
            QCOMPARE(r.message, problem);

            RemoteRun run(realSsh(), h, server_.filePath(QStringLiteral("local.db")));
            QSignalSpy failed(&run, &RemoteRun::failed);
            run.start(remoteSpec(10));
            QCOMPARE(failed.count(), 1);
            QCOMPARE(failed.first().first().toString(), problem);
            QVERIFY(run.state() == RemoteRun::State::Failed);
            QVERIFY(run.findChildren<QProcess*>().isEmpty());
            QVERIFY2(!QFile::exists(marker),
                     qPrintable(destination + QStringLiteral(" ran a program")));
        }
        QVERIFY(!QFile::exists(server_.filePath(QStringLiteral("local.db"))));
        // What hosts are written as passes: aliases, addresses, URIs, zones.
        for (const QString ok :
             {real, QStringLiteral("gpu_box"), QStringLiteral("me@gpu.example.org"),
              QStringLiteral("ssh://me@gpu:2222"), QStringLiteral("me@[::1]"),
              QStringLiteral("fe80::1%eth0"), QStringLiteral("first.last@10.0.0.7")}) {
            QVERIFY2(destinationProblem(ok).isEmpty(), qPrintable(ok + destinationProblem(ok)));
        }
        QVERIFY(testConnection(realHost(), realSsh()).ok());
        QVERIFY(!QFile::exists(marker));
    }

    // A host set to "Scheduler: Slurm" launches with --slurm and its settings, each one
    // word for the remote shell; settings sbatch would not read are named; they are kept.
    void slurmSettingsReachTheLaunchAndAreChecked() {
        RemoteHost h = host();
        QCOMPARE(launchArguments(h), (QStringList{"launch", "--config-stdin"}));
        h.scheduler = QStringLiteral("slurm");
        setSchedulerOption(h, QStringLiteral("partition"), QStringLiteral("gpu"));
        setSchedulerOption(h, QStringLiteral("gpus_per_task"), QStringLiteral("2"));
        setSchedulerOption(h, QStringLiteral("time_limit"), QStringLiteral("2:00:00"));
        setSchedulerOption(h, QStringLiteral("sbatch_options"),
                           QStringLiteral("--qos=long  --account=lab"));
        QCOMPARE(launchArguments(h),
                 (QStringList{"launch", "--config-stdin", "--slurm", "--partition", "gpu",
                              "--gpus-per-task", "2", "--time-limit", "2:00:00",
                              "--sbatch-option=--qos=long", "--sbatch-option=--account=lab"}));
        QVERIFY(hostProblem(h, {}).isEmpty());
        for (auto bad :
             {std::make_pair(QStringLiteral("partition"), QStringLiteral("gpu;reboot")),
              std::make_pair(QStringLiteral("time_limit"), QStringLiteral("two hours")),
              std::make_pair(QStringLiteral("sbatch_options"), QStringLiteral("qos=long"))}) {
            RemoteHost b = h;
            setSchedulerOption(b, bad.first, bad.second);
            QVERIFY2(hostProblem(b, {}).contains(bad.second), qPrintable(hostProblem(b, {})));
        }
        ui::test::Workspace ws;
        QVERIFY(ws.open());
        ws.settings->setRemoteHosts({h});
        QCOMPARE(ws.settings->remoteHosts(), QList<RemoteHost>{h});
    }

    // The desktop follows a Slurm host's runs as it does a GPU server's: launched as a
    // job array on a real one-node Slurm (tests/e2e/slurm-fixture.sh), every run ends
    // here finished, row for row with the login host's database.
    void aSlurmHostsRunsArriveRowForRow() {
        const QString slurm = server_.filePath(QStringLiteral("slurm"));
        QProcess fixture;
        fixture.setProcessChannelMode(QProcess::MergedChannels);
        fixture.start(QStringLiteral(AMPBENCH_SLURM_FIXTURE), {QStringLiteral("start"), slurm});
        QVERIFY(fixture.waitForFinished(120000));
        QVERIFY2(fixture.exitCode() == 0,
                 qPrintable(QStringLiteral("the one-node Slurm did not start:\n") +
                            QString::fromLocal8Bit(fixture.readAll())));
        qputenv("SLURM_CONF", (slurm + QStringLiteral("/slurm.conf")).toLocal8Bit());
        struct Stop {
            QString dir;
            ~Stop() {
                QProcess::execute(QStringLiteral(AMPBENCH_SLURM_FIXTURE),
                                  {QStringLiteral("stop"), dir});
                qunsetenv("SLURM_CONF");
            }
        } stop{slurm};
        RemoteHost h = host();
        h.scheduler = QStringLiteral("slurm");
        h.database = server_.filePath(QStringLiteral("cluster.db"));
        RemoteRun run(QStringLiteral(AMPBENCH_FAKE_SSH), h,
                      server_.filePath(QStringLiteral("cluster-local.db")));
        run.setBackoffUnit(50);
        QSignalSpy finished(&run, &RemoteRun::finished);
        QSignalSpy failed(&run, &RemoteRun::failed);
        run.start(remoteSpec(60));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), 180000);
        QVERIFY2(failed.isEmpty(),
                 failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QCOMPARE(finished.first().first().toBool(), false);
        auto mine = store::Database::open(
            server_.filePath(QStringLiteral("cluster-local.db")).toStdString(),
            store::Database::Mode::ReadOnly);
        auto theirs =
            store::Database::open(h.database.toStdString(), store::Database::Mode::ReadOnly);
        const auto runs = theirs->runs(run.remoteExperiment());
        QCOMPARE(runs.size(), size_t(3));
        for (const auto& r : runs) {
            QVERIFY(r.status == run::RunStatus::Finished);
            const auto id = mine->runFromOrigin("gpu", r.id);
            QVERIFY(id);
            QVERIFY(mine->run(*id)->status == run::RunStatus::Finished);
            QVERIFY(rowsOf(*mine, *id) == rowsOf(*theirs, r.id));
        }
        // It went through Slurm: the job file names the scheduler and its job.
        QFile job(h.database + QStringLiteral(".jobs/") + QString::number(run.remoteExperiment()) +
                  QStringLiteral(".json"));
        QVERIFY(job.open(QIODevice::ReadOnly));
        QVERIFY(job.readAll().contains("\"scheduler\": \"slurm\""));
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
        ui::test::Workspace ws;
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
        auto* run = ws.window->findChild<QAction*>(QStringLiteral("runAction"));
        QVERIFY(run);
        QCOMPARE(run->text(), QStringLiteral("&Run experiment"));
        ws.window->editor()->setRunOn(QStringLiteral("gpu"));
        QCOMPARE(ws.settings->runOn(), QStringLiteral("gpu"));
        // Where Ctrl+R trains is on the Run button itself.
        QCOMPARE(run->text(), QStringLiteral("&Run on gpu"));
        ws.window->editor()->setRunOn(QString());
        QCOMPARE(run->text(), QStringLiteral("&Run experiment"));
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

        ui::test::Workspace ws;
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
            QVERIFY(ssh.waitForFinished(kUiPatienceMs));
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

    // A cluster's login host: Test connection asks the host's CLI, over the transport,
    // which of Slurm's client tools its PATH has, and names the missing ones.
    void connectionTestOfASlurmHostNamesTheMissingSlurmTools() {
        const QString bin = server_.filePath(QStringLiteral("slurm-bin"));
        QVERIFY(QDir().mkpath(bin));
        // The stand-in ssh needs a shell on PATH; the Slurm tools are stand-ins too.
        QVERIFY(QFile::link(QStringLiteral("/bin/sh"), bin + QStringLiteral("/sh")));
        for (const char* tool : {"sbatch", "squeue"}) {
            QFile f(bin + QLatin1Char('/') + QLatin1String(tool));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("#!/bin/sh\nexit 0\n");
            f.close();
            QVERIFY(f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        }
        const QByteArray path = qgetenv("PATH");
        struct Restore {
            QByteArray path;
            ~Restore() { qputenv("PATH", path); }
        } restore{path};
        qputenv("PATH", bin.toLocal8Bit());
        RemoteHost h = host();
        h.scheduler = QStringLiteral("slurm");
        ConnectionResult r = testConnection(h);
        QVERIFY2(r.kind == Kind::ToolsMissing, qPrintable(r.message));
        QVERIFY(!r.ok());
        QVERIFY2(r.message.contains(QStringLiteral("sacct, scancel not on PATH on gpu")),
                 qPrintable(r.message));
        QVERIFY2(r.message.contains(QStringLiteral("(sbatch, squeue found)")),
                 qPrintable(r.message));
        QVERIFY2(r.message.contains(bin), qPrintable(r.message));  // the PATH it searched

        for (const char* tool : {"sacct", "scancel"}) {
            QVERIFY(QFile::copy(bin + QStringLiteral("/sbatch"),
                                bin + QLatin1Char('/') + QLatin1String(tool)));
        }
        r = testConnection(h);
        QVERIFY2(r.ok(), qPrintable(r.message));
        QVERIFY2(r.message.contains(QStringLiteral("Slurm: sbatch, squeue, sacct, scancel found")),
                 qPrintable(r.message));
        // A GPU server is not asked about Slurm at all.
        QFile::remove(bin + QStringLiteral("/sacct"));
        r = testConnection(host());
        QVERIFY2(r.ok(), qPrintable(r.message));
        QVERIFY(!r.message.contains(QStringLiteral("Slurm")));
    }

    void dialogShowsTheTestResult() {
        ui::test::Workspace ws;
        ws.settings->setSshCommand(QStringLiteral(AMPBENCH_FAKE_SSH));
        ws.settings->setRemoteHosts({host()});
        qputenv("FAKE_SSH_EXIT", "255");
        qputenv("FAKE_SSH_STDERR", "ssh: connect to host x port 22: Connection refused");
        auto* dialog = ws.window->showHosts();
        QSignalSpy tested(dialog, &HostsDialog::tested);
        dialog->testButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(tested.count(), 1, kUiPatienceMs);
        QVERIFY2(dialog->resultLabel()->text().contains(QStringLiteral("Connection refused")),
                 qPrintable(dialog->resultLabel()->text()));
        QVERIFY(dialog->resultLabel()->text().contains(QStringLiteral("Not ready")));
    }

    void remoteRunIsPlottedAndSurvivesADrop() {
        ui::test::Workspace ws;
        QVERIFY(ws.open());
        ws.settings->setSshCommand(QStringLiteral(AMPBENCH_FAKE_SSH));
        ws.settings->setRemoteHosts({host()});
        ws.window->editor()->setHosts({QStringLiteral("gpu")}, QStringLiteral("gpu"));
        ws.window->editor()->setSpec(remoteSpec(300));
        QTRY_VERIFY(ws.window->runAction()->isEnabled());
        QVERIFY(ws.window->runExperiment());
        RemoteRun* remote = ws.window->remoteRun();
        QVERIFY(remote);
        remote->setBackoffUnit(50);
        QSignalSpy reconnecting(remote, &RemoteRun::reconnecting);
        QSignalSpy finished(remote, &RemoteRun::finished);
        // The job is held still once it has stored some steps until the link has dropped
        // and the run reconnects: the drop comes mid-run however fast the machine.
        std::unique_ptr<ampbench::test::Hold> hold = holdOnceTraining(remote, host());
        QVERIFY(hold && hold->holds());
        QTRY_VERIFY_WITH_TIMEOUT(remote->rowsAdded() > 20, 60000);
        QVERIFY(ws.window->cancelAction()->isEnabled());
        QVERIFY(!ws.window->runAction()->isEnabled());
        // The runs tree holds the host's runs, ticked for the plots.
        const qint64 local = remote->localExperiment();
        QVERIFY(local > 0);
        // (Waits that only end early: a full test run on two cores took 8.9 s for the
        // plots' cache once.)
        QTRY_VERIFY_WITH_TIMEOUT(!ws.window->runModel()->runsOfExperiment(local).isEmpty(), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!ws.window->runModel()->checkedRuns().isEmpty(), 60000);
        // ... and says where they train.
        QVERIFY2(
            ws.window->runModel()->experimentItem(local)->text().endsWith(QStringLiteral("on gpu")),
            qPrintable(ws.window->runModel()->experimentItem(local)->text()));
        const qint64 firstRun = ws.window->runModel()->checkedRuns().first();
        QVERIFY(ws.window->runModel()->runItem(firstRun)->toolTip().contains(
            QStringLiteral("trained on gpu")));
        // Should this ever fail, it says where the rows stopped: in the database or
        // before the plots' cache.
        const auto plotted = [&] {
            const RunSeries* s = ws.window->cache()->series(firstRun);
            return QStringLiteral(
                       "run %1: %2 steps in the database, %3 in the plots' cache; "
                       "%4 rows arrived; runs ticked %5")
                .arg(firstRun)
                .arg(store::Database::open(ws.dbPath().toStdString(),
                                           store::Database::Mode::ReadOnly)
                         ->stepCount(firstRun))
                .arg(s ? QString::number(s->steps.size()) : QStringLiteral("no series"))
                .arg(remote->rowsAdded())
                .arg(ws.window->runModel()->checkedRuns().size());
        };
        QTRY_VERIFY2_WITH_TIMEOUT(ws.window->cache()->series(firstRun) &&
                                      !ws.window->cache()->series(firstRun)->steps.empty(),
                                  qPrintable(plotted()), 60000);
        // The link drops mid-run: the tail dies; the run resumes after the last row here.
        QVERIFY(remote->tailProcess());
        remote->tailProcess()->kill();
        QTRY_COMPARE_WITH_TIMEOUT(reconnecting.count(), 1, kUiPatienceMs);
        hold->release();
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
        cancelEndsTheRunsCancelledWithTheirRows(QStringLiteral(AMPBENCH_FAKE_SSH), host());
    }

    void launchFailureIsShown() {
        ui::test::Workspace ws;
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
