#include "ui/remote/RemoteRun.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

#include "core/config/SpecJson.h"
#include "core/store/Database.h"
#include "core/stream/Ingestor.h"

namespace ampbench::ui {
namespace {

std::string onHost(const std::string& path, const QString& folder) {
    if (path.empty()) {
        return path;
    }
    const QString name = QFileInfo(QString::fromStdString(path)).fileName();
    return (folder + QChar('/') + name).toStdString();
}

QString lastLines(const QString& text, int n = 6) {
    QStringList lines = text.trimmed().split(QChar('\n'), Qt::SkipEmptyParts);
    return lines.mid(std::max<qsizetype>(0, lines.size() - n)).join(QChar('\n'));
}

}  // namespace

config::ExperimentSpec specForHost(const config::ExperimentSpec& spec, const RemoteHost& host) {
    config::ExperimentSpec s = spec;
    QString folder = host.dataDir.trimmed();
    while (folder.size() > 1 && folder.endsWith(QChar('/'))) {
        folder.chop(1);
    }
    if (folder.isEmpty()) {
        return s;
    }
    if (s.data.name == "fashion-mnist") {
        s.data.dir = folder.toStdString();
    }
    s.data.path = onHost(s.data.path, folder);
    s.data.labels = onHost(s.data.labels, folder);
    s.data.val_path = onHost(s.data.val_path, folder);
    s.model.file = onHost(s.model.file, folder);
    return s;
}

int RemoteRun::backoffMs(int attempt, int unitMs) {
    const int shift = std::clamp(attempt - 1, 0, 16);
    const qint64 ms = static_cast<qint64>(unitMs) << shift;
    return static_cast<int>(
        std::min<qint64>(ms, static_cast<qint64>(kMaxBackoffMs) * unitMs / 1000));
}

RemoteRun::RemoteRun(const QString& ssh, const RemoteHost& host, const QString& localDb,
                     QObject* parent)
    : RemoteRun(transportFor(ssh, host), host, localDb, parent) {}

RemoteRun::RemoteRun(std::unique_ptr<Transport> transport, const RemoteHost& host,
                     const QString& localDb, QObject* parent)
    : QObject(parent), transport_(std::move(transport)), host_(host), localPath_(localDb) {
    retry_.setSingleShot(true);
    connect(&retry_, &QTimer::timeout, this, &RemoteRun::startTail);
}

RemoteRun::~RemoteRun() {
    retry_.stop();
    for (QProcess* p : findChildren<QProcess*>()) {
        p->disconnect(this);
        p->kill();
        p->waitForFinished(2000);
    }
    if (ingestor_) {
        try {
            ingestor_->finish();
        } catch (const std::exception&) {
        }
    }
}

void RemoteRun::setState(State s) {
    if (state_ != s) {
        state_ = s;
        Q_EMIT stateChanged(s);
    }
}

void RemoteRun::fail(const QString& message) {
    retry_.stop();
    setState(State::Failed);
    Q_EMIT failed(message);
}

QProcess* RemoteRun::newProcess(const QStringList& args) {
    auto* p = new QProcess(this);
    QStringList argv = transport_->command(args);
    p->setProgram(argv.takeFirst());
    p->setArguments(argv);
    return p;
}

qint64 RemoteRun::localExperiment() const {
    if (!db_ || remoteExperiment_ == 0) {
        return 0;
    }
    try {
        return db_->experimentFromOrigin(host_.label.toStdString(), remoteExperiment_).value_or(0);
    } catch (const std::exception&) {
        return 0;
    }
}

bool RemoteRun::openLocal() {
    if (db_) {
        return true;
    }
    try {
        db_ = store::Database::open(localPath_.toStdString());
        return true;
    } catch (const std::exception& e) {
        fail(tr("Cannot open %1 for the remote runs: %2")
                 .arg(localPath_, QString::fromStdString(e.what())));
        return false;
    }
}

bool RemoteRun::hostUsable() {
    if (QString problem = transport_->problem(); !problem.isEmpty()) {
        fail(problem);
        return false;
    }
    return true;
}

void RemoteRun::start(const config::ExperimentSpec& spec) {
    if (!hostUsable() || !openLocal()) {
        return;
    }
    setState(State::Launching);
    Q_EMIT message(tr("Launching on %1\u2026").arg(host_.label));
    QProcess* p = newProcess(launchArguments(host_));
    connect(p, &QProcess::finished, this, [this, p] { launchEnded(p); });
    connect(p, &QProcess::errorOccurred, this, [this, p](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) {
            p->deleteLater();
            fail(transport_->notStarted(p->program()));
        }
    });
    p->start();
    p->write(QByteArray::fromStdString(config::specToJsonText(specForHost(spec, host_))));
    p->closeWriteChannel();
}

void RemoteRun::launchEnded(QProcess* p) {
    p->deleteLater();
    const QString out = QString::fromUtf8(p->readAllStandardOutput());
    const QString err = QString::fromUtf8(p->readAllStandardError());
    const int code = p->exitStatus() == QProcess::NormalExit ? p->exitCode() : -1;
    if (code != 0) {
        QString why = transport_->failure(code, err);
        // The remote shell's own "not found" (exit 127), not a missing data file's.
        if (why.isEmpty() &&
            (code == 127 || err.contains(host_.cli + QStringLiteral(": not found")) ||
             err.contains(QStringLiteral("command not found")))) {
            why = tr("ampbench-cli is not at \u201c%1\u201d on %2 (Hosts\u2026 \u203a Test "
                     "connection).")
                      .arg(host_.cli, host_.label);
        }
        if (why.isEmpty()) {
            why = tr("%1 did not start the experiment (exit %2):\n%3")
                      .arg(host_.label)
                      .arg(code)
                      .arg(lastLines(err, 12));
        }
        fail(why);
        return;
    }
    const QString line = lastLines(out, 1);
    const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
    const qint64 id = static_cast<qint64>(o.value(QStringLiteral("experiment_id")).toDouble());
    if (id <= 0) {
        fail(tr("%1 answered the launch with \u201c%2\u201d, not an experiment id")
                 .arg(host_.label, line));
        return;
    }
    Q_EMIT launched(id);
    follow(id, o.value(QStringLiteral("runs")).toInt());
}

void RemoteRun::follow(qint64 remoteExperiment, int runs) {
    if (!hostUsable() || !openLocal()) {
        return;
    }
    remoteExperiment_ = remoteExperiment;
    plannedRuns_ = runs;
    Q_EMIT message(tr("Experiment %1 training on %2").arg(remoteExperiment).arg(host_.label));
    startTail();
}

QStringList RemoteRun::resumeAfter() const {
    QStringList since;
    const qint64 local = localExperiment();
    if (local == 0) {
        return since;
    }
    for (const auto& r : db_->runs(local)) {
        const auto seq =
            stream::lastSeqFromOrigin(*db_, host_.label.toStdString(), r.origin_run_id);
        if (seq && *seq > 0) {
            since << QStringLiteral("%1:%2").arg(r.origin_run_id).arg(*seq);
        }
    }
    return since;
}

bool RemoteRun::allEnded(bool* cancelled) const {
    const qint64 local = localExperiment();
    if (local == 0) {
        return false;
    }
    const auto runs = db_->runs(local);
    if (runs.empty() || (plannedRuns_ > 0 && static_cast<int>(runs.size()) < plannedRuns_)) {
        return false;
    }
    bool anyCancelled = false;
    for (const auto& r : runs) {
        if (r.status == run::RunStatus::Running || r.status == run::RunStatus::Queued) {
            return false;
        }
        anyCancelled |= r.status == run::RunStatus::Cancelled;
    }
    if (cancelled) {
        *cancelled = anyCancelled;
    }
    return true;
}

void RemoteRun::startTail() {
    QStringList since;
    try {
        since = resumeAfter();
    } catch (const std::exception& e) {
        fail(tr("Reading %1 failed: %2").arg(localPath_, QString::fromStdString(e.what())));
        return;
    }
    QStringList args{QStringLiteral("tail"), QStringLiteral("--experiment"),
                     QString::number(remoteExperiment_)};
    if (!since.isEmpty()) {
        args << QStringLiteral("--since") << since;
    }
    args << QStringLiteral("--follow") << QStringLiteral("--stream");
    ingestor_ = std::make_unique<stream::Ingestor>(*db_, host_.label.toStdString());
    partial_.clear();
    tailErr_.clear();
    tail_ = newProcess(args);
    connect(tail_, &QProcess::readyReadStandardOutput, this, &RemoteRun::readTail);
    connect(tail_, &QProcess::readyReadStandardError, this,
            [this] { tailErr_ += QString::fromUtf8(tail_->readAllStandardError()); });
    connect(tail_, &QProcess::finished, this, &RemoteRun::tailEnded);
    connect(tail_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) {
            const QString program = tail_->program();
            tail_->disconnect(this);
            tail_->deleteLater();
            tail_ = nullptr;
            fail(transport_->notStarted(program));
        }
    });
    tail_->setStandardInputFile(QProcess::nullDevice());
    setState(State::Following);
    tail_->start();
}

void RemoteRun::readTail() {
    if (!tail_ || !ingestor_) {
        return;
    }
    partial_ += tail_->readAllStandardOutput();
    const qint64 before = ingestor_->counts().rows_added;
    try {
        qsizetype start = 0;
        for (qsizetype nl = partial_.indexOf('\n'); nl >= 0; nl = partial_.indexOf('\n', start)) {
            ingestor_->feed(partial_.mid(start, nl - start).toStdString());
            start = nl + 1;
        }
        partial_.remove(0, start);
        ingestor_->commit();  // the input paused: what arrived is visible now
    } catch (const std::exception& e) {
        fail(tr("Writing the remote rows into %1 failed: %2")
                 .arg(localPath_, QString::fromStdString(e.what())));
        tail_->kill();
        return;
    }
    if (ingestor_->refused()) {
        const QString why = ingestor_->problems().empty()
                                ? QString()
                                : QString::fromStdString(ingestor_->problems().back().message);
        tail_->disconnect(this);
        tail_->kill();
        fail(tr("%1 sends a record stream this build cannot read: %2").arg(host_.label, why));
        return;
    }
    const qint64 added = ingestor_->counts().rows_added - before;
    if (added > 0) {
        attempt_ = 0;  // the link works: the next drop starts the back-off over
        rowsAdded_ += added;
        Q_EMIT rowsArrived(added);
    }
}

void RemoteRun::tailEnded(int exitCode, QProcess::ExitStatus status) {
    if (!tail_) {
        return;
    }
    readTail();
    if (state_ == State::Failed) {
        return;
    }
    tail_->deleteLater();
    tail_ = nullptr;
    try {
        if (ingestor_) {
            ingestor_->finish();
        }
        bool cancelled = false;
        if (allEnded(&cancelled)) {
            setState(State::Done);
            Q_EMIT message(cancelled ? tr("Experiment %1 on %2 cancelled; its rows are here")
                                           .arg(remoteExperiment_)
                                           .arg(host_.label)
                                     : tr("Experiment %1 on %2 ended; every row is here")
                                           .arg(remoteExperiment_)
                                           .arg(host_.label));
            Q_EMIT finished(cancelled);
            return;
        }
    } catch (const std::exception& e) {
        fail(tr("Reading %1 failed: %2").arg(localPath_, QString::fromStdString(e.what())));
        return;
    }
    const int code = status == QProcess::NormalExit ? exitCode : -1;
    // The remote CLI refused the request (no such experiment, no tail, a damaged
    // database): reconnecting would only repeat it.
    if (code == 2 || code == 4 || code == 5 || code == 127) {
        fail(tr("%1 stopped sending the experiment's records (exit %2):\n%3")
                 .arg(host_.label)
                 .arg(code)
                 .arg(lastLines(tailErr_)));
        return;
    }
    ++attempt_;
    ++reconnects_;
    const int delay = backoffMs(attempt_, backoffUnitMs_);
    QString why = transport_->failure(code, tailErr_);
    if (why.isEmpty()) {
        why = code < 0 ? tr("the connection to %1 was lost").arg(host_.label)
                       : tr("the tail on %1 ended (exit %2) before the runs did")
                             .arg(host_.label)
                             .arg(code);
    }
    setState(State::Waiting);
    Q_EMIT reconnecting(attempt_, delay, why);
    Q_EMIT message(tr("Connection to %1 lost; reconnecting in %2 s")
                       .arg(host_.label)
                       .arg(delay / 1000.0, 0, 'f', delay < 1000 ? 1 : 0));
    retry_.start(delay);
}

void RemoteRun::cancel() {
    if (remoteExperiment_ == 0 || cancelling_) {
        return;
    }
    cancelling_ = true;
    Q_EMIT message(
        tr("Cancelling experiment %1 on %2\u2026").arg(remoteExperiment_).arg(host_.label));
    QProcess* p = newProcess({QStringLiteral("cancel"), QStringLiteral("--experiment"),
                              QString::number(remoteExperiment_)});
    p->setStandardInputFile(QProcess::nullDevice());
    connect(p, &QProcess::finished, this, [this, p](int code, QProcess::ExitStatus st) {
        p->deleteLater();
        cancelling_ = false;
        const QString err = QString::fromUtf8(p->readAllStandardError());
        if (st == QProcess::NormalExit && code == 0) {
            Q_EMIT message(lastLines(QString::fromUtf8(p->readAllStandardOutput()), 1));
            if (state_ == State::Waiting) {
                retry_.start(0);  // fetch the cancelled runs now
            }
            return;
        }
        QString why = transport_->failure(code, err);
        Q_EMIT message(
            tr("Cancel on %1 failed: %2").arg(host_.label, why.isEmpty() ? lastLines(err) : why));
    });
    p->start();
}

}  // namespace ampbench::ui
