#include "ui/remote/RemoteHost.h"

#include <QObject>
#include <QProcess>
#include <QRegularExpression>

namespace ampbench::ui {

QString destinationProblem(const QString& destination) {
    const QString d = destination.trimmed();
    bool blank = d.isEmpty();
    for (const QChar c : d) {
        blank = blank || c.isSpace() || c.category() == QChar::Other_Control;
    }
    if (blank) {
        return QObject::tr("Give the host as user@host (or a Host of ~/.ssh/config)");
    }
    if (d.startsWith(QChar('-'))) {
        // ssh would take it for an option (-oProxyCommand=... runs a program here).
        return QObject::tr(
                   "The host \u201c%1\u201d begins with \u201c-\u201d, which ssh would "
                   "read as an option; give it as user@host")
            .arg(d);
    }
    return {};
}

QString hostProblem(const RemoteHost& host, const QList<RemoteHost>& others) {
    if (host.label.trimmed().isEmpty()) {
        return QObject::tr("Give the host a label");
    }
    if (host.label.trimmed() == QObject::tr("this machine")) {
        return QObject::tr("\u201cthis machine\u201d names the desktop; choose another label");
    }
    for (const auto& o : others) {
        if (o.label.trimmed() == host.label.trimmed()) {
            return QObject::tr("Another host is labelled \u201c%1\u201d").arg(host.label);
        }
    }
    if (QString problem = destinationProblem(host.destination); !problem.isEmpty()) {
        return problem;
    }
    if (host.port < 0 || host.port > 65535) {
        return QObject::tr("The port is a number from 1 to 65535 (0: ssh's default)");
    }
    if (host.cli.trimmed().isEmpty()) {
        return QObject::tr("Give the path of ampbench-cli on the host");
    }
    return {};
}

QString shellQuote(const QString& word) {
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_@%+=:,./-]+$"));
    if (!word.isEmpty() && plain.match(word).hasMatch()) {
        return word;
    }
    if (word.startsWith(QStringLiteral("~/"))) {
        return QStringLiteral("~/") + shellQuote(word.mid(2));
    }
    QString quoted = word;
    quoted.replace(QChar('\''), QStringLiteral("'\\''"));
    return QChar('\'') + quoted + QChar('\'');
}

QStringList transportCommand(const QString& ssh, const RemoteHost& host) {
    QStringList argv =
        QProcess::splitCommand(ssh.trimmed().isEmpty() ? QStringLiteral("ssh") : ssh);
    argv << QStringLiteral("-o") << QStringLiteral("BatchMode=yes") << QStringLiteral("-o")
         << QStringLiteral("ConnectTimeout=15") << QStringLiteral("-o")
         << QStringLiteral("ServerAliveInterval=15") << QStringLiteral("-o")
         << QStringLiteral("ServerAliveCountMax=3");
    if (host.port > 0) {
        argv << QStringLiteral("-p") << QString::number(host.port);
    }
    // "--" ends ssh's options: whatever the destination says, it is only the host.
    argv << QStringLiteral("--") << host.destination.trimmed();
    return argv;
}

QStringList remoteCommand(const QString& ssh, const RemoteHost& host, const QStringList& args) {
    QStringList words{shellQuote(host.cli.trimmed())};
    if (!host.database.trimmed().isEmpty()) {
        words << QStringLiteral("--db") << shellQuote(host.database.trimmed());
    }
    for (const auto& a : args) {
        words << shellQuote(a);
    }
    return transportCommand(ssh, host) << words.join(QChar(' '));
}

}  // namespace ampbench::ui
