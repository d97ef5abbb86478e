#pragma once
// Writes the files the file-data tests read: .npy and .npz as NumPy writes them,
// PNG and JPEG images, text; in a temporary folder removed afterwards.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <minizip/zip.h>
#include <stb/stb_image_write.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "NpyBytes.h"
#include "core/data/DataError.h"
#include "core/data/Datasets.h"
#include "core/data/private/Split.h"
#include "core/run/RemoveTree.h"

namespace ampbench::data::test_files {

namespace fs = std::filesystem;

class TempDir {
  public:
    TempDir() {
        path_ = fs::temp_directory_path() /
                ("ampbench-files-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
        fs::create_directories(path_);
    }
    ~TempDir() { ampbench::run::removeTree(path_.string()); }
    std::string file(const std::string& name) const {
        auto p = path_ / name;
        fs::create_directories(p.parent_path());
        return p.string();
    }

  private:
    static inline int counter_ = 0;
    fs::path path_;
};

inline void writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<long>(bytes.size()));
}

inline std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

template <typename T>
inline std::string npy(const std::string& descr, const std::vector<int64_t>& shape,
                       const std::vector<T>& values) {
    return npyBytes(descr, shape, values.data(), values.size() * sizeof(T));
}

inline std::string npy(const at::Tensor& t) {
    static const std::map<at::ScalarType, std::string> kDescr = {
        {at::kBool, "|b1"}, {at::kByte, "|u1"},  {at::kInt, "<i4"},   {at::kLong, "<i8"},
        {at::kHalf, "<f2"}, {at::kFloat, "<f4"}, {at::kDouble, "<f8"}};
    auto c = t.contiguous();
    return npyBytes(kDescr.at(c.scalar_type()), c.sizes().vec(), c.data_ptr(), c.nbytes());
}

/// An .npz as np.savez (stored) or np.savez_compressed (deflated) writes it.
inline void writeNpz(const std::string& path,
                     const std::vector<std::pair<std::string, std::string>>& arrays,
                     bool compressed) {
    zipFile zf = zipOpen64(path.c_str(), 0);
    ASSERT_NE(zf, nullptr);
    for (const auto& [name, bytes] : arrays) {
        auto entry = name + ".npy";
        ASSERT_EQ(zipOpenNewFileInZip(zf, entry.c_str(), nullptr, nullptr, 0, nullptr, 0, nullptr,
                                      compressed ? Z_DEFLATED : 0,
                                      compressed ? Z_DEFAULT_COMPRESSION : 0),
                  ZIP_OK);
        ASSERT_EQ(zipWriteInFileInZip(zf, bytes.data(), static_cast<unsigned>(bytes.size())),
                  ZIP_OK);
        ASSERT_EQ(zipCloseFileInZip(zf), ZIP_OK);
    }
    ASSERT_EQ(zipClose(zf, nullptr), ZIP_OK);
}

/// A PNG (by its name) or JPEG of h×w×channels bytes.
inline void writePixels(const std::string& path, int w, int h, int channels,
                        const std::vector<unsigned char>& px) {
    auto ext = fs::path(path).extension().string();
    int ok = ext == ".png" || ext == ".PNG"
                 ? stbi_write_png(path.c_str(), w, h, channels, px.data(), w * channels)
                 : stbi_write_jpg(path.c_str(), w, h, channels, px.data(), 100);
    ASSERT_NE(ok, 0) << path;
}

/// A w×h RGB image whose every pixel is (value, value + 1, value + 2).
inline void writeImage(const std::string& path, int w, int h, int value) {
    std::vector<unsigned char> px(static_cast<size_t>(w * h * 3));
    for (size_t i = 0; i < px.size(); ++i) {
        px[i] = static_cast<unsigned char>(value + static_cast<int>(i % 3));
    }
    writePixels(path, w, h, 3, px);
}

inline config::DataSpec spec(const std::string& name, const std::string& path, double val = 0.0) {
    config::DataSpec s;
    s.name = name;
    s.path = path;
    s.val_fraction = val;
    return s;
}

inline std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const DataError& e) {
        return e.what();
    }
    return "(no DataError)";
}

inline at::Tensor all(int64_t n) {
    return at::arange(n, at::kLong);
}

/// The training part in file order: with no validation part, the split only shuffles.
inline Batch inFileOrder(const Dataset& ds) {
    return ds.trainBatch(at::argsort(splitRows(ds.trainSize(), 0.0).first));
}

/// Rows filled with their index; labels row % 3.
struct Rows {
    at::Tensor x, y;
};
inline Rows rows(int64_t n, std::vector<int64_t> sample, at::ScalarType x_type = at::kByte) {
    std::vector<int64_t> shape = {n};
    shape.insert(shape.end(), sample.begin(), sample.end());
    auto x = at::arange(n, at::kLong).view({n, 1}).expand({n, at::ones(sample).numel()});
    return {x.reshape(shape).to(x_type).contiguous(), at::arange(n, at::kLong).remainder(3)};
}

}  // namespace ampbench::data::test_files
