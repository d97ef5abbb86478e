// The connection: opening a database (checks, schema, recovery of what a dead process
// left running), its lock wait and id, and transactions.
#include "core/store/Database.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/run/FileKind.h"
#include "core/store/OutputFile.h"
#include "core/store/private/MappedFault.h"
#include "core/store/private/Owner.h"
#include "core/store/private/Schema.h"

namespace ampbench::store {

namespace {

namespace fs = std::filesystem;
using owner::kInterruptedError;
using owner::kNeverStarted;
using schema::ImplicitTransaction;
using schema::Statement;

[[noreturn]] void fail(StoreError::Kind kind, const std::string& message) {
    throw StoreError(kind, message);
}

/// True when nobody may write at `path` now: no -wal file beside it, and the file
/// or its folder is not writable (a read-only folder, file or file system).
bool readOnlyPlace(const std::string& path) {
    std::error_code ec;
    if (fs::exists(path + "-wal", ec))
        return false;
    const fs::path parent = fs::path(path).parent_path();
    const std::string folder = parent.empty() ? "." : parent.string();
    return ::access(path.c_str(), W_OK) != 0 || ::access(folder.c_str(), W_OK) != 0;
}

/// file: URI with immutable=1; '%', '?' and '#' in the path are escaped.
std::string immutableUri(const std::string& path) {
    std::string uri = "file:";
    for (char c : path) {
        if (c == '%' || c == '?' || c == '#') {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
            uri += buf;
        } else {
            uri += c;
        }
    }
    return uri + "?immutable=1";
}

}  // namespace

Database::Database(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {
    guardDatabase(path_);
}

Database::~Database() {
    sqlite3_close_v2(db_);
    releaseDatabase(path_);
}

std::unique_ptr<Database> Database::open(const std::string& path, Mode mode) {
    if (path.empty())
        fail(StoreError::Kind::CannotOpen, "no database file was given");
    std::error_code ec;
    const bool exists = fs::exists(path, ec);
    if (ec)
        fail(StoreError::Kind::CannotOpen, "cannot open " + path + ": " + ec.message());
    if (exists && fs::is_directory(path, ec))
        fail(StoreError::Kind::CannotOpen, "cannot open " + path + ": it is a folder, not a file");
    if (exists && !fs::is_regular_file(path, ec)) {
        // Opening a FIFO blocks until a writer comes; a device is no database either.
        fail(StoreError::Kind::CannotOpen, "cannot open " + path + ": it is " +
                                               run::describeSpecialFile(path) +
                                               ", not a database file; it was left untouched");
    }
    if (!exists && mode == Mode::ReadOnly) {
        fail(
            StoreError::Kind::CannotOpen,
            "cannot open " + path + ": the file does not exist (opened read-only, so not created)");
    }
    if (!exists) {
        const fs::path parent = fs::path(path).parent_path();
        if (!parent.empty() && !fs::exists(parent, ec)) {
            fs::create_directories(parent, ec);
            if (ec) {
                fail(StoreError::Kind::CannotOpen, "cannot create the folder " + parent.string() +
                                                       " for " + path + ": " + ec.message());
            }
        }
    } else if (schema::checkExistingFile(path, kSchemaVersion, mode == Mode::ReadWrite) &&
               mode == Mode::ReadWrite) {
        if (::access(path.c_str(), W_OK) != 0) {
            fail(StoreError::Kind::CannotOpen, "cannot open " + path +
                                                   " for writing: " + std::strerror(errno) +
                                                   " (it can still be opened read-only)");
        }
    }

    int flags = mode == Mode::ReadOnly ? SQLITE_OPEN_READONLY
                                       : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    std::string name = path;
    if (mode == Mode::ReadOnly && readOnlyPlace(path)) {
        // A reader of a WAL database creates -wal and -shm files beside it: impossible
        // in a read-only folder, and left behind next to a read-only file. Where no
        // -wal exists and nobody may write here, the file cannot change while we read
        // it, so it is opened as immutable and nothing is created.
        name = immutableUri(path);
        flags |= SQLITE_OPEN_URI;
    }
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
    std::unique_ptr<Database> db(new Database(path, raw));  // closes raw even on failure
    if (rc != SQLITE_OK)
        schema::throwOpen(raw, path, rc);
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, schema::kBusyTimeoutMs);
    fault::watchMappedFiles();
    db->prepareSchema(mode);
    if (mode == Mode::ReadWrite)
        db->recoverInterrupted();
    return db;
}

void Database::prepareSchema(Mode mode) {
    schema::exec(db_, path_, "PRAGMA foreign_keys = ON", "enabling foreign keys");
    // Checked again on this connection before its first write.
    schema::Identity id = schema::inspect(db_, path_);
    schema::checkIdentity(id, path_, kSchemaVersion);
    schema_version_ = id.user_version;
    if (mode == Mode::ReadOnly) {
        if (id.user_version == 0 && id.tables.empty()) {
            fail(StoreError::Kind::CannotOpen, "cannot open " + path_ +
                                                   " read-only: it is empty (no ampbench tables "
                                                   "yet); open it read-write once to create them");
        }
        if (id.user_version < kOldestReadable) {
            fail(StoreError::Kind::CannotOpen,
                 "cannot open " + path_ + " read-only: it holds schema " +
                     std::to_string(id.user_version) + " and needs upgrading to schema " +
                     std::to_string(kSchemaVersion) + "; open it read-write once");
        }
        return;
    }
    schema::useWal(db_, path_);
    schema::exec(db_, path_, "PRAGMA synchronous = NORMAL", "setting synchronous mode");
    if (id.user_version == kSchemaVersion)
        return;

    ImplicitTransaction tx(db_, path_);
    id = schema::inspect(db_, path_);  // another process may have migrated meanwhile
    schema::checkIdentity(id, path_, kSchemaVersion);
    if (id.user_version < kSchemaVersion)
        schema::migrate(db_, path_, id.user_version, kSchemaVersion);
    tx.commit();
    schema_version_ = kSchemaVersion;
}

void Database::requireIntact() const {
    Statement st(db_, path_, "PRAGMA quick_check(5)", "checking the file's integrity");
    std::string problems;
    while (st.step()) {
        const std::string line = st.text(0);
        if (line != "ok")
            problems += (problems.empty() ? "" : "; ") + line;
    }
    if (!problems.empty()) {
        fail(StoreError::Kind::Corrupt, path_ + " is damaged (" + problems +
                                            "); nothing was written to it. " +
                                            schema::recoveryAdvice(path_));
    }
}

void Database::recoverInterrupted() {
    struct Dead {
        int64_t id;
        bool running;
    };
    std::vector<Dead> runs;
    std::vector<int64_t> searches;
    const std::string host = owner::hostName();
    {
        Statement st(db_, path_,
                     "SELECT id, status = 'running', owner_pid, owner_token FROM runs "
                     "WHERE status IN ('running', 'queued') AND owner_host = ?1",
                     "looking for interrupted runs");
        st.bindText(1, host);
        while (st.step()) {
            const bool running = st.i64(1) != 0;
            const auto pid = st.isNull(2) ? std::nullopt : std::optional<int64_t>(st.i64(2));
            if (owner::gone(pid, host, st.text(3), running))
                runs.push_back({st.i64(0), running});
        }
    }
    {
        Statement st(db_, path_,
                     "SELECT id, owner_pid, owner_token FROM batch_searches "
                     "WHERE status = 'running' AND (owner_host = ?1 OR owner_host IS NULL)",
                     "looking for interrupted max-batch searches");
        st.bindText(1, host);
        while (st.step()) {
            // Searches from before schema 3 have no owner: they ran on this machine
            // or another, and none can still be running after an upgrade.
            const auto pid = st.isNull(1) ? std::nullopt : std::optional<int64_t>(st.i64(1));
            if (owner::gone(pid, host, st.text(2), true))
                searches.push_back(st.i64(0));
        }
    }
    if (runs.empty() && searches.empty())
        return;
    ImplicitTransaction tx(db_, path_);
    Statement up(db_, path_,
                 "UPDATE runs SET status = 'interrupted', error = ?2, failure = 'interrupted' "
                 "WHERE id = ?1 AND status = ?3",
                 "marking interrupted runs");
    int changed = 0;
    for (const Dead& d : runs) {
        up.bindInt(1, d.id).bindText(2, d.running ? kInterruptedError : kNeverStarted);
        up.bindText(3, d.running ? "running" : "queued").run();
        changed += sqlite3_changes(db_);
    }
    Statement search(db_, path_,
                     "UPDATE batch_searches SET status = 'interrupted', note = ?2 "
                     "WHERE id = ?1 AND status = 'running'",
                     "marking interrupted max-batch searches");
    for (int64_t id : searches)
        search.bindInt(1, id).bindText(2, kInterruptedError).run();
    tx.commit();
    recovered_ = changed;
}

// --- the connection ---

static_assert(Database::kLockWaitMs == schema::kBusyTimeoutMs, "the connection's usual lock wait");

void Database::setLockWait(int milliseconds) {
    sqlite3_busy_timeout(db_, milliseconds);
}

std::string Database::databaseId() const {
    if (schema_version_ < 9)
        return {};
    Statement st(db_, path_, "SELECT value FROM database_info WHERE key = 'database_id'",
                 "reading the database's id");
    return st.step() ? st.text(0) : std::string();
}

// data_version moves on other connections' commits; total_changes on our own.
int64_t Database::dataVersion() const {
    Statement st(db_, path_, "PRAGMA data_version", "reading the data version");
    st.step();
    return st.i64(0) + static_cast<int64_t>(sqlite3_total_changes64(db_));
}

// --- transactions ---

void Database::begin() {
    schema::exec(db_, path_, "BEGIN IMMEDIATE", "starting a transaction");
}

void Database::commit() {
    schema::exec(db_, path_, "COMMIT", "committing");
}

void Database::rollback() {
    if (sqlite3_get_autocommit(db_) == 0)
        schema::exec(db_, path_, "ROLLBACK", "rolling back");
}

}  // namespace ampbench::store
