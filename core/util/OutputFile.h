#pragma once
// Files the workbench writes for the user (reports, exports, saved specs and models): never
// the database they were read from, and never half-written.
#include <functional>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ampbench::util {

/// An output file that could not be written; the message names the file and the
/// reason in the system's words (no space left on device, permission denied, file
/// too large, ...). Nothing was left at the path.
class OutputError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Why `output` must not be written while `database` is in use: it names the
/// database itself or its -wal, -shm or -journal file, through any spelling of the
/// path (links, "..", a hard link). Empty when it may be written.
std::string outputClash(const std::string& output, const std::string& database);

/// Marks `database` as open in this process (store::Database does it for every connection,
/// released when it closes): while it is open, no file this process writes through
/// writeFileAtomically may be it or its -wal/-shm/-journal file, whichever command
/// names the output (a report, an export, a saved model, a spec).
void guardDatabase(const std::string& database);
void releaseDatabase(const std::string& database);

/// Writes `bytes` to `path` all or nothing: into a temporary file in the same
/// folder, flushed to disk, then renamed over `path`. A failure (disk full, a file
/// size limit, no permission) removes the temporary file and leaves an existing
/// `path` as it was. A FIFO, a character device or a terminal (`/dev/null`,
/// `/dev/stdout`, `/proc/self/fd/1`) is written into as a stream, never replaced; a
/// block device or a socket is refused. Throws OutputError.
void writeFileAtomically(const std::string& path, std::string_view bytes);

/// The same for content written into a stream by `produce`. An exception from
/// `produce` propagates and nothing is written.
void writeFileAtomically(const std::string& path,
                         const std::function<void(std::ostream&)>& produce);

}  // namespace ampbench::util
