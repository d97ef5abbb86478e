#include "core/data/private/Npy.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <minizip/unzip.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <system_error>

#include "core/data/DataError.h"
#include "core/data/Datasets.h"
#include "core/run/InputFiles.h"

namespace ampbench::data {
namespace {

/// NumPy writes headers of a few hundred bytes (and reads at most 10000 by default).
constexpr size_t kMaxHeaderBytes = size_t(1) << 20;

constexpr char kSupported[] = "supported: bool, uint8, int32, int64, float16, float32, float64";

std::string errnoText(int err) {
    return std::generic_category().message(err);
}

/// Reads the header's Python dict literal: {'descr': '<f4', 'fortran_order': False,
/// 'shape': (10, 3), }. Only what np.save writes; anything else is an error.
class HeaderDict {
  public:
    HeaderDict(std::string text, std::string name) : s_(std::move(text)), name_(std::move(name)) {}

    void parse(NpyHeader& h, bool& fortran) {
        bool have_descr = false, have_order = false, have_shape = false;
        expect('{');
        while (true) {
            skipSpace();
            if (peek() == '}') {
                ++i_;
                break;
            }
            auto key = string();
            expect(':');
            if (key == "descr") {
                skipSpace();
                if (peek() == '[') {
                    fail("a structured dtype (a list of fields) is not supported (" +
                         std::string(kSupported) + ")");
                }
                h.descr = string();
                have_descr = true;
            } else if (key == "fortran_order") {
                fortran = boolean();
                have_order = true;
            } else if (key == "shape") {
                h.shape = tuple();
                have_shape = true;
            } else {
                fail("its header has an unknown key '" + key + "'");
            }
            skipSpace();
            if (peek() == ',') {
                ++i_;
            } else if (peek() != '}') {
                malformed("',' or '}'");
            }
        }
        if (!have_descr || !have_order || !have_shape) {
            fail(std::string("its header lacks '") +
                 (!have_descr   ? "descr"
                  : !have_order ? "fortran_order"
                                : "shape") +
                 "'");
        }
    }

  private:
    [[noreturn]] void fail(const std::string& what) const { throw DataError(name_ + ": " + what); }
    [[noreturn]] void malformed(const std::string& expected) const {
        auto near = s_.substr(std::min(i_, s_.size()), 20);
        for (auto& c : near) {
            if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
                c = '?';
            }
        }
        fail("malformed .npy header: expected " + expected + " at character " + std::to_string(i_) +
             " ('" + near + "')");
    }
    char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
    void skipSpace() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) {
            ++i_;
        }
    }
    void expect(char c) {
        skipSpace();
        if (peek() != c) {
            malformed(std::string("'") + c + "'");
        }
        ++i_;
    }
    std::string string() {
        skipSpace();
        char quote = peek();
        if (quote != '\'' && quote != '"') {
            malformed("a quoted string");
        }
        auto end = s_.find(quote, i_ + 1);
        if (end == std::string::npos) {
            malformed("the end of a string");
        }
        auto out = s_.substr(i_ + 1, end - i_ - 1);
        i_ = end + 1;
        return out;
    }
    bool boolean() {
        skipSpace();
        for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
            auto n = std::strlen(word);
            if (s_.compare(i_, n, word) == 0) {
                i_ += n;
                return value;
            }
        }
        malformed("True or False");
    }
    std::vector<int64_t> tuple() {
        std::vector<int64_t> dims;
        expect('(');
        while (true) {
            skipSpace();
            if (peek() == ')') {
                ++i_;
                return dims;
            }
            if (peek() == '-') {
                fail("its shape has a negative dimension");
            }
            if (peek() < '0' || peek() > '9') {
                malformed("a dimension");
            }
            int64_t v = 0;
            while (peek() >= '0' && peek() <= '9') {
                int digit = peek() - '0';
                if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) {
                    fail("its shape has a dimension too large to address");
                }
                v = v * 10 + digit;
                ++i_;
            }
            if (peek() == 'L') {  // written by Python 2's NumPy
                ++i_;
            }
            dims.push_back(v);
            skipSpace();
            if (peek() == ',') {
                ++i_;
            } else if (peek() != ')') {
                malformed("',' or ')'");
            }
        }
    }

    std::string s_;
    std::string name_;
    size_t i_ = 0;
};

/// NumPy's words for a descr, for naming a dtype this reader does not take.
std::string describeDescr(const std::string& descr) {
    if (descr.size() < 2) {
        return "'" + descr + "'";
    }
    std::string kind;
    switch (descr[1]) {
        case 'b':
            kind = "bool";
            break;
        case 'i':
            kind = "int";
            break;
        case 'u':
            kind = "uint";
            break;
        case 'f':
            kind = "float";
            break;
        case 'c':
            kind = "complex";
            break;
        case 'O':
            return "'" + descr + "' (Python objects)";
        case 'U':
            return "'" + descr + "' (strings)";
        case 'S':
            return "'" + descr + "' (bytes)";
        case 'M':
            return "'" + descr + "' (datetime)";
        case 'm':
            return "'" + descr + "' (timedelta)";
        default:
            return "'" + descr + "'";
    }
    auto bytes = std::atoi(descr.c_str() + 2);
    return "'" + descr + "' (" + kind + (kind == "bool" ? "" : std::to_string(bytes * 8)) + ")";
}

c10::ScalarType dtypeOf(const std::string& descr, const std::string& name) {
    const char order = descr.empty() ? '\0' : descr[0];
    const std::string type = descr.size() > 1 ? descr.substr(1) : "";
    static const std::pair<const char*, c10::ScalarType> kTypes[] = {
        {"b1", c10::ScalarType::Bool},  {"u1", c10::ScalarType::Byte},
        {"i4", c10::ScalarType::Int},   {"i8", c10::ScalarType::Long},
        {"f2", c10::ScalarType::Half},  {"f4", c10::ScalarType::Float},
        {"f8", c10::ScalarType::Double}};
    for (const auto& [code, scalar] : kTypes) {
        if (type != code) {
            continue;
        }
        const bool one_byte = type[1] == '1';
        if (order == '<' || order == '|' || (one_byte && (order == '>' || order == '='))) {
            return scalar;
        }
        if (order == '>') {
            throw DataError(name + ": dtype '" + descr +
                            "' is big-endian, which is not supported: save it little-endian "
                            "(x.astype('<" +
                            type + "'))");
        }
    }
    throw DataError(name + ": dtype " + describeDescr(descr) + " is not supported (" + kSupported +
                    ")");
}

/// A tensor over bytes that `owner` keeps alive; copied when the data is not
/// aligned to its element size (a header padded by hand).
at::Tensor tensorOver(std::shared_ptr<const void> owner, const uint8_t* base, const NpyHeader& h) {
    const uint8_t* data = base + h.data_offset;
    auto options = at::TensorOptions().dtype(h.dtype);
    auto item = c10::elementSize(h.dtype);
    if (reinterpret_cast<uintptr_t>(data) % item != 0) {
        auto t = at::empty(h.shape, options);
        std::memcpy(t.data_ptr(), data, h.data_bytes);
        return t;
    }
    return at::from_blob(
        const_cast<uint8_t*>(data), h.shape, [owner](void*) {}, options);
}

}  // namespace

NpyHeader parseNpyHeaderOnly(const uint8_t* bytes, size_t size, const std::string& name) {
    static const uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (size < sizeof kMagic || std::memcmp(bytes, kMagic, sizeof kMagic) != 0) {
        throw DataError(name + ": not a NumPy .npy file (it does not start with \\x93NUMPY)");
    }
    if (size < 10) {
        throw DataError(name + ": truncated: the file ends inside its header (" +
                        std::to_string(size) + " bytes)");
    }
    const int major = bytes[6], minor = bytes[7];
    size_t length = 0, start = 0;
    if (major == 1) {
        length = bytes[8] | (size_t{bytes[9]} << 8);
        start = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) {
            throw DataError(name + ": truncated: the file ends inside its header (" +
                            std::to_string(size) + " bytes)");
        }
        length = bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) |
                 (size_t{bytes[11]} << 24);
        start = 12;
    } else {
        throw DataError(name + ": .npy format version " + std::to_string(major) + "." +
                        std::to_string(minor) + " is not supported (1.0, 2.0 and 3.0 are)");
    }
    if (length > size - start) {
        throw DataError(name + ": truncated: the header's length field says " +
                        std::to_string(length) + " bytes, but only " +
                        std::to_string(size - start) + " follow");
    }
    NpyHeader h;
    bool fortran = false;
    HeaderDict(std::string(reinterpret_cast<const char*>(bytes) + start, length), name)
        .parse(h, fortran);
    h.dtype = dtypeOf(h.descr, name);
    if (fortran) {
        throw DataError(name +
                        ": stored in Fortran (column-major) order, which is not supported: save "
                        "a C-order array (np.ascontiguousarray)");
    }
    uint64_t bytes_needed = c10::elementSize(h.dtype);
    for (auto d : h.shape) {
        if (__builtin_mul_overflow(bytes_needed, static_cast<uint64_t>(d), &bytes_needed)) {
            throw DataError(name + ": its shape holds more bytes than can be addressed");
        }
    }
    h.data_offset = start + length;
    if (bytes_needed > std::numeric_limits<uint64_t>::max() - h.data_offset) {
        throw DataError(name + ": its shape holds more bytes than can be addressed");
    }
    h.data_bytes = bytes_needed;
    return h;
}

NpyHeader parseNpyHeader(const uint8_t* bytes, size_t size, const std::string& name) {
    NpyHeader h = parseNpyHeaderOnly(bytes, size, name);
    if (h.data_bytes > size - h.data_offset) {
        throw DataError(name + ": truncated: the header promises " + std::to_string(h.data_bytes) +
                        " bytes of data, the file holds " + std::to_string(size - h.data_offset));
    }
    return h;
}

at::Tensor mapNpy(const std::string& path) {
    std::string why;
    int fd = run::openRegularFile(path, why);
    if (fd < 0) {
        throw DataError(why);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        throw DataError(path + ": cannot read (" + errnoText(err) + ")");
    }
    const auto size = static_cast<size_t>(st.st_size);
    if (size == 0) {
        ::close(fd);
        throw DataError(path + ": empty file (not a NumPy .npy file)");
    }
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) {
        throw DataError(path + ": cannot map into memory (" + errnoText(err) + ")");
    }
    std::shared_ptr<const void> mapping(
        p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
    auto base = static_cast<const uint8_t*>(p);
    return tensorOver(mapping, base, parseNpyHeader(base, size, path));
}

NpzFile::NpzFile(const std::string& path) : path_(path) {
    // minizip says only "failed" for a missing file, and would block on a FIFO: ask
    // the system first.
    if (std::string why = run::refuseUnlessRegular(path); !why.empty()) {
        throw DataError(why);
    }
    zip_ = unzOpen64(path.c_str());
    if (!zip_) {
        throw DataError(
            path + ": not a readable .npz (zip) archive: damaged, truncated or another format");
    }
    int rc = unzGoToFirstFile(zip_);
    for (; rc == UNZ_OK; rc = unzGoToNextFile(zip_)) {
        char entry[1024];
        unz_file_info64 info{};
        if (unzGetCurrentFileInfo64(zip_, &info, entry, sizeof entry, nullptr, 0, nullptr, 0) !=
            UNZ_OK) {
            break;
        }
        std::string n = entry;
        if (n.size() > 4 && n.compare(n.size() - 4, 4, ".npy") == 0) {
            names_.push_back(n.substr(0, n.size() - 4));
        }
    }
    if (rc != UNZ_END_OF_LIST_OF_FILE) {
        unzClose(zip_);
        throw DataError(path + ": damaged .npz (zip) archive: its directory cannot be read");
    }
}

NpzFile::~NpzFile() {
    unzClose(zip_);
}

bool NpzFile::has(const std::string& name) const {
    return std::find(names_.begin(), names_.end(), name) != names_.end();
}

at::Tensor NpzFile::read(const std::string& name) {
    if (!has(name)) {
        std::string held;
        for (const auto& n : names_) {
            held += (held.empty() ? "" : ", ") + n;
        }
        throw DataError(path_ + ": no array '" + name +
                        "' (it holds: " + (held.empty() ? "no arrays" : held) + ")");
    }
    const std::string entry = name + ".npy";
    const std::string label = path_ + " (" + entry + ")";
    unz_file_info64 info{};
    if (unzLocateFile(zip_, entry.c_str(), 1) != UNZ_OK ||
        unzGetCurrentFileInfo64(zip_, &info, nullptr, 0, nullptr, 0, nullptr, 0) != UNZ_OK ||
        unzOpenCurrentFile(zip_) != UNZ_OK) {
        throw DataError(label + ": cannot open the entry (the archive is damaged or encrypted)");
    }
    // The member is inflated up to what its .npy header promises and no further: a
    // stream that inflates to more (a zip bomb) is refused, not held in memory.
    auto buffer = std::make_shared<std::vector<uint8_t>>();
    auto fail = [&](const std::string& why) {
        unzCloseCurrentFile(zip_);
        throw DataError(label + ": " + why);
    };
    auto readUpTo = [&](size_t total) {
        // Grown as data arrives: a header that promises more than the stream holds
        // allocates no more than the stream holds (twice, at most).
        constexpr size_t kChunk = size_t(1) << 20;
        while (buffer->size() < total) {
            const size_t used = buffer->size();
            const size_t want = std::min(kChunk, total - used);
            buffer->resize(used + want);
            int n = unzReadCurrentFile(zip_, buffer->data() + used, static_cast<unsigned>(want));
            if (n < 0) {
                fail("damaged compressed data (minizip error " + std::to_string(n) + ")");
            }
            buffer->resize(used + static_cast<size_t>(n));
            if (n == 0) {
                break;
            }
        }
    };
    // The magic, the version and the header's length, then the header itself.
    readUpTo(12);
    size_t header_end = buffer->size();
    if (buffer->size() >= 10) {
        const auto& b = *buffer;
        header_end =
            b[6] == 1
                ? 10 + (b[8] | (size_t{b[9]} << 8))
                : 12 + (b[8] | (size_t{b[9]} << 8) | (size_t{b[10]} << 16) | (size_t{b[11]} << 24));
    }
    if (header_end > kMaxHeaderBytes) {
        fail("its .npy header claims " + std::to_string(header_end) + " bytes (at most " +
             std::to_string(kMaxHeaderBytes) + " are read)");
    }
    readUpTo(header_end);
    NpyHeader promise;
    try {
        promise = parseNpyHeaderOnly(buffer->data(), buffer->size(), label);
    } catch (const DataError&) {
        unzCloseCurrentFile(zip_);
        throw;
    }
    const uint64_t total = promise.data_offset + promise.data_bytes;
    if (info.uncompressed_size > total) {
        fail("the archive says it inflates to " + std::to_string(info.uncompressed_size) +
             " bytes, but its .npy header promises " + std::to_string(total) + " (shape " +
             shapeText(promise.shape) + "): refused unread");
    }
    readUpTo(static_cast<size_t>(total));
    if (buffer->size() == total) {
        uint8_t extra = 0;
        if (unzReadCurrentFile(zip_, &extra, 1) > 0) {
            fail("its data is longer than its .npy header promises (" + std::to_string(total) +
                 " bytes, shape " + shapeText(promise.shape) + "): refused, not inflated further");
        }
    }
    if (unzCloseCurrentFile(zip_) == UNZ_CRCERROR) {
        throw DataError(label + ": damaged: its checksum does not match its data");
    }
    auto header = parseNpyHeader(buffer->data(), buffer->size(), label);
    const uint8_t* base = buffer->data();
    return tensorOver(std::move(buffer), base, header);
}

}  // namespace ampbench::data
