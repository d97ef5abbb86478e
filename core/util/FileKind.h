#pragma once
// What is at a path, told without opening it: opening a FIFO blocks until a writer
// comes, and a device reads forever or not at all. Every file the program reads or
// writes by a name the user gave is checked with this first.
#include <string>

namespace ampbench::util {

enum class FileKind { Missing, Regular, Directory, Fifo, CharDevice, BlockDevice, Socket, Other };

/// The kind of what `path` names, following symbolic links (stat, not open).
FileKind fileKind(const std::string& path);

/// "a FIFO", "a character device", "a folder", ... for messages.
std::string describeFileKind(FileKind kind);

/// describeFileKind(fileKind(path)).
std::string describeSpecialFile(const std::string& path);

/// A FIFO, a device or a socket: neither a regular file nor a folder nor missing.
bool isSpecialFile(FileKind kind);

/// Empty when `path` is a regular file (or a folder, with `folder_ok`); otherwise the
/// message that refuses it, starting with the path: "x.npy: is a FIFO (named pipe), not a
/// regular file (the workbench reads only regular files)" or "x.npy: cannot open (No
/// such file or directory)". Every reader of the user's files asks this before it opens one.
std::string refuseUnlessRegular(const std::string& path, bool folder_ok = false);

/// Opens a regular file read-only without ever blocking: opened O_NONBLOCK (a FIFO or
/// device swapped in after the check cannot hang it), checked with fstat, then set to
/// blocking reads. Returns the descriptor, or -1 with `why` set as refuseUnlessRegular
/// sets it.
int openRegularFile(const std::string& path, std::string& why);

/// Appends everything left to read from `fd` to `out`; false with `why` set ("PATH:
/// cannot read (reason)") on a read error. The caller closes `fd`.
bool readRest(int fd, const std::string& path, std::string& out, std::string& why);

}  // namespace ampbench::util
