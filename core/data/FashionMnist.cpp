#include "core/data/FashionMnist.h"

#include <ATen/ATen.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "core/config/DataPaths.h"
#include "core/data/DataError.h"
#include "core/run/FileKind.h"

namespace ampbench::data {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned byte, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned byte, 1 dimension
constexpr double kMean = 0.2860;               // Fashion-MNIST training pixels / 255
constexpr double kStd = 0.3530;
/// Far above the largest real file, far below what a gzip bomb would ask for.
constexpr size_t kMaxInflated = size_t(256) << 20;

/// Whole file in memory, gunzipped when it starts with gzip's magic bytes. Uses
/// zlib's inflate on a buffer rather than its gz* file API: one read, and error
/// paths that stay inside our code.
std::vector<uint8_t> readMaybeGzip(const std::string& path) {
    if (!std::filesystem::exists(path)) {
        throw DataError(path + ": file not found");
    }
    if (std::string why = run::refuseUnlessRegular(path); !why.empty()) {
        throw DataError(why);  // a FIFO or a device would block or never end
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw DataError(path + ": cannot open for reading");
    }
    std::vector<uint8_t> raw((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
    if (raw.size() < 2 || raw[0] != 0x1f || raw[1] != 0x8b) {
        return raw;  // a plain IDX file
    }
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 32) != Z_OK) {
        throw DataError(path + ": zlib could not start decompressing");
    }
    std::vector<uint8_t> out;
    out.resize(raw.size() * 4 + 1024);
    zs.next_in = raw.data();
    zs.avail_in = static_cast<uInt>(raw.size());
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        if (zs.total_out == out.size()) {
            if (out.size() >= kMaxInflated) {
                inflateEnd(&zs);
                throw DataError(path +
                                ": inflates to more than 256 MiB; a Fashion-MNIST file holds "
                                "at most 47 MB (60,000 images of 28x28)");
            }
            out.resize(std::min(out.size() * 2, kMaxInflated));
        }
        zs.next_out = out.data() + zs.total_out;
        zs.avail_out = static_cast<uInt>(out.size() - zs.total_out);
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
            inflateEnd(&zs);
            throw DataError(path + ": file is truncated: the gzip stream ends early");
        }
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            std::string msg = zs.msg ? zs.msg : "unknown zlib error";
            inflateEnd(&zs);
            throw DataError(path + ": corrupt gzip data (" + msg + ")");
        }
    }
    out.resize(zs.total_out);
    inflateEnd(&zs);
    return out;
}

/// Reads big-endian IDX fields from a buffer, naming the file in every error.
class IdxFile {
  public:
    explicit IdxFile(const std::string& path) : path_(path), data_(readMaybeGzip(path)) {}

    uint32_t readU32(const char* what) {
        std::array<unsigned char, 4> b{};
        readExact(b.data(), b.size(), what);
        return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | b[3];
    }

    void readExact(void* dst, size_t n, const char* what) {
        size_t left = data_.size() - pos_;
        if (n > left) {
            throw DataError(path_ + ": file is truncated: expected " + std::to_string(n) +
                            " bytes of " + what + ", got " + std::to_string(left));
        }
        std::memcpy(dst, data_.data() + pos_, n);
        pos_ += n;
    }

    size_t remaining() const { return data_.size() - pos_; }

    void expectEnd() {
        if (pos_ != data_.size()) {
            throw DataError(path_ + ": unexpected data after the last record");
        }
    }

    void checkMagic(uint32_t expected, const char* kind) {
        uint32_t magic = readU32("the header");
        if (magic != expected) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "wrong magic number 0x%08x (an IDX %s file has 0x%08x)",
                          magic, kind, expected);
            throw DataError(path_ + ": " + buf);
        }
    }

  private:
    std::string path_;
    std::vector<uint8_t> data_;
    size_t pos_ = 0;
};

std::string findFile(const std::string& dir, const std::string& stem) {
    for (const char* suffix : {".gz", ""}) {
        auto p = std::filesystem::path(dir) / (stem + suffix);
        if (std::filesystem::exists(p)) {
            return p.string();
        }
    }
    throw DataError("Fashion-MNIST not found: " + dir + " has no " + stem +
                    ".gz. Install Debian's package (apt-get install dataset-fashion-mnist) "
                    "or pass --data DIR with the four IDX files");
}

at::Tensor toImageTensor(IdxImages&& raw) {
    auto t = at::from_blob(raw.pixels.data(), {raw.count, 1, raw.rows, raw.cols}, at::kByte)
                 .to(at::kFloat);
    return t.div_(255.0).sub_(kMean).div_(kStd);
}

at::Tensor toLabelTensor(const std::vector<uint8_t>& raw) {
    auto n = static_cast<int64_t>(raw.size());
    return at::from_blob(const_cast<uint8_t*>(raw.data()), {n}, at::kByte).to(at::kLong);
}

}  // namespace

IdxImages readIdxImages(const std::string& path) {
    IdxFile f(path);
    f.checkMagic(kImagesMagic, "image");
    IdxImages out;
    out.count = f.readU32("the image count");
    out.rows = f.readU32("the row count");
    out.cols = f.readU32("the column count");
    if (out.rows == 0 || out.cols == 0 || out.rows > 4096 || out.cols > 4096) {
        throw DataError(path + ": implausible image size " + std::to_string(out.rows) + "x" +
                        std::to_string(out.cols));
    }
    const auto need = static_cast<uint64_t>(out.count) * static_cast<uint64_t>(out.rows * out.cols);
    if (need > f.remaining()) {
        throw DataError(path + ": file is truncated: the header announces " +
                        std::to_string(out.count) + " images (" + std::to_string(need) +
                        " bytes) but " + std::to_string(f.remaining()) + " bytes follow");
    }
    out.pixels.resize(static_cast<size_t>(need));
    f.readExact(out.pixels.data(), out.pixels.size(), "pixels");
    f.expectEnd();
    return out;
}

std::vector<uint8_t> readIdxLabels(const std::string& path) {
    IdxFile f(path);
    f.checkMagic(kLabelsMagic, "label");
    const uint32_t count = f.readU32("the label count");
    if (count > f.remaining()) {
        throw DataError(path + ": file is truncated: the header announces " +
                        std::to_string(count) + " labels but " + std::to_string(f.remaining()) +
                        " bytes follow");
    }
    std::vector<uint8_t> labels(count);
    f.readExact(labels.data(), labels.size(), "labels");
    f.expectEnd();
    for (uint8_t l : labels) {
        if (l > 9) {
            throw DataError(path + ": label " + std::to_string(l) + " is outside 0..9");
        }
    }
    return labels;
}

std::string defaultFashionMnistDir() {
    return config::defaultFashionMnistDir();
}

FashionMnist loadFashionMnist(const std::string& dir_in) {
    const std::string dir = dir_in.empty() ? defaultFashionMnistDir() : dir_in;
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
        throw DataError("Fashion-MNIST not found: " + dir +
                        " is a file, not a folder; pass --data DIR with the folder that holds "
                        "the four IDX files (train-images-idx3-ubyte.gz, ...)");
    }
    if (!std::filesystem::is_directory(dir, ec)) {
        throw DataError("Fashion-MNIST not found: " + dir +
                        " does not exist. Install Debian's package (apt-get install "
                        "dataset-fashion-mnist) or pass --data DIR with the four IDX files");
    }
    auto load = [&](const std::string& images, const std::string& labels, at::Tensor& x,
                    at::Tensor& y) {
        auto img_path = findFile(dir, images);
        auto lbl_path = findFile(dir, labels);
        auto raw = readIdxImages(img_path);
        auto lbl = readIdxLabels(lbl_path);
        if (static_cast<int64_t>(lbl.size()) != raw.count) {
            throw DataError(img_path + " holds " + std::to_string(raw.count) + " images but " +
                            lbl_path + " holds " + std::to_string(lbl.size()) + " labels");
        }
        x = toImageTensor(std::move(raw));
        y = toLabelTensor(lbl);
    };
    FashionMnist out;
    load("train-images-idx3-ubyte", "train-labels-idx1-ubyte", out.train_images, out.train_labels);
    load("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", out.test_images, out.test_labels);
    return out;
}

}  // namespace ampbench::data
