#pragma once
#include <QObject>
#include <QString>
#include <QTimer>
#include <cstdint>
#include <memory>

namespace ampbench::store {
class Database;
}

namespace ampbench::ui {

/// The GUI thread's connection to the open database, and the poll that notices
/// commits by any connection: this process's training worker or another process
/// (ampbench-cli writing into the same file). GUI thread only.
class StoreSession : public QObject {
    Q_OBJECT
  public:
    static constexpr int kPollIntervalMs = 250;

    explicit StoreSession(QObject* parent = nullptr);
    ~StoreSession() override;

    /// Opens (or creates) `path`; a file this user may not write is opened
    /// read-only, and so is any with `readOnly` (watched, never changed). On failure
    /// the previous database stays open, the file is left as it was, and `error` says
    /// why in the store's words.
    bool open(const QString& path, QString* error, bool readOnly = false);
    void close();
    bool isOpen() const { return db_ != nullptr; }
    /// Opened read-only: nothing can be trained into it, renamed or deleted.
    bool isReadOnly() const { return readOnly_; }
    QString path() const { return path_; }
    /// The connection; null when closed. Callers catch store::StoreError.
    ampbench::store::Database* db() const { return db_.get(); }

    /// Checks the data version now; emits changed() when any connection committed.
    void pollNow();

  Q_SIGNALS:
    void opened(const QString& path);
    void closed();
    /// Something in the database changed since the last poll (or it was just opened).
    void changed();
    /// Reading the database failed (e.g. the file went away); polling continues.
    void readFailed(const QString& message);

  private:
    std::unique_ptr<ampbench::store::Database> db_;
    QString path_;
    bool readOnly_ = false;
    QTimer poll_;
    int64_t lastVersion_ = -1;
    QString lastError_;  // reported once until reading works again
};

}  // namespace ampbench::ui
