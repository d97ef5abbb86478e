#pragma once
// An experiment trained on a host and followed here: `launch` through the host's
// Transport (OpenSSH, or this machine without ssh; the spec as JSON on stdin), then `tail
// --experiment ID --follow --stream`, whose lines a stream::Ingestor writes into the local database
// (origin: the host's label), where the runs tree and the plots pick them up as they do a local
// run's. When the tail dies before the runs ended (the link dropped), it reconnects after 1, 2, 4 …
// up to 30 s and resumes after the last sequence number held here. Cancel runs
// `cancel --experiment ID` there. GUI thread only.
#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QTimer>
#include <memory>

#include "core/config/ExperimentSpec.h"
#include "ui/remote/RemoteHost.h"
#include "ui/remote/Transport.h"

namespace ampbench::store {
class Database;
}
namespace ampbench::stream {
class Ingestor;
}

namespace ampbench::ui {

/// The spec as the host reads it: with a data folder set, the data files (and a
/// TorchScript model) are looked for there under their file names, Fashion-MNIST in
/// the folder itself.
config::ExperimentSpec specForHost(const config::ExperimentSpec& spec, const RemoteHost& host);

class RemoteRun : public QObject {
    Q_OBJECT
  public:
    enum class State { Idle, Launching, Following, Waiting, Done, Failed };
    static constexpr int kMaxBackoffMs = 30000;
    /// The wait before reconnect `attempt` (1-based): 1, 2, 4, 8, 16, 30, 30 … s.
    static int backoffMs(int attempt, int unitMs = 1000);

    /// `localDb`: the database the runs are copied into (opened here, read-write).
    /// The host is reached through its transport (transportFor; `ssh`: Settings' ssh
    /// command).
    RemoteRun(const QString& ssh, const RemoteHost& host, const QString& localDb,
              QObject* parent = nullptr);
    /// The same through another transport (this machine: makeLocalTransport).
    RemoteRun(std::unique_ptr<Transport> transport, const RemoteHost& host, const QString& localDb,
              QObject* parent = nullptr);
    ~RemoteRun() override;  ///< stops following; the job on the host trains on

    /// Launches `spec` on the host, then follows it. failed() says why it could not.
    void start(const config::ExperimentSpec& spec);
    /// Follows an experiment launched earlier (`runs`: how many it planned, 0 unknown).
    void follow(qint64 remoteExperiment, int runs = 0);
    /// Asks the host to cancel the experiment; the tail then sees its runs end.
    void cancel();

    State state() const { return state_; }
    bool isActive() const {
        return state_ == State::Launching || state_ == State::Following || state_ == State::Waiting;
    }
    const RemoteHost& host() const { return host_; }
    qint64 remoteExperiment() const { return remoteExperiment_; }
    /// The local copy of the experiment; 0 until its first record arrived.
    qint64 localExperiment() const;
    int reconnects() const { return reconnects_; }
    qint64 rowsAdded() const { return rowsAdded_; }
    /// The tail in progress (tests kill it to drop the link); null between tails.
    QProcess* tailProcess() const { return tail_; }
    /// Tests shorten the back-off: `unitMs` instead of a second.
    void setBackoffUnit(int unitMs) { backoffUnitMs_ = unitMs; }

  Q_SIGNALS:
    void launched(qint64 remoteExperiment);
    /// Rows were written into the local database (the session's poll shows them).
    void rowsArrived(qint64 rows);
    /// The tail ended before the runs did; the next one starts in `delayMs`.
    void reconnecting(int attempt, int delayMs, const QString& why);
    void message(const QString& text);
    /// Every run ended (finished, failed or cancelled) and every row is here.
    void finished(bool cancelled);
    void failed(const QString& message);
    void stateChanged(ampbench::ui::RemoteRun::State state);

  private:
    /// False (and failed, nothing started) when the transport refuses the host (for
    /// ssh: an ssh option or shell syntax, destinationProblem).
    bool hostUsable();
    /// Opens the local database once; false (and failed) when it cannot.
    bool openLocal();
    QProcess* newProcess(const QStringList& args);
    void launchEnded(QProcess* p);
    void startTail();
    void readTail();
    void tailEnded(int exitCode, QProcess::ExitStatus status);
    /// `--since` after the last row held here: RUN:SEQ for each run of the experiment.
    QStringList resumeAfter() const;
    /// The local runs exist (as many as planned) and all ended.
    bool allEnded(bool* cancelled) const;
    void setState(State s);
    void fail(const QString& message);

    std::unique_ptr<Transport> transport_;
    RemoteHost host_;
    QString localPath_;
    std::unique_ptr<store::Database> db_;
    std::unique_ptr<stream::Ingestor> ingestor_;
    State state_ = State::Idle;
    qint64 remoteExperiment_ = 0;
    int plannedRuns_ = 0;
    QProcess* tail_ = nullptr;
    QByteArray partial_;  // an incomplete last line of the tail's output
    QString tailErr_;
    QTimer retry_;
    int attempt_ = 0;
    int reconnects_ = 0;
    int backoffUnitMs_ = 1000;
    qint64 rowsAdded_ = 0;
    bool cancelling_ = false;
};

}  // namespace ampbench::ui
