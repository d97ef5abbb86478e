#pragma once
#include <stdexcept>
#include <string>

namespace ampbench::store {

/// Any failure to open, read or write a workbench database. The message names the
/// file and says what is wrong in words a user can act on.
class StoreError : public std::runtime_error {
  public:
    enum class Kind {
        CannotOpen,
        NotADatabase,
        ForeignDatabase,
        NewerSchema,
        Io,
        NotFound,
        Busy,     ///< another connection holds the lock (SQLITE_BUSY/LOCKED): try again later
        Corrupt,  ///< the file is damaged (SQLITE_CORRUPT or a failed integrity check)
        InUse,    ///< the row is in use (a run training or queued) and was left unchanged
    };
    StoreError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    Kind kind() const { return kind_; }

  private:
    Kind kind_;
};

}  // namespace ampbench::store
