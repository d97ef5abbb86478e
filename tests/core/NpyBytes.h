#pragma once
// An .npy file's bytes, for tests with and without LibTorch.
#include <cstdint>
#include <string>
#include <vector>

namespace ampbench::data::test_files {

/// An .npy file's bytes as np.save writes them (version 1.0, header padded to 64).
inline std::string npyBytes(const std::string& descr, const std::vector<int64_t>& shape,
                            const void* data, size_t bytes, const std::string& fortran = "False") {
    std::string dims;
    for (auto d : shape) {
        dims += std::to_string(d) + ", ";
    }
    if (shape.size() > 1) {
        dims.resize(dims.size() - 2);
    } else if (shape.size() == 1) {
        dims.pop_back();
    }
    std::string dict =
        "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': (" + dims + "), }";
    while ((10 + dict.size() + 1) % 64 != 0) {
        dict += ' ';
    }
    dict += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(dict.size() & 0xff);
    out += static_cast<char>(dict.size() >> 8);
    return out + dict + std::string(static_cast<const char*>(data), bytes);
}

}  // namespace ampbench::data::test_files
