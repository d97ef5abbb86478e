#include "core/data/InputRecord.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "core/config/DataPaths.h"
#include "core/run/InputFiles.h"

namespace ampbench::data {
namespace fs = std::filesystem;
namespace {

std::string hex8(uLong crc) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08lx", static_cast<unsigned long>(crc & 0xffffffffUL));
    return buf;
}

uLong crcOfText(uLong crc, const std::string& text) {
    return crc32_z(crc, reinterpret_cast<const Bytef*>(text.data()), text.size());
}

struct Descriptor {
    int fd;
    ~Descriptor() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

/// Adds `count` bytes from `offset` to the CRC; false when they cannot all be read.
bool crcOfRange(int fd, int64_t offset, int64_t count, std::vector<char>& buf, uLong& crc) {
    while (count > 0) {
        const auto want = static_cast<size_t>(std::min<int64_t>(count, int64_t(buf.size())));
        const ssize_t n = ::pread(fd, buf.data(), want, offset);
        if (n <= 0) {
            return false;
        }
        crc = crc32_z(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<size_t>(n));
        offset += n;
        count -= n;
    }
    return true;
}

/// CRC-32 of a regular file: of every byte up to `sample_above` bytes; beyond, of its
/// size, modification time, first block and kSampledBlocks evenly spaced blocks (the
/// last one ending at the end), so a file of many gigabytes is not read whole before
/// training. False when it is not a regular file or cannot be read.
bool crcOfFile(const std::string& path, int64_t sample_above, uLong& crc, bool& sampled) {
    std::string why;
    Descriptor d{run::openRegularFile(path, why)};
    struct stat st {};
    if (d.fd < 0 || ::fstat(d.fd, &st) != 0) {
        return false;
    }
    const int64_t size = static_cast<int64_t>(st.st_size);
    std::vector<char> buf(size_t(1) << 20);
    crc = crc32_z(0L, Z_NULL, 0);
    sampled = size > sample_above;
    if (!sampled) {
        return crcOfRange(d.fd, 0, size, buf, crc);
    }
    const int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    crc = crcOfText(crc, std::to_string(size) + '\t' + std::to_string(mtime) + '\n');
    const int64_t block = std::min<int64_t>(kSampledBlockBytes, size);
    for (int64_t i = 0; i < kSampledBlocks; ++i) {
        const int64_t start = (size - block) / (kSampledBlocks - 1) * i;
        const int64_t at = i == kSampledBlocks - 1 ? size - block : start;
        if (!crcOfRange(d.fd, at, block, buf, crc)) {
            return false;
        }
    }
    return true;
}

}  // namespace

run::InputFile recordInput(const std::string& field, const std::string& path, int64_t limit,
                           int64_t sample_above) {
    run::InputFile f;
    f.field = field;
    f.path = path;
    const run::FileKind kind = run::fileKind(path);
    if (kind == run::FileKind::Missing) {
        f.kind = "missing";
        return f;
    }
    if (run::isSpecialFile(kind)) {
        // Never opened: reading a FIFO or a device blocks or never ends.
        f.kind = "special";
        f.method = run::describeFileKind(kind);
        return f;
    }
    std::error_code ec;
    if (kind == run::FileKind::Regular) {
        f.kind = "file";
        f.files = 1;
        f.bytes = static_cast<int64_t>(fs::file_size(path, ec));
        uLong crc = 0;
        bool sampled = false;
        if (ec || !crcOfFile(path, sample_above, crc, sampled)) {
            f.kind = "missing";
            return f;
        }
        f.method = sampled ? "sampled" : "content";
        f.checksum = hex8(crc);
        return f;
    }
    // A folder: its regular files in name order, each as "relative path, size" and
    // either its content's CRC or its modification time.
    struct Entry {
        std::string rel;
        fs::path full;
        int64_t bytes;
    };
    std::vector<Entry> entries;
    for (auto it = fs::recursive_directory_iterator(
             path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::error_code e2;
        if (it->is_regular_file(e2)) {
            entries.push_back({fs::relative(it->path(), path, e2).generic_string(), it->path(),
                               static_cast<int64_t>(it->file_size(e2))});
        }
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.rel < b.rel; });
    f.kind = "folder";
    f.files = static_cast<int64_t>(entries.size());
    for (const auto& e : entries) {
        f.bytes += e.bytes;
    }
    f.method = f.bytes <= limit ? "content" : "listing";
    uLong crc = crc32_z(0L, Z_NULL, 0);
    for (const auto& e : entries) {
        std::string line = e.rel + '\t' + std::to_string(e.bytes) + '\t';
        if (f.method == "content") {
            uLong file_crc = 0;
            bool sampled = false;
            line += crcOfFile(e.full.string(), sample_above, file_crc, sampled)
                        ? hex8(file_crc) + (sampled ? "s" : "")
                        : "unreadable";
        } else {
            std::error_code e2;
            const auto t = fs::last_write_time(e.full, e2);
            line += std::to_string(e2 ? 0 : t.time_since_epoch().count());
        }
        crc = crcOfText(crc, line + '\n');
    }
    f.checksum = hex8(crc);
    return f;
}

std::vector<run::InputFile> recordInputs(const config::ExperimentSpec& spec) {
    std::vector<run::InputFile> out;
    auto add = [&](const char* field, const std::string& path) {
        if (!path.empty()) {
            out.push_back(recordInput(field, path));
        }
    };
    if (spec.model.name == "torchscript") {
        add("model.file", spec.model.file);
    }
    const auto& d = spec.data;
    if (d.name == "fashion-mnist") {
        add("data.dir", d.dir.empty() ? config::defaultFashionMnistDir() : d.dir);
    } else if (d.name != "synthetic-images" && d.name != "synthetic-tokens") {
        add("data.path", d.path);
        add("data.labels", d.labels);
        add("data.val_path", d.val_path);
    }
    return out;
}

}  // namespace ampbench::data
