#pragma once
// Reading and analysing a whole experiment takes from a few milliseconds to
// seconds; the GUI thread must not wait for it. runStoreTask runs a function on
// a thread of its own with its own read-only connection to the database (a
// connection is not shared between threads) and hands the result back on the
// receiver's thread. If the receiver is gone by then, the result is dropped.
#include <QObject>
#include <QString>
#include <QThread>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/store/Database.h"

namespace ampbench::ui {

/// What a store task produced: a value, or why not.
template <class T>
struct StoreTaskResult {
    std::optional<T> value;
    QString error;  ///< set when opening the database or the work threw
};

/// Runs `work(db)` on a new thread with a read-only connection to `dbPath`, then
/// `done(result)` on `receiver`'s thread. Exceptions become result.error.
template <class T>
void runStoreTask(QObject* receiver, const QString& dbPath,
                  std::function<T(const store::Database&)> work,
                  std::function<void(StoreTaskResult<T>&)> done) {
    auto result = std::make_shared<StoreTaskResult<T>>();
    QThread* thread =
        QThread::create([result, path = dbPath.toStdString(), work = std::move(work)] {
            try {
                auto db = store::Database::open(path, store::Database::Mode::ReadOnly);
                result->value.emplace(work(*db));
            } catch (const std::exception& e) {
                result->error = QString::fromStdString(e.what());
            }
        });
    // Queued to the receiver's thread; the connection dies with the receiver.
    QObject::connect(thread, &QThread::finished, receiver,
                     [result, done = std::move(done)] { done(*result); });
    QObject::connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start(QThread::LowPriority);
}

}  // namespace ampbench::ui
