#pragma once
// A machine that trains for this desktop (a GPU server), reached through the system's
// OpenSSH as a plain command prefix: `ssh -o BatchMode=yes [-p PORT] user@host` and
// then `ampbench-cli --db DB <command>` there. No daemon, no open port. A host reached
// "locally" is this machine: the same commands run here without ssh (Transport.h).
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include "core/launch/LaunchOption.h"

namespace ampbench::launch {
class Scheduler;
}

namespace ampbench::ui {

struct RemoteHost {
    QString label;        ///< the name shown in "Run on" and stored as the runs' origin
    QString destination;  ///< user@host (or a Host alias of ~/.ssh/config)
    int port = 0;         ///< 0: ssh's default (22 or the config's)
    QString cli = QStringLiteral("ampbench-cli");  ///< the remote ampbench-cli
    QString database;  ///< the remote database; empty: the remote default
    QString dataDir;   ///< the remote data folder; empty: the spec's paths as they are
    /// How it is reached (transportFor): "ssh" (OpenSSH to `destination`) or "local"
    /// (this machine: no ssh, no destination; runs detached, followed as a server's).
    QString transport = QStringLiteral("ssh");
    /// The cluster scheduler experiments go to from this host (a cluster's login host):
    /// empty, the host trains them itself; else a scheduler's name ("slurm",
    /// "gridengine": launch::schedulers()), launched with `--<name>` and its options.
    QString scheduler;
    /// The schedulers' options as the hosts dialog holds them, as text (a Words
    /// option's words separated by spaces), by their settings key ("slurm_partition":
    /// launch::settingsKey); each scheduler's are kept while another is chosen.
    QMap<QString, QString> schedulerOptions;
    bool operator==(const RemoteHost& o) const {
        return label == o.label && destination == o.destination && port == o.port && cli == o.cli &&
               database == o.database && dataDir == o.dataDir && transport == o.transport &&
               scheduler == o.scheduler && schedulerOptions == o.schedulerOptions;
    }
    bool operator!=(const RemoteHost& o) const { return !(*this == o); }
};

/// What a host lacks before it can be saved ("Give the host a label"), or what is
/// wrong with it (a host beginning with "-", which ssh reads as an option); empty
/// when none.
QString hostProblem(const RemoteHost& host, const QList<RemoteHost>& others);

/// What is wrong with a destination: empty; a leading "-" (of it, of its host part
/// or after ssh://), which ssh reads as an option; or a character that no user name,
/// host name, address or Host alias holds (spaces, quotes, $, ;, `, |, & ...), which
/// a shell of ssh's (ProxyCommand, Match exec) would read as syntax. Empty when none.
QString destinationProblem(const QString& destination);

/// The host's scheduler; null when it has none or one this desktop does not know.
const launch::Scheduler* schedulerOf(const RemoteHost& host);
/// The host's options for its scheduler, as `launch` takes them.
launch::OptionValues schedulerValues(const RemoteHost& host);
/// One option of the host's scheduler by its key ("partition"): its text, empty when
/// unset; and setting it (empty text unsets it).
QString schedulerOption(const RemoteHost& host, const QString& key);
void setSchedulerOption(RemoteHost& host, const QString& key, const QString& text);

/// The remote `launch` for this host: `launch --config-stdin`, and for a host with a
/// scheduler its switch and options as its declaration makes them (launch::launchArguments).
QStringList launchArguments(const RemoteHost& host);

/// What is wrong with a host's scheduler settings (a scheduler this desktop does not
/// know, a value its declaration refuses: a partition sbatch would not read, an option
/// that is no option); empty when none or no scheduler.
QString schedulerProblem(const RemoteHost& host);

/// One word for the remote shell: single-quoted unless it is plain; a leading "~/"
/// stays outside the quotes so the remote shell expands it.
QString shellQuote(const QString& word);

/// The transport: `ssh` (a program with its own options, split like a shell would)
/// then -o BatchMode=yes (never a password prompt), a connect timeout, keep-alives
/// (a dead link is noticed in some 45 s), the port, "--" (the end of ssh's options)
/// and the destination.
QStringList transportCommand(const QString& ssh, const RemoteHost& host);

/// The transport then one remote command line: the host's CLI, its --db when set,
/// and `args`, each word quoted for the remote shell.
QStringList remoteCommand(const QString& ssh, const RemoteHost& host, const QStringList& args);

}  // namespace ampbench::ui
