#pragma once
#include <stdexcept>
#include <string>

namespace ampbench::data {

/// A dataset that is missing, truncated or malformed; the message names the file.
class DataError : public std::runtime_error {
  public:
    explicit DataError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace ampbench::data
