#pragma once
// Private to stream/: how the Ingestor writes: one transaction at a time, each past
// another program's lock as a training run waits it out (withLock), shared by
// Ingestor.cpp (rows, statuses, cut-off runs) and IngestRuns.cpp (experiments, runs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "core/store/Database.h"
#include "core/stream/Ingestor.h"

namespace ampbench::stream {
namespace detail {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// A wait shorter than this (another writer's commit) goes unsaid.
inline constexpr milliseconds kSayAfter(1000);

inline std::string secondsText(Clock::duration d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", std::chrono::duration<double>(d).count());
    return buf;
}

inline std::string limitText(milliseconds limit) {
    const auto ms = limit.count();
    if (ms % 60000 == 0)
        return std::to_string(ms / 60000) + " min";
    return secondsText(limit);
}

/// One write transaction; rolled back unless committed.
class Transaction {
  public:
    explicit Transaction(store::Database& db) : db_(db) { db_.begin(); }
    ~Transaction() {
        if (open_) {
            try {
                db_.rollback();
            } catch (...) {
            }
        }
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit() {
        db_.commit();
        open_ = false;
    }

  private:
    store::Database& db_;
    bool open_ = true;
};

/// Sets the connection's lock wait for one try, then the usual one again.
class LockWaitScope {
  public:
    LockWaitScope(store::Database& db, milliseconds wait) : db_(db) {
        db_.setLockWait(static_cast<int>(wait.count()));
    }
    ~LockWaitScope() { db_.setLockWait(store::Database::kLockWaitMs); }
    LockWaitScope(const LockWaitScope&) = delete;
    LockWaitScope& operator=(const LockWaitScope&) = delete;

  private:
    store::Database& db_;
};

}  // namespace detail

template <class Write>
void Ingestor::withLock(const std::string& what, Write write) {
    if (!lock_wait_) {
        write();
        return;
    }
    const store::LockPolicy& policy = lock_wait_->policy;
    const auto start = detail::Clock::now();
    detail::milliseconds pause(100);
    bool told = false;
    for (;;) {
        try {
            const detail::LockWaitScope scope(db_, policy.try_wait);
            write();
            break;
        } catch (const store::StoreError& e) {
            if (e.kind() != store::StoreError::Kind::Busy)
                throw;
        }
        const auto held = detail::Clock::now() - start;
        if (held >= policy.limit) {
            throw store::StoreError(
                store::StoreError::Kind::Busy,
                db_.path() + " stayed locked by another program for " + detail::secondsText(held) +
                    " (the limit, as for training, is " + detail::limitText(policy.limit) + "); " +
                    what + " could not be written");
        }
        if (!told && held >= detail::kSayAfter && lock_wait_->notice) {
            lock_wait_->notice(db_.path() + " is locked by another program; waiting up to " +
                               detail::limitText(policy.limit) + " to write " + what);
        }
        told = told || held >= detail::kSayAfter;
        const auto left = std::chrono::duration_cast<detail::milliseconds>(policy.limit - held);
        std::this_thread::sleep_for(std::min(pause, left));
        pause = std::min(pause * 2, policy.max_backoff);
    }
    if (told && lock_wait_->notice) {
        lock_wait_->notice("the lock on " + db_.path() + " went after " +
                           detail::secondsText(detail::Clock::now() - start) + "; " + what +
                           " written");
    }
}

}  // namespace ampbench::stream
