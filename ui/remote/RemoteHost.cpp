#include "ui/remote/RemoteHost.h"

#include <QObject>
#include <QProcess>
#include <QRegularExpression>

namespace ampbench::ui {

QString destinationProblem(const QString& destination) {
    const QString d = destination.trimmed();
    if (d.isEmpty()) {
        return QObject::tr("Give the host as user@host (or a Host of ~/.ssh/config)");
    }
    // A leading "-" of the whole, of the host after the user, or after ssh:// is an
    // ssh option (-oProxyCommand=... runs a program here).
    const QString afterScheme =
        d.startsWith(QStringLiteral("ssh://")) ? d.mid(QStringLiteral("ssh://").size()) : d;
    const QString hostPart = afterScheme.section(QChar('@'), -1);
    if (d.startsWith(QChar('-')) || afterScheme.startsWith(QChar('-')) ||
        hostPart.startsWith(QChar('-'))) {
        return QObject::tr(
                   "The host \u201c%1\u201d begins with \u201c-\u201d, which ssh would "
                   "read as an option; give it as user@host")
            .arg(d);
    }
    // Only what user names, host names, IPv6 addresses ([::1], %zone), Host aliases
    // and ssh:// URIs are made of: ssh hands the user and host to ProxyCommand and
    // Match exec through a shell, so quotes, $, ;, spaces and the like would be
    // commands there.
    for (const QChar c : d) {
        const char16_t u = c.unicode();
        const bool plain = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
                           (u >= '0' && u <= '9') || QStringView(u"._-@:[]%/+_").contains(c);
        if (plain) {
            continue;
        }
        const QString shown = c.category() == QChar::Other_Control
                                  ? QObject::tr("a control character (a line break, a tab)")
                              : c.isSpace() ? QObject::tr("a space")
                                            : QStringLiteral("\u201c%1\u201d").arg(c);
        return QObject::tr(
                   "The host \u201c%1\u201d contains %2, which is no part of a host name "
                   "(ssh or a shell would read it as syntax); give it as user@host or a "
                   "Host of ~/.ssh/config")
            .arg(d, shown);
    }
    return {};
}

QStringList launchArguments(const RemoteHost& host) {
    QStringList args = {QStringLiteral("launch"), QStringLiteral("--config-stdin")};
    if (!host.slurm) {
        return args;
    }
    args << QStringLiteral("--slurm");
    if (!host.partition.trimmed().isEmpty()) {
        args << QStringLiteral("--partition") << host.partition.trimmed();
    }
    if (host.gpusPerTask > 0) {
        args << QStringLiteral("--gpus-per-task") << QString::number(host.gpusPerTask);
    }
    if (!host.timeLimit.trimmed().isEmpty()) {
        args << QStringLiteral("--time-limit") << host.timeLimit.trimmed();
    }
    // The = form: an option's value that starts with "-" is no flag of ours.
    for (const QString& option : host.sbatchOptions.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        args << QStringLiteral("--sbatch-option=") + option;
    }
    return args;
}

QString slurmProblem(const RemoteHost& host) {
    if (!host.slurm) {
        return {};
    }
    static const QRegularExpression partition(QStringLiteral("^[A-Za-z0-9_.,-]*$"));
    static const QRegularExpression time(QStringLiteral("^[0-9:-]*$"));
    if (!partition.match(host.partition.trimmed()).hasMatch()) {
        return QObject::tr(
                   "Partition \u201c%1\u201d: letters, digits, \u201c_.-\u201d and "
                   "commas only")
            .arg(host.partition);
    }
    if (!time.match(host.timeLimit.trimmed()).hasMatch()) {
        return QObject::tr(
                   "Time limit \u201c%1\u201d: as sbatch --time takes it (MINUTES, "
                   "HH:MM:SS, D-HH:MM)")
            .arg(host.timeLimit);
    }
    for (const QString& option : host.sbatchOptions.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        if (!option.startsWith(QLatin1Char('-'))) {
            return QObject::tr(
                       "sbatch option \u201c%1\u201d: each begins with \u201c-\u201d "
                       "(--qos=long)")
                .arg(option);
        }
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
    if (host.transport == QStringLiteral("ssh")) {
        if (QString problem = destinationProblem(host.destination); !problem.isEmpty()) {
            return problem;
        }
        if (host.port < 0 || host.port > 65535) {
            return QObject::tr("The port is a number from 1 to 65535 (0: ssh's default)");
        }
    } else if (host.transport != QStringLiteral("local")) {
        return QObject::tr("Transport “%1”: “ssh” or “local”").arg(host.transport);
    }
    if (host.cli.trimmed().isEmpty()) {
        return QObject::tr("Give the path of ampbench-cli on the host");
    }
    return slurmProblem(host);
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
