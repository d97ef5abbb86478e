#pragma once
// Shared by the remote-run ui tests (test_ui_remote, test_ui_transport): the spec a host
// trains, Test connection run to its end, a run's rows as stream lines, a host of this
// build's CLI, its job's pid and stored steps, and PATH without ssh.
#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <string>
#include <vector>

#include "UiTestSupport.h"
#include "core/store/Database.h"
#include "core/stream/RecordStream.h"
#include "tests/e2e/StoredSteps.h"
#include "ui/remote/ConnectionTest.h"
#include "ui/remote/RemoteHost.h"

namespace ampbench::ui::test {

/// A synthetic experiment that trains some seconds per run on one CPU thread.
inline config::ExperimentSpec remoteSpec(int64_t steps) {
    config::ExperimentSpec s = tinySpec(steps);
    s.name = "remote-ui";
    s.data.name = "synthetic-images";
    s.model.name = "mlp";
    s.model.width = 32;
    s.micro_batch = 32;
    s.eval_interval = 100;
    s.seeds = {1};
    return s;
}

/// Test connection of `host` through `ssh`, waited for (a minute at most).
inline ConnectionResult testConnection(const RemoteHost& host, const QString& ssh) {
    ConnectionTest t;
    ConnectionResult result;
    bool done = false;
    QObject::connect(&t, &ConnectionTest::finished, [&](const ConnectionResult& r) {
        result = r;
        done = true;
    });
    t.start(ssh, host);
    [&] { QTRY_VERIFY_WITH_TIMEOUT(done, 60000); }();
    return result;
}

/// Every row of `run` as the record stream writes it, for row-for-row comparisons.
inline std::vector<std::string> rowsOf(const store::Database& db, int64_t run) {
    std::vector<std::string> rows;
    for (auto& r : db.recordsSince(run, 0)) {
        rows.push_back(stream::encode(stream::Record{stream::RowRecord{0, r}}));
    }
    return rows;
}

/// A host "gpu" whose CLI is this build's, its database in `server`.
inline RemoteHost hostOf(const QTemporaryDir& server) {
    RemoteHost h;
    h.label = QStringLiteral("gpu");
    h.destination = QStringLiteral("me@gpu");
    h.port = 2222;
    h.cli = QStringLiteral(AMPBENCH_CLI_PATH);
    h.database = server.filePath(QStringLiteral("server.db"));
    return h;
}

/// The pid of the job that trains experiment `experiment` of `host`, from the job file
/// `launch` leaves beside the host's database (the hosts of these tests are this
/// machine; read directly, not through `status`, whose start-up takes seconds on a busy
/// machine while a short job trains on); 0 when unknown.
inline qint64 jobPid(const RemoteHost& host, qint64 experiment) {
    QFile file(host.database + QStringLiteral(".jobs/") + QString::number(experiment) +
               QStringLiteral(".json"));
    if (!file.open(QIODevice::ReadOnly)) {
        return 0;
    }
    return QJsonDocument::fromJson(file.readAll()).object().value("pid").toInteger();
}

/// The steps the first run of experiment `experiment` has stored in `host`'s database
/// (0 while there is none).
inline int64_t firstRunSteps(const RemoteHost& host, qint64 experiment) {
    return ampbench::test::firstRunSteps(host.database.toStdString(), experiment);
}

/// PATH holds only an empty folder of `server` while it lives: no ssh can be found.
class NoSshOnPath {
  public:
    explicit NoSshOnPath(const QTemporaryDir& server) : path_(qgetenv("PATH")) {
        const QDir bare(server.filePath(QStringLiteral("no-ssh-bin")));
        bare.mkpath(QStringLiteral("."));
        qputenv("PATH", bare.absolutePath().toLocal8Bit());
    }
    ~NoSshOnPath() { qputenv("PATH", path_); }
    NoSshOnPath(const NoSshOnPath&) = delete;
    NoSshOnPath& operator=(const NoSshOnPath&) = delete;
    bool holds() const { return QStandardPaths::findExecutable(QStringLiteral("ssh")).isEmpty(); }

  private:
    QByteArray path_;
};

}  // namespace ampbench::ui::test
