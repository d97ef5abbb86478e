#include "ui/remote/Transport.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QObject>

namespace ampbench::ui {
namespace {

class SshTransport final : public Transport {
  public:
    SshTransport(QString ssh, RemoteHost host) : ssh_(std::move(ssh)), host_(std::move(host)) {}
    QStringList command(const QStringList& args, bool withDatabase) const override {
        RemoteHost h = host_;
        if (!withDatabase) {
            h.database.clear();
        }
        return remoteCommand(ssh_, h, args);
    }
    QString problem() const override { return destinationProblem(host_.destination); }
    QString failure(int exitCode, const QString& err, ConnectionResult::Kind* kind) const override {
        return transportFailure(host_, exitCode, err, kind);
    }
    QString notStarted(const QString& program) const override {
        return QObject::tr("The transport (%1) did not start: is OpenSSH installed?").arg(program);
    }

  private:
    QString ssh_;
    RemoteHost host_;
};

class LocalTransport final : public Transport {
  public:
    explicit LocalTransport(RemoteHost host) : host_(std::move(host)) {}
    QStringList command(const QStringList& args, bool withDatabase) const override {
        QStringList argv{localCliProgram(host_.cli, QCoreApplication::applicationDirPath())};
        if (withDatabase && !host_.database.trimmed().isEmpty()) {
            argv << QStringLiteral("--db") << host_.database.trimmed();
        }
        return argv << args;  // a program's own arguments: nothing is read as syntax
    }
    QString problem() const override { return {}; }
    QString failure(int, const QString&, ConnectionResult::Kind*) const override {
        return {};  // no link to lose: every failure is the CLI's own
    }
    QString notStarted(const QString& program) const override {
        return QObject::tr(
                   "ampbench-cli did not start on this machine (\u201c%1\u201d): give its "
                   "full path in the host's settings")
            .arg(program);
    }

  private:
    RemoteHost host_;
};

/// A host whose transport this build does not know: nothing runs through it.
class UnknownTransport final : public Transport {
  public:
    explicit UnknownTransport(RemoteHost host) : host_(std::move(host)) {}
    QStringList command(const QStringList& args, bool) const override {
        return QStringList{host_.cli} << args;  // never started: problem() refuses first
    }
    QString problem() const override { return hostProblem(host_, {}); }
    QString failure(int, const QString&, ConnectionResult::Kind*) const override { return {}; }
    QString notStarted(const QString& program) const override {
        return QObject::tr("%1 did not start").arg(program);
    }

  private:
    RemoteHost host_;
};

}  // namespace

std::unique_ptr<Transport> transportFor(const QString& ssh, const RemoteHost& host) {
    if (host.transport == QStringLiteral("ssh")) {
        return makeSshTransport(ssh, host);
    }
    if (host.transport == QStringLiteral("local")) {
        return makeLocalTransport(host);
    }
    return std::make_unique<UnknownTransport>(host);
}

std::unique_ptr<Transport> makeSshTransport(const QString& ssh, const RemoteHost& host) {
    return std::make_unique<SshTransport>(ssh, host);
}

std::unique_ptr<Transport> makeLocalTransport(const RemoteHost& host) {
    return std::make_unique<LocalTransport>(host);
}

QString localCliProgram(const QString& cli, const QString& beside) {
    const QString given = cli.trimmed();
    const QString name = QStringLiteral("ampbench-cli");
    if (!given.isEmpty() && given != name) {
        return given;
    }
    const QFileInfo sibling(QDir(beside).filePath(name));
    if (!beside.isEmpty() && sibling.isFile() && sibling.isExecutable()) {
        return sibling.absoluteFilePath();
    }
    return name;
}

}  // namespace ampbench::ui
