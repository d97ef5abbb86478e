#include "core/util/FileKind.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ampbench::util {
namespace {

FileKind kindOfMode(mode_t mode) {
    if (S_ISREG(mode))
        return FileKind::Regular;
    if (S_ISDIR(mode))
        return FileKind::Directory;
    if (S_ISFIFO(mode))
        return FileKind::Fifo;
    if (S_ISCHR(mode))
        return FileKind::CharDevice;
    if (S_ISBLK(mode))
        return FileKind::BlockDevice;
    if (S_ISSOCK(mode))
        return FileKind::Socket;
    return FileKind::Other;
}

std::string refusal(const std::string& path, FileKind kind, bool folder_ok) {
    return path + ": is " + describeFileKind(kind) + ", not a regular file" +
           (folder_ok ? " or a folder" : "") + " (the workbench reads only regular files)";
}

}  // namespace

FileKind fileKind(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return FileKind::Missing;
    return kindOfMode(st.st_mode);
}

std::string describeFileKind(FileKind kind) {
    switch (kind) {
        case FileKind::Missing:
            return "missing";
        case FileKind::Regular:
            return "a regular file";
        case FileKind::Directory:
            return "a folder";
        case FileKind::Fifo:
            return "a FIFO (named pipe)";
        case FileKind::CharDevice:
            return "a character device";
        case FileKind::BlockDevice:
            return "a block device";
        case FileKind::Socket:
            return "a socket";
        case FileKind::Other:
            break;
    }
    return "not a regular file";
}

std::string describeSpecialFile(const std::string& path) {
    return describeFileKind(fileKind(path));
}

bool isSpecialFile(FileKind kind) {
    return kind != FileKind::Missing && kind != FileKind::Regular && kind != FileKind::Directory;
}

std::string refuseUnlessRegular(const std::string& path, bool folder_ok) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return path + ": cannot open (" + std::strerror(errno) + ")";
    const FileKind kind = kindOfMode(st.st_mode);
    if (kind == FileKind::Regular || (folder_ok && kind == FileKind::Directory))
        return {};
    return refusal(path, kind, folder_ok);
}

int openRegularFile(const std::string& path, std::string& why) {
    why = refuseUnlessRegular(path);
    if (!why.empty())
        return -1;
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        why = path + ": cannot open (" + std::strerror(errno) + ")";
        return -1;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        why = refusal(path, kindOfMode(st.st_mode), false);
        ::close(fd);
        return -1;
    }
    if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0)
        ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

bool readRest(int fd, const std::string& path, std::string& out, std::string& why) {
    char chunk[1 << 16];
    while (true) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            why = path + ": cannot read (" + std::strerror(errno) + ")";
            return false;
        }
        if (n == 0)
            return true;
        out.append(chunk, static_cast<size_t>(n));
    }
}

}  // namespace ampbench::util
