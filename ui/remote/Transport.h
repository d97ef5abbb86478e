#pragma once
// How the desktop reaches the ampbench-cli that trains an experiment: the runner
// (RemoteRun) and Test connection only ask a Transport for the program that runs
// `ampbench-cli <args>` there and for what a failure of the transport itself means.
// OpenSSH to a server (SshTransport) and this machine without ssh (LocalTransport)
// are the two; another (Kubernetes exec, a container) is one more class.
#include <QString>
#include <QStringList>
#include <memory>

#include "ui/remote/ConnectionTest.h"
#include "ui/remote/RemoteHost.h"

namespace ampbench::ui {

class Transport {
  public:
    virtual ~Transport() = default;
    /// The program, then its arguments, that runs the host's ampbench-cli with `args`
    /// (and --db when the host names a database). `withDatabase` false leaves --db
    /// out, for calls that need none (--version, host).
    virtual QStringList command(const QStringList& args, bool withDatabase = true) const = 0;
    /// Why nothing may run through it for this host (a destination ssh would read
    /// as an option); empty when it may.
    virtual QString problem() const = 0;
    /// What a call's end says of the transport itself (ssh's exit 255: unreachable,
    /// key refused), with `kind` set; empty when the failure is the CLI's own.
    virtual QString failure(int exitCode, const QString& err,
                            ConnectionResult::Kind* kind = nullptr) const = 0;
    /// The message when `program` did not start at all.
    virtual QString notStarted(const QString& program) const = 0;
};

/// `ssh` (Settings' ssh command) to `host`: transportCommand, the remote words quoted
/// for the remote shell (remoteCommand).
std::unique_ptr<Transport> makeSshTransport(const QString& ssh, const RemoteHost& host);
/// `host.cli` run here as a program of its own: no ssh and no shell, the arguments
/// passed as they are.
std::unique_ptr<Transport> makeLocalTransport(const RemoteHost& host);
/// The program a local host runs for `cli`: a path as given; the bare default
/// ("ampbench-cli", or nothing) is the CLI in `beside` (the GUI's own folder) where
/// there is one, so the workbench finds the CLI it was installed or built with, and
/// PATH's otherwise.
QString localCliProgram(const QString& cli, const QString& beside);
/// The transport `host.transport` names ("ssh" with Settings' `ssh` command, or
/// "local"); for a name this build lacks, one whose problem() says so.
std::unique_ptr<Transport> transportFor(const QString& ssh, const RemoteHost& host);

}  // namespace ampbench::ui
