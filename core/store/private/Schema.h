#pragma once
// Private to store/: the schema, its migrations, the checks that recognise a
// workbench database, and small RAII helpers over SQLite's C API.
#include <sqlite3.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/util/Utf8.h"

namespace ampbench::store::schema {

/// PRAGMA application_id of every workbench database: "AMPB" in ASCII.
constexpr int32_t kApplicationId = 0x414D5042;

/// How long a connection waits for another one's lock before giving up.
constexpr int kBusyTimeoutMs = 5000;

/// What a file says about itself, read without writing anything.
struct Identity {
    int32_t application_id = 0;
    int user_version = 0;
    std::vector<std::string> tables;          ///< user tables (no sqlite_* internals)
    std::vector<std::string> foreign_tables;  ///< those of them that are not ours
};

Identity inspect(sqlite3* db, const std::string& path);

/// Throws StoreError (ForeignDatabase or NewerSchema) when the file is not one
/// this build may open. `highest` is the newest schema this build reads.
void checkIdentity(const Identity& id, const std::string& path, int highest);

/// Checks an existing file before any read-write connection touches it: the
/// header bytes, then (when `deep`) the identity through a read-only connection.
/// Returns false for an empty file, which is then treated as new.
bool checkExistingFile(const std::string& path, int highest, bool deep);

/// Brings the schema from `from` to `to`, one step at a time, inside the
/// caller's transaction; sets application_id and user_version.
void migrate(sqlite3* db, const std::string& path, int from, int to);

/// The time now as ISO-8601 UTC with milliseconds, as every *_at column holds it.
std::string nowIso();

/// How to save what is readable from a damaged file, for error messages.
std::string recoveryAdvice(const std::string& path);

/// Runs SQL without results; throws StoreError(Io) naming the file and the step.
void exec(sqlite3* db, const std::string& path, const std::string& sql, const char* what);

/// Puts the file in WAL mode. The switch takes the exclusive lock without SQLite's
/// busy handler, so a second program opening a new file at the same moment would
/// fail at once: it is retried for up to kBusyTimeoutMs.
void useWal(sqlite3* db, const std::string& path);

/// Throws StoreError with sqlite3_errmsg: NotADatabase for SQLITE_NOTADB, Corrupt
/// for SQLITE_CORRUPT, Busy for SQLITE_BUSY/LOCKED, Io otherwise.
[[noreturn]] void throwIo(sqlite3* db, const std::string& path, const std::string& what);

/// Throws StoreError(CannotOpen or NotADatabase) for a failed sqlite3_open_v2,
/// with SQLite's message and the OS reason.
[[noreturn]] void throwOpen(sqlite3* db, const std::string& path, int rc);

/// One prepared statement; finalized when it goes out of scope. `path` must
/// outlive it (it names the file in error messages).
class Statement {
  public:
    Statement(sqlite3* db, const std::string& path, const std::string& sql, std::string what)
        : db_(db), path_(path), what_(std::move(what)) {
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr) != SQLITE_OK)
            throwIo(db_, path_, what_);
    }
    ~Statement() { sqlite3_finalize(st_); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bindInt(int i, int64_t v) { return check(sqlite3_bind_int64(st_, i, v)); }
    Statement& bindReal(int i, double v) { return check(sqlite3_bind_double(st_, i, v)); }
    /// Every text the workbench stores passes here, so it is stored as UTF-8: a byte
    /// that is not (a script's stderr, a remote program's output) becomes U+FFFD.
    Statement& bindText(int i, const std::string& v) {
        if (!util::isUtf8(v)) {
            const std::string valid = util::validUtf8(v);
            return check(sqlite3_bind_text(st_, i, valid.data(), static_cast<int>(valid.size()),
                                           SQLITE_TRANSIENT));
        }
        return check(
            sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    }
    /// True while rows come; false when done.
    bool step() {
        const int rc = sqlite3_step(st_);
        if (rc == SQLITE_ROW)
            return true;
        if (rc == SQLITE_DONE)
            return false;
        throwIo(db_, path_, what_);
    }
    /// Runs a statement without results, then makes it ready for new bindings.
    void run() {
        step();
        reset();
    }
    /// Makes a statement ready to run again (after step()), with new bindings.
    void reset() {
        sqlite3_reset(st_);
        sqlite3_clear_bindings(st_);
    }
    int64_t i64(int col) const { return sqlite3_column_int64(st_, col); }
    bool isNull(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }
    /// SQLite stores NaN as NULL; it comes back as NaN.
    double real(int col) const {
        return isNull(col) ? std::numeric_limits<double>::quiet_NaN()
                           : sqlite3_column_double(st_, col);
    }
    std::string text(int col) const {
        const auto* p = sqlite3_column_text(st_, col);
        return p ? std::string(reinterpret_cast<const char*>(p),
                               static_cast<size_t>(sqlite3_column_bytes(st_, col)))
                 : std::string();
    }

  private:
    Statement& check(int rc) {
        if (rc != SQLITE_OK)
            throwIo(db_, path_, what_);
        return *this;
    }
    sqlite3* db_;
    const std::string& path_;
    std::string what_;
    sqlite3_stmt* st_ = nullptr;
};

/// Begins a write transaction unless the caller already holds one; rolls back
/// unless commit() was reached.
class ImplicitTransaction {
  public:
    ImplicitTransaction(sqlite3* db, const std::string& path)
        : db_(db), path_(path), owns_(sqlite3_get_autocommit(db) != 0) {
        if (owns_)
            exec(db_, path_, "BEGIN IMMEDIATE", "starting a transaction");
    }
    ~ImplicitTransaction() {
        if (owns_)
            sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    ImplicitTransaction(const ImplicitTransaction&) = delete;
    ImplicitTransaction& operator=(const ImplicitTransaction&) = delete;
    void commit() {
        if (owns_)
            exec(db_, path_, "COMMIT", "committing");
        owns_ = false;
    }

  private:
    sqlite3* db_;
    const std::string& path_;
    bool owns_;
};

/// Several reads that must see one state of the file (another program may commit
/// between two statements): a read transaction unless the caller already holds
/// one, ended when it goes out of scope.
class ReadSnapshot {
  public:
    ReadSnapshot(sqlite3* db, const std::string& path)
        : db_(db), owns_(sqlite3_get_autocommit(db) != 0) {
        if (owns_)
            exec(db_, path, "BEGIN", "starting a read");
    }
    ~ReadSnapshot() {
        if (owns_)
            sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);  // a read: nothing to lose
    }
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;

  private:
    sqlite3* db_;
    bool owns_;
};

}  // namespace ampbench::store::schema
