#include "core/store/OutputFile.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ampbench::store {
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

/// A number with an optional unit: sign, digits and point, an exponent, then only
/// letters, spaces, '%' or non-ASCII (units such as "ms" or "×"): no operator
/// that could make a formula.
bool looksNumeric(const std::string& s) {
    size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
    size_t digits = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
        digits += std::isdigit(static_cast<unsigned char>(s[i++])) ? 1 : 0;
    if (digits == 0)
        return false;
    if (i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E') &&
        (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-' ||
         s[i + 1] == '+')) {
        i += 2;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
            ++i;
    }
    for (; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (!(std::isalpha(c) || c == ' ' || c == '%' || c >= 0x80))
            return false;
    }
    return true;
}

}  // namespace

std::string spreadsheetSafe(const std::string& cell) {
    if (cell.empty())
        return cell;
    const char c = cell[0];
    const bool risky = c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
    if (!risky || ((c == '+' || c == '-') && looksNumeric(cell)))
        return cell;
    return "'" + cell;
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
    std::error_code ec;
    if (fs::is_directory(path, ec))
        fail(path, "it is a folder");
    const fs::path target(path);
    const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    if (!fs::is_directory(folder, ec))
        fail(path, "the folder " + folder.string() + " does not exist");
    std::string temp = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = mkstemp(temp.data());
    if (fd < 0)
        fail(path, std::strerror(errno));
    auto abandon = [&](int error) {
        ::close(fd);
        ::unlink(temp.c_str());
        fail(path, std::strerror(error));
    };
    const char* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            abandon(errno);
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
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

}  // namespace ampbench::store
