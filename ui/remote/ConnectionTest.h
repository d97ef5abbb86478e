#pragma once
// Host › Test connection: `<transport> <cli> --version`, then `<cli> host --json
// --data DIR` for the devices, the data folder and a cluster's scheduler tools, each
// failure named for what it is (host unreachable, key refused, CLI missing, another
// version, data missing, scheduler tools missing).
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <memory>

#include "ui/remote/RemoteHost.h"

namespace ampbench::ui {

class Transport;

struct ConnectionResult {
    enum class Kind {
        Ok,
        BadHost,       ///< the host is no host (an ssh option, shell syntax): nothing ran
        NoTransport,   ///< the ssh program did not start
        Unreachable,   ///< ssh exit 255: no route, refused, unknown host, timeout
        AuthRefused,   ///< ssh exit 255 with "Permission denied"
        CliMissing,    ///< exit 127 or "not found" from the remote shell
        Incompatible,  ///< another version, or one without the remote commands
        DataMissing,   ///< the remote data folder is absent or empty
        ToolsMissing,  ///< a cluster's login host without some of its scheduler's tools
        Failed,        ///< anything else the remote CLI said
    };
    Kind kind = Kind::Failed;
    QString message;      ///< what to show, several lines
    QString version;      ///< the remote ampbench-cli's version
    QStringList devices;  ///< "NVIDIA H200, 139.8 GiB" or the CPU when no CUDA device
    QString data;         ///< "N entries" of the data folder
    bool ok() const { return kind == Kind::Ok; }
};

/// The result of the first call (`--version`) from how it ended; Ok when the remote
/// CLI answered with a version compatible with `ours` (same major and minor).
ConnectionResult classifyVersionCall(const RemoteHost& host, bool started, int exitCode,
                                     const QString& out, const QString& err, const QString& ours);
/// Adds the second call's answer (`host --json`) to an Ok result of the first.
ConnectionResult classifyHostCall(const RemoteHost& host, ConnectionResult first, int exitCode,
                                  const QString& out, const QString& err);
/// "Cannot reach …: ssh said …" for a transport failure (exit 255) of any call, or
/// empty when the failure is not the transport's.
QString transportFailure(const RemoteHost& host, int exitCode, const QString& err,
                         ConnectionResult::Kind* kind = nullptr);

class ConnectionTest : public QObject {
    Q_OBJECT
  public:
    static constexpr int kTimeoutMs = 30000;
    explicit ConnectionTest(QObject* parent = nullptr);
    ~ConnectionTest() override;
    /// Starts the test through the host's transport (transportFor; `ssh`: Settings'
    /// ssh command); a test in progress is abandoned.
    void start(const QString& ssh, const RemoteHost& host);
    /// The same through another transport (this machine: makeLocalTransport).
    void start(std::unique_ptr<Transport> transport, const RemoteHost& host);
    bool isRunning() const { return process_.state() != QProcess::NotRunning; }

  Q_SIGNALS:
    void finished(const ampbench::ui::ConnectionResult& result);

  private:
    void callEnded(bool started);
    void finish(ConnectionResult result);

    QProcess process_;
    QTimer timeout_;
    std::unique_ptr<Transport> transport_;
    RemoteHost host_;
    int step_ = 0;  // 1: --version, 2: host --json
    ConnectionResult first_;
};

}  // namespace ampbench::ui
