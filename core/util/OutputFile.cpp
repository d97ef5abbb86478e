#include "core/util/OutputFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "core/util/FileKind.h"

namespace ampbench::util {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
    throw OutputError("cannot write " + path + ": " + reason);
}

/// The process's umask without changing it (umask(2) would, for a moment, for
/// every thread): Linux reports it in /proc/self/status.
mode_t currentUmask() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("Umask:", 0) == 0)
            return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
    }
    return 022;
}

/// The path with every existing part resolved (links, "..").
std::string resolved(const std::string& path) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
    return ec ? path : p.string();
}

/// The databases this process has open, as their paths were given.
struct Guarded {
    std::mutex mutex;  // guards paths: connections open and close on any thread
    std::multiset<std::string> paths;
};

Guarded& guarded() {
    static Guarded g;
    return g;
}

void writeAll(int fd, const std::string& path, std::string_view bytes,
              const std::function<void(int)>& abandon) {
    const char* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            abandon(errno);
            fail(path, std::strerror(errno));
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
}

/// A FIFO or character device (or a descriptor's file under /proc) is written into as it is:
/// renaming a file over it would replace the system's /dev/null or the reader's pipe with a regular
/// file.
void writeIntoStream(const std::string& path, FileKind kind, std::string_view bytes) {
    int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (kind == FileKind::Regular ? O_TRUNC : 0);
    if (kind == FileKind::Fifo)
        flags |= O_NONBLOCK;  // to tell "nobody reads it" at once instead of waiting forever
    const int fd = ::open(path.c_str(), flags);
    if (fd < 0) {
        if (errno == ENXIO && kind == FileKind::Fifo)
            fail(path, "it is a FIFO (named pipe) that nobody reads");
        fail(path, std::strerror(errno));
    }
    if (kind == FileKind::Fifo)
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a reader exists: wait for it
    writeAll(fd, path, bytes, [fd](int) { ::close(fd); });
    if (::close(fd) != 0)
        fail(path, std::strerror(errno));
}

/// The pid in the name of a temporary file of a write to `name`
/// (".NAME.PID-N.tmp"), or 0 when `file` is no such name.
pid_t temporaryWriter(const std::string& file, const std::string& name) {
    const std::string prefix = "." + name + ".";
    const std::string suffix = ".tmp";
    if (file.size() <= prefix.size() + suffix.size() ||
        file.compare(0, prefix.size(), prefix) != 0 ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
        return 0;
    const std::string middle =
        file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
    const size_t dash = middle.find('-');
    if (dash == 0 || dash == std::string::npos || dash + 1 == middle.size() || dash > 9 ||
        middle.find_first_not_of("0123456789-") != std::string::npos ||
        middle.find('-', dash + 1) != std::string::npos)
        return 0;
    return static_cast<pid_t>(std::stol(middle.substr(0, dash)));
}

/// A write killed before its rename (kill -9, a power cut) leaves its temporary
/// file; the next write to the same name removes those whose writer is gone.
void removeStaleTemporaries(const fs::path& folder, const std::string& name) {
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        const pid_t pid = temporaryWriter(it->path().filename().string(), name);
        if (pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH)
            ::unlink(it->path().c_str());
    }
}

/// A new temporary file beside the target, ".NAME.PID-N.tmp" (N counts this
/// process's writes), created exclusively and never through a link; -1 and errno
/// when it cannot be.
int createTemporary(const fs::path& folder, const std::string& name, std::string& temp) {
    static std::atomic<unsigned long> written{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
        temp = (folder / ("." + name + "." + std::to_string(::getpid()) + "-" +
                          std::to_string(++written) + ".tmp"))
                   .string();
        const int fd =
            ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;  // EEXIST: left by an earlier process that had this pid
    }
    return -1;
}

}  // namespace

void guardDatabase(const std::string& database) {
    std::lock_guard<std::mutex> lock(guarded().mutex);
    guarded().paths.insert(database);
}

void releaseDatabase(const std::string& database) {
    std::lock_guard<std::mutex> lock(guarded().mutex);
    auto& paths = guarded().paths;
    if (auto it = paths.find(database); it != paths.end())
        paths.erase(it);
}

std::string outputClash(const std::string& output, const std::string& database) {
    if (output.empty() || database.empty())
        return {};
    const std::string out = resolved(output);
    // SQLite keeps the companions beside the file a link points to.
    for (const std::string& db : {database, resolved(database)}) {
        for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
            const std::string candidate = db + suffix;
            std::error_code ec;
            const bool same = resolved(candidate) == out ||
                              (fs::exists(output, ec) && fs::exists(candidate, ec) &&
                               fs::equivalent(output, candidate, ec));
            if (same) {
                return "refusing to write " + output + ": it is " +
                       (*suffix ? std::string("the ") + (suffix + 1) + " file of " : "") +
                       "the database " + database +
                       " that this command reads; choose another file name";
            }
        }
    }
    return {};
}

void writeFileAtomically(const std::string& path, std::string_view bytes) {
    if (path.empty())
        throw OutputError("no output file was given");
    {
        std::set<std::string> open;
        {
            std::lock_guard<std::mutex> lock(guarded().mutex);
            open.insert(guarded().paths.begin(), guarded().paths.end());
        }
        for (const std::string& database : open) {
            if (std::string clash = outputClash(path, database); !clash.empty())
                throw OutputError(clash);
        }
    }
    std::error_code ec;
    if (fs::is_directory(path, ec))
        fail(path, "it is a folder");
    switch (const FileKind kind = fileKind(path)) {
        case FileKind::Fifo:
        case FileKind::CharDevice:
            writeIntoStream(path, kind, bytes);
            return;
        case FileKind::Regular:
            // /proc/self/fd/N names a descriptor's file; no temporary file can sit beside it.
            if (resolved(fs::absolute(path, ec).parent_path().string()).rfind("/proc/", 0) == 0) {
                writeIntoStream(path, kind, bytes);
                return;
            }
            break;
        case FileKind::BlockDevice:
        case FileKind::Socket:
        case FileKind::Other:
            fail(path, "it is " + describeFileKind(kind) + ", not a file that can be replaced");
        default:
            break;
    }
    const fs::path target(path);
    const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    if (!fs::is_directory(folder, ec))
        fail(path, "the folder " + folder.string() + " does not exist");
    removeStaleTemporaries(folder, target.filename().string());
    std::string temp;
    const int fd = createTemporary(folder, target.filename().string(), temp);
    if (fd < 0)
        fail(path, std::strerror(errno));
    auto abandon = [&](int error) {
        ::close(fd);
        ::unlink(temp.c_str());
        fail(path, std::strerror(error));
    };
    writeAll(fd, path, bytes, abandon);
    // An existing file keeps its permissions; a new one gets what open(2) would give.
    struct stat st {};
    const mode_t mode =
        ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : (0666 & ~currentUmask());
    if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0)
        abandon(errno);
    if (::close(fd) != 0) {
        const int error = errno;
        ::unlink(temp.c_str());
        fail(path, std::strerror(error));
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temp.c_str());
        fail(path, std::strerror(error));
    }
}

void writeFileAtomically(const std::string& path,
                         const std::function<void(std::ostream&)>& produce) {
    std::ostringstream out;
    produce(out);
    writeFileAtomically(path, out.str());
}

}  // namespace ampbench::util
