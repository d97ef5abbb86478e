#pragma once
// How an allocation failure shows: CUDA's as c10::OutOfMemoryError, LibTorch's
// CPU allocator's as a plain c10::Error with one of these phrases.
#include <string>

namespace ampbench::train {

inline bool allocationFailure(const std::string& what) {
    return what.find("can't allocate memory") != std::string::npos ||
           what.find("not enough memory") != std::string::npos;
}

}  // namespace ampbench::train
