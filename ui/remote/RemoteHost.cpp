#include "ui/remote/RemoteHost.h"

#include <QObject>
#include <QProcess>
#include <QRegularExpression>

#include "core/launch/Scheduler.h"

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

const launch::Scheduler* schedulerOf(const RemoteHost& host) {
    return host.scheduler.isEmpty() ? nullptr
                                    : launch::schedulerNamed(host.scheduler.toStdString());
}

launch::OptionValues schedulerValues(const RemoteHost& host) {
    launch::OptionValues values;
    if (const launch::Scheduler* s = schedulerOf(host)) {
        for (const auto& option : s->info().options) {
            const QString key = QString::fromStdString(launch::settingsKey(s->info(), option));
            launch::setOptionText(values, option, host.schedulerOptions.value(key).toStdString());
        }
    }
    return values;
}

QString schedulerOption(const RemoteHost& host, const QString& key) {
    return host.schedulerOptions.value(host.scheduler + QLatin1Char('_') + key);
}

void setSchedulerOption(RemoteHost& host, const QString& key, const QString& text) {
    const QString stored = host.scheduler + QLatin1Char('_') + key;
    if (text.trimmed().isEmpty()) {
        host.schedulerOptions.remove(stored);
    } else {
        host.schedulerOptions[stored] = text;
    }
}

QStringList launchArguments(const RemoteHost& host) {
    QStringList args = {QStringLiteral("launch"), QStringLiteral("--config-stdin")};
    if (const launch::Scheduler* s = schedulerOf(host)) {
        for (const auto& word : launch::launchArguments(s->info(), schedulerValues(host))) {
            args << QString::fromStdString(word);
        }
    }
    return args;
}

QString schedulerProblem(const RemoteHost& host) {
    if (host.scheduler.isEmpty()) {
        return {};
    }
    const launch::Scheduler* s = schedulerOf(host);
    if (s == nullptr) {
        QStringList known;
        for (const launch::Scheduler* k : launch::schedulers()) {
            known << QString::fromStdString(k->info().title);
        }
        return QObject::tr("Scheduler \u201c%1\u201d is not one this desktop launches on (%2)")
            .arg(host.scheduler, known.join(QStringLiteral(", ")));
    }
    const auto problems =
        launch::checkOptions(s->info(), schedulerValues(host), launch::Naming::Label);
    return problems.empty() ? QString() : QString::fromStdString(problems.front());
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
    return schedulerProblem(host);
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
