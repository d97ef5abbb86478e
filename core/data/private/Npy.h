#pragma once
// NumPy's file formats: .npy (one array) and .npz (a zip of .npy files).
#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ampbench::data {

/// What an .npy header says, checked against the bytes that follow it.
struct NpyHeader {
    c10::ScalarType dtype = c10::ScalarType::Float;
    std::string descr;  ///< as written, e.g. "<f4"
    std::vector<int64_t> shape;
    size_t data_offset = 0;  ///< where the data starts, from the start of the file
    size_t data_bytes = 0;   ///< the elements' bytes the shape promises
};

/// Parses the .npy held in bytes[0, size): magic, version 1/2/3, header length and
/// the header's dict. Throws DataError, naming `name`, for anything but a
/// little-endian, C-order array of a supported dtype whose data fits in `size`.
NpyHeader parseNpyHeader(const uint8_t* bytes, size_t size, const std::string& name);

/// The same checks of the header alone: bytes[0, size) need hold only the header, and
/// data_bytes is what the shape promises, whether or not it follows.
NpyHeader parseNpyHeaderOnly(const uint8_t* bytes, size_t size, const std::string& name);

/// An .npy file mapped read-only into memory: the tensor views the mapping, which
/// lives as long as the tensor's storage. Never write into it.
at::Tensor mapNpy(const std::string& path);

/// An .npz archive (np.savez, stored, or np.savez_compressed, deflated). Used on one
/// thread at a time.
class NpzFile {
  public:
    explicit NpzFile(const std::string& path);
    ~NpzFile();
    NpzFile(const NpzFile&) = delete;
    NpzFile& operator=(const NpzFile&) = delete;

    /// The arrays it holds, in archive order, without ".npy".
    const std::vector<std::string>& names() const { return names_; }
    bool has(const std::string& name) const;
    /// The array `name`, decompressed into memory, never beyond what its .npy header
    /// promises. Throws DataError when it is missing (listing what the archive holds),
    /// damaged, or inflates to more than its header promises.
    at::Tensor read(const std::string& name);

  private:
    std::string path_;
    void* zip_ = nullptr;  ///< minizip's unzFile
    std::vector<std::string> names_;
};

}  // namespace ampbench::data
