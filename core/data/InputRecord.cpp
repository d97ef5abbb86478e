#include "core/data/InputRecord.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/config/DataPaths.h"

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

/// CRC-32 of a file's bytes; false when it cannot be read to the end.
bool crcOfFile(const fs::path& path, uLong& crc) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return false;
    }
    std::vector<char> buf(size_t(1) << 20);
    crc = crc32_z(0L, Z_NULL, 0);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        const auto n = in.gcount();
        if (n > 0) {
            crc = crc32_z(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<size_t>(n));
        }
    }
    return in.eof();
}

}  // namespace

run::InputFile recordInput(const std::string& field, const std::string& path, int64_t limit) {
    run::InputFile f;
    f.field = field;
    f.path = path;
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
        f.kind = "missing";
        return f;
    }
    if (!fs::is_directory(status)) {
        f.kind = "file";
        f.method = "content";
        f.files = 1;
        f.bytes = static_cast<int64_t>(fs::file_size(path, ec));
        uLong crc = 0;
        if (ec || !crcOfFile(path, crc)) {
            f.kind = "missing";
            return f;
        }
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
            line += crcOfFile(e.full, file_crc) ? hex8(file_crc) : "unreadable";
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
