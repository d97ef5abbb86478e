#include "ui/data/StoreSession.h"

#include <QFileInfo>
#include <exception>

#include "core/store/Database.h"

namespace ampbench::ui {

StoreSession::StoreSession(QObject* parent) : QObject(parent) {
    poll_.setInterval(kPollIntervalMs);
    connect(&poll_, &QTimer::timeout, this, &StoreSession::pollNow);
}

StoreSession::~StoreSession() = default;

bool StoreSession::open(const QString& path, QString* error, bool readOnly) {
    std::unique_ptr<store::Database> db;
    try {
        db = store::Database::open(path.toStdString(), readOnly ? store::Database::Mode::ReadOnly
                                                                : store::Database::Mode::ReadWrite);
    } catch (const std::exception& e) {
        const QFileInfo file(path);
        if (!readOnly && file.exists() && !file.isWritable()) {
            // A copy from a GPU server or someone else's file: watch it without writing.
            try {
                db = store::Database::open(path.toStdString(), store::Database::Mode::ReadOnly);
                readOnly = true;
            } catch (const std::exception&) {
            }
        }
        if (!db) {
            if (error) {
                *error = QString::fromStdString(e.what());
            }
            return false;
        }
    }
    db_ = std::move(db);
    readOnly_ = readOnly;
    path_ = QFileInfo(path).absoluteFilePath();
    lastVersion_ = -1;
    lastError_.clear();
    poll_.start();
    Q_EMIT opened(path_);
    pollNow();
    return true;
}

void StoreSession::close() {
    poll_.stop();
    db_.reset();
    path_.clear();
    readOnly_ = false;
    Q_EMIT closed();
}

void StoreSession::pollNow() {
    if (!db_) {
        return;
    }
    int64_t version = 0;
    try {
        version = db_->dataVersion();
    } catch (const std::exception& e) {
        const QString message = QString::fromStdString(e.what());
        if (message != lastError_) {
            lastError_ = message;
            Q_EMIT readFailed(message);
        }
        return;
    }
    lastError_.clear();
    if (version != lastVersion_) {
        lastVersion_ = version;
        Q_EMIT changed();
    }
}

}  // namespace ampbench::ui
