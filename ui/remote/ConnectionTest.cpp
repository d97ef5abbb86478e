#include "ui/remote/ConnectionTest.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "core/analysis/Format.h"
#include "core/config/BuildInfo.h"
#include "core/launch/Scheduler.h"
#include "ui/remote/Transport.h"

namespace ampbench::ui {
namespace {

QString firstLines(const QString& text, int n = 3) {
    QStringList lines = text.trimmed().split(QChar('\n'), Qt::SkipEmptyParts);
    while (lines.size() > n) {
        lines.removeLast();
    }
    return lines.join(QChar('\n'));
}

QString majorMinor(const QString& version) {
    return version.section(QChar('.'), 0, 1);
}

}  // namespace

QString transportFailure(const RemoteHost& host, int exitCode, const QString& err,
                         ConnectionResult::Kind* kind) {
    if (exitCode != 255) {
        return {};
    }
    const QString said = firstLines(err);
    if (err.contains(QStringLiteral("Permission denied"))) {
        if (kind) {
            *kind = ConnectionResult::Kind::AuthRefused;
        }
        return QObject::tr(
                   "%1 refused the login as %2. ssh runs without prompting here "
                   "(BatchMode): load your key into ssh-agent or name it in "
                   "~/.ssh/config, and check that it is in the server's "
                   "authorized_keys.\nssh said: %3")
            .arg(host.label, host.destination, said);
    }
    if (kind) {
        *kind = ConnectionResult::Kind::Unreachable;
    }
    return QObject::tr(
               "Cannot reach %1 (%2): check the host name, the port and the network.\n"
               "ssh said: %3")
        .arg(host.label, host.destination, said.isEmpty() ? QObject::tr("nothing") : said);
}

ConnectionResult classifyVersionCall(const RemoteHost& host, bool started, int exitCode,
                                     const QString& out, const QString& err, const QString& ours) {
    ConnectionResult r;
    if (!started) {
        r.kind = ConnectionResult::Kind::NoTransport;
        r.message = QObject::tr(
            "The transport program did not start: is OpenSSH installed "
            "(the ssh command)?");
        return r;
    }
    if (QString t = transportFailure(host, exitCode, err, &r.kind); !t.isEmpty()) {
        r.message = t;
        return r;
    }
    if (exitCode == 127 || exitCode == 126 || err.contains(QStringLiteral("not found")) ||
        err.contains(QStringLiteral("No such file"))) {
        r.kind = ConnectionResult::Kind::CliMissing;
        r.message = QObject::tr(
                        "Connected to %1, but ampbench-cli is not at \u201c%2\u201d there. "
                        "Install the bundle or the container on the server (README: "
                        "Install) and give its path in the host's settings.\nThe "
                        "server said: %3")
                        .arg(host.label, host.cli, firstLines(err));
        return r;
    }
    const QString first = out.section(QChar('\n'), 0, 0).trimmed();
    if (exitCode != 0 || !first.startsWith(QStringLiteral("ampbench-cli "))) {
        r.kind = ConnectionResult::Kind::Failed;
        r.message = QObject::tr(
                        "Connected to %1, but \u201c%2 --version\u201d did not answer as "
                        "ampbench-cli does (exit %3).\n%4")
                        .arg(host.label, host.cli)
                        .arg(exitCode)
                        .arg(firstLines(err.isEmpty() ? out : err));
        return r;
    }
    r.version = first.mid(QStringLiteral("ampbench-cli ").size()).trimmed();
    if (majorMinor(r.version) != majorMinor(ours)) {
        r.kind = ConnectionResult::Kind::Incompatible;
        r.message = QObject::tr(
                        "%1 runs ampbench-cli %2; this desktop is %3. Install %3 on the "
                        "server: the record stream and the remote commands must match.")
                        .arg(host.label, r.version, ours);
        return r;
    }
    r.kind = ConnectionResult::Kind::Ok;
    return r;
}

ConnectionResult classifyHostCall(const RemoteHost& host, ConnectionResult r, int exitCode,
                                  const QString& out, const QString& err) {
    if (QString t = transportFailure(host, exitCode, err, &r.kind); !t.isEmpty()) {
        r.message = t;
        return r;
    }
    const QJsonDocument doc = QJsonDocument::fromJson(out.trimmed().toUtf8());
    if (exitCode != 0 || !doc.isObject()) {
        r.kind = ConnectionResult::Kind::Incompatible;
        r.message = QObject::tr(
                        "%1's ampbench-cli %2 does not offer the remote commands "
                        "(host, launch, tail). Install this desktop's version there.\n%3")
                        .arg(host.label, r.version, firstLines(err));
        return r;
    }
    const QJsonObject o = doc.object();
    for (const auto& g : o.value(QStringLiteral("cuda")).toArray()) {
        const QJsonObject d = g.toObject();
        r.devices << QStringLiteral("%1, %2").arg(
            d.value(QStringLiteral("name")).toString(),
            QString::fromStdString(analysis::formatBytes(
                static_cast<int64_t>(d.value(QStringLiteral("memory")).toDouble()))));
    }
    if (r.devices.isEmpty()) {
        const QJsonObject cpu = o.value(QStringLiteral("cpu")).toObject();
        r.devices << QObject::tr("no CUDA device: trains on the CPU (%1, %2 cores)")
                         .arg(cpu.value(QStringLiteral("name")).toString())
                         .arg(cpu.value(QStringLiteral("cores")).toInt());
    }
    QStringList lines;
    lines << QObject::tr("Connected to %1: ampbench-cli %2 (this desktop: %3)")
                 .arg(host.label, r.version, QString::fromUtf8(config::buildVersion()));
    lines << QObject::tr("Devices: %1").arg(r.devices.join(QStringLiteral("; ")));
    r.kind = ConnectionResult::Kind::Ok;
    if (const launch::Scheduler* s = schedulerOf(host)) {
        // The CLI looks them up on the PATH a launch over this transport gets, which
        // may differ from an interactive login's (modules loaded in a profile).
        const launch::SchedulerInfo& info = s->info();
        const QString title = QString::fromStdString(info.title);
        const QString name = QString::fromStdString(info.name);
        QJsonObject tools =
            o.value(QStringLiteral("scheduler_tools")).toObject().value(name).toObject();
        if (!o.contains(QStringLiteral("scheduler_tools"))) {
            tools = o.value(name + QStringLiteral("_tools")).toObject();  // an older CLI's
        }
        QStringList found, missing;
        for (const auto& tool : info.tools) {
            const QString t = QString::fromStdString(tool);
            (tools.value(t).toString().isEmpty() ? missing : found) << t;
        }
        if (!missing.isEmpty()) {
            r.kind = ConnectionResult::Kind::ToolsMissing;
            lines << QObject::tr(
                         "%1: %2 not on PATH on %3 (%4 found). %5: load %1's module in the "
                         "shell's startup file (~/.bashrc) or ask the cluster's admins.\nPATH "
                         "there: %6")
                         .arg(title, missing.join(QStringLiteral(", ")), host.label,
                              found.isEmpty() ? QObject::tr("none")
                                              : found.join(QStringLiteral(", ")),
                              QString::fromStdString(info.tools_note),
                              o.value(QStringLiteral("path")).toString());
        } else {
            lines << QObject::tr("%1: %2 found").arg(title, found.join(QStringLiteral(", ")));
        }
    }
    if (!host.dataDir.trimmed().isEmpty()) {
        const QJsonObject d = o.value(QStringLiteral("data")).toObject();
        const QJsonArray entries = d.value(QStringLiteral("entries")).toArray();
        if (!d.value(QStringLiteral("exists")).toBool()) {
            r.kind = r.ok() ? ConnectionResult::Kind::DataMissing : r.kind;
            r.data = QObject::tr("missing");
            lines << QObject::tr(
                         "Data: %1 does not exist on %2. Copy your data there (e.g. "
                         "rsync) or correct the folder.")
                         .arg(host.dataDir, host.label);
        } else if (entries.isEmpty()) {
            r.kind = r.ok() ? ConnectionResult::Kind::DataMissing : r.kind;
            r.data = QObject::tr("empty");
            lines << QObject::tr("Data: %1 on %2 is empty.").arg(host.dataDir, host.label);
        } else {
            QStringList names;
            for (const auto& e : entries) {
                if (names.size() < 6) {
                    names << e.toString();
                }
            }
            r.data = QObject::tr("%n entries", nullptr, static_cast<int>(entries.size()));
            lines << QObject::tr("Data: %1 (%2: %3%4)")
                         .arg(host.dataDir, r.data, names.join(QStringLiteral(", ")),
                              entries.size() > names.size() ? QStringLiteral(", \u2026")
                                                            : QString());
        }
    }
    r.message = lines.join(QChar('\n'));
    return r;
}

ConnectionTest::ConnectionTest(QObject* parent) : QObject(parent) {
    timeout_.setSingleShot(true);
    connect(&timeout_, &QTimer::timeout, this, [this] {
        process_.disconnect(this);
        process_.kill();
        process_.waitForFinished(1000);
        ConnectionResult r;
        r.kind = ConnectionResult::Kind::Unreachable;
        r.message = tr("No answer from %1 (%2) within %3 s.")
                        .arg(host_.label, host_.destination)
                        .arg(kTimeoutMs / 1000);
        finish(r);
    });
}

ConnectionTest::~ConnectionTest() = default;

void ConnectionTest::start(const QString& ssh, const RemoteHost& host) {
    start(transportFor(ssh, host), host);
}

void ConnectionTest::start(std::unique_ptr<Transport> transport, const RemoteHost& host) {
    process_.disconnect(this);
    if (process_.state() != QProcess::NotRunning) {
        process_.kill();
        process_.waitForFinished(1000);
    }
    transport_ = std::move(transport);
    host_ = host;
    if (QString problem = transport_->problem(); !problem.isEmpty()) {
        // Nothing runs for a host that ssh would take for an option or a shell for
        // syntax; the answer still comes as a signal, like every other.
        ConnectionResult r;
        r.kind = ConnectionResult::Kind::BadHost;
        r.message = problem;
        QMetaObject::invokeMethod(
            this, [this, r] { finish(r); }, Qt::QueuedConnection);
        return;
    }
    step_ = 1;
    // The first call names the CLI alone: --version needs no database.
    QStringList argv = transport_->command({QStringLiteral("--version")}, false);
    connect(&process_, &QProcess::finished, this, [this] { callEnded(true); });
    connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) {
            callEnded(false);
        }
    });
    process_.setStandardInputFile(QProcess::nullDevice());
    timeout_.start(kTimeoutMs);
    process_.start(argv.takeFirst(), argv);
}

void ConnectionTest::callEnded(bool started) {
    const QString out = QString::fromUtf8(process_.readAllStandardOutput());
    const QString err = QString::fromUtf8(process_.readAllStandardError());
    const int code = process_.exitStatus() == QProcess::NormalExit ? process_.exitCode() : -1;
    if (step_ == 1) {
        first_ = classifyVersionCall(host_, started, code, out, err,
                                     QString::fromUtf8(config::buildVersion()));
        if (!started) {
            first_.message = transport_->notStarted(process_.program());
        }
        if (!first_.ok()) {
            finish(first_);
            return;
        }
        step_ = 2;
        QStringList args{QStringLiteral("host"), QStringLiteral("--json")};
        if (!host_.dataDir.trimmed().isEmpty()) {
            args << QStringLiteral("--data") << host_.dataDir.trimmed();
        }
        QStringList argv = transport_->command(args, false);
        // Start the next call once this QProcess has left its finished() signal.
        QMetaObject::invokeMethod(
            this, [this, argv]() mutable { process_.start(argv.takeFirst(), argv); },
            Qt::QueuedConnection);
        return;
    }
    finish(classifyHostCall(host_, first_, code, out, err));
}

void ConnectionTest::finish(ConnectionResult result) {
    timeout_.stop();
    step_ = 0;
    process_.disconnect(this);
    Q_EMIT finished(result);
}

}  // namespace ampbench::ui
