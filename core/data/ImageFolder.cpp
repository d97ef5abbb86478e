#include "core/data/private/ImageFolder.h"

#include <ATen/ATen.h>
#include <stb/stb_image.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <system_error>

#include "core/data/DataError.h"
#include "core/run/InputFiles.h"

namespace fs = std::filesystem;

namespace ampbench::data {
namespace {

/// 8000×8000: beyond any image a classifier trains on, yet one decoded image (float32
/// per channel) stays under a gigabyte.
constexpr int64_t kMaxImagePixels = 64000000;

bool isImage(const fs::path& p) {
    auto ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

bool hidden(const fs::path& p) {
    return p.filename().string().rfind('.', 0) == 0;
}

/// The entries of `dir` that `keep` accepts, sorted by name; DataError when it
/// cannot be listed.
template <typename Keep>
std::vector<std::string> sortedEntries(const fs::path& dir, const Keep& keep) {
    std::error_code ec;
    std::vector<std::string> names;
    fs::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        if (!hidden(it->path()) && keep(*it)) {
            names.push_back(it->path().filename().string());
        }
    }
    if (ec) {
        throw DataError(dir.string() + ": cannot list (" + ec.message() + ")");
    }
    std::sort(names.begin(), names.end());
    return names;
}

/// torchvision's Resize(size) then CenterCrop(size): the shorter side becomes
/// `size` (bilinear, antialiased), the longer side keeps the aspect ratio
/// (rounded down), then the centre square is cut out (offsets rounded half to even).
at::Tensor resizeAndCrop(const at::Tensor& chw, int64_t size) {
    const int64_t h = chw.size(1), w = chw.size(2);
    int64_t new_h = size, new_w = size;
    if (w <= h) {
        new_h = static_cast<int64_t>(static_cast<double>(size) * h / w);
    } else {
        new_w = static_cast<int64_t>(static_cast<double>(size) * w / h);
    }
    auto img = chw;
    if (new_h != h || new_w != w) {
        img = at::_upsample_bilinear2d_aa(chw.unsqueeze(0), {new_h, new_w}, false).squeeze(0);
    }
    auto top = static_cast<int64_t>(std::nearbyint((new_h - size) / 2.0));
    auto left = static_cast<int64_t>(std::nearbyint((new_w - size) / 2.0));
    return img.slice(1, top, top + size).slice(2, left, left + size);
}

}  // namespace

ImageFolderSource::ImageFolderSource(const std::string& folder, int channels, int image_size,
                                     const std::vector<std::string>& classes)
    : name_(folder), channels_(channels), image_size_(image_size) {
    if (channels != 1 && channels != 3) {
        throw DataError("data.channels is " + std::to_string(channels) +
                        ": images are read as 1 (grey) or 3 (RGB) channels");
    }
    if (image_size < 0) {
        throw DataError("data.image_size is " + std::to_string(image_size) +
                        ": give the side in pixels, or 0 to keep every image as stored");
    }
    const fs::path root(folder);
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
        if (const run::FileKind kind = run::fileKind(folder); kind != run::FileKind::Missing) {
            throw DataError(folder + ": is " + run::describeFileKind(kind) +
                            ", not a folder (one sub-folder per class)");
        }
        throw DataError(folder + ": cannot open (" +
                        std::make_error_code(std::errc::no_such_file_or_directory).message() + ")");
    }
    auto folders = sortedEntries(root, [](const fs::directory_entry& e) {
        std::error_code err;
        return e.is_directory(err);
    });
    if (folders.empty()) {
        auto loose =
            sortedEntries(root, [](const fs::directory_entry& e) { return isImage(e.path()); });
        throw DataError(folder +
                        ": no class folders (expected one sub-folder per class holding PNG or JPEG "
                        "files" +
                        (loose.empty()
                             ? std::string(")")
                             : "; it holds " + std::to_string(loose.size()) +
                                   (loose.size() == 1 ? " image" : " images") + " directly)"));
    }
    class_names_ = classes.empty() ? folders : classes;
    std::vector<int64_t> labels;
    for (const auto& cls : folders) {
        auto pos = std::find(class_names_.begin(), class_names_.end(), cls);
        if (pos == class_names_.end()) {
            std::string known;
            for (const auto& c : class_names_) {
                known += (known.empty() ? "" : ", ") + c;
            }
            throw DataError(folder + ": class folder '" + cls +
                            "' is not one of the training classes (" + known + ")");
        }
        auto images = sortedEntries(root / cls, [](const fs::directory_entry& e) {
            std::error_code err;
            return e.is_regular_file(err) && isImage(e.path());
        });
        if (images.empty()) {
            throw DataError((root / cls).string() +
                            ": no PNG or JPEG files (every class folder needs at least one)");
        }
        for (const auto& file : images) {
            files_.push_back((root / cls / file).string());
            labels.push_back(pos - class_names_.begin());
        }
    }
    labels_ = at::tensor(labels, at::kLong);
    // The first image fixes the samples' shape; the rest are decoded per batch.
    auto first = decode(0);
    first_height_ = first.size(1);
    first_width_ = first.size(2);
    height_ = image_size > 0 ? image_size : first_height_;
    width_ = image_size > 0 ? image_size : first_width_;
}

at::Tensor ImageFolderSource::decode(int64_t row) const {
    const auto& file = files_.at(static_cast<size_t>(row));
    std::string why;
    const int fd = run::openRegularFile(file, why);
    if (fd < 0) {
        throw DataError(why);
    }
    std::FILE* f = ::fdopen(fd, "rb");
    if (!f) {
        const int err = errno;
        ::close(fd);
        throw DataError(file + ": cannot open (" + std::generic_category().message(err) + ")");
    }
    int w = 0, h = 0, stored = 0;
    // The header's size, before any pixel is decoded: a few bytes can ask for gigabytes.
    if (stbi_info_from_file(f, &w, &h, &stored) &&
        static_cast<int64_t>(w) * static_cast<int64_t>(h) > kMaxImagePixels) {
        std::fclose(f);
        throw DataError(file + ": " + std::to_string(w) + "×" + std::to_string(h) +
                        " pixels: images over " + std::to_string(kMaxImagePixels / 1000000) +
                        " megapixels are refused");
    }
    std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
        stbi_load_from_file(f, &w, &h, &stored, static_cast<int>(channels_)), stbi_image_free);
    std::fclose(f);
    if (!pixels) {
        throw DataError(file + ": cannot decode (not a PNG or JPEG: " + stbi_failure_reason() +
                        ")");
    }
    // to() copies out of stb's buffer before it is freed.
    auto img = at::from_blob(pixels.get(), {h, w, channels_}, at::kByte)
                   .permute({2, 0, 1})
                   .to(at::kFloat)
                   .div_(255);
    if (image_size_ > 0) {
        return resizeAndCrop(img, image_size_);
    }
    if (height_ > 0 && (h != height_ || w != width_)) {
        throw DataError(file + ": " + std::to_string(w) + "×" + std::to_string(h) +
                        " pixels, but the first image (" + files_.front() + ") has " +
                        std::to_string(width_) + "×" + std::to_string(height_) +
                        " (set data.image_size to resize every image)");
    }
    return img;
}

Batch ImageFolderSource::read(const at::Tensor& rows) const {
    auto r = rows.to(at::kLong).contiguous();
    const int64_t n = r.numel();
    const int64_t* idx = r.data_ptr<int64_t>();
    auto out = at::empty({n, channels_, height_, width_}, at::kFloat);
    for (int64_t i = 0; i < n; ++i) {
        out[i].copy_(decode(idx[i]));
    }
    return {out, labels_.index_select(0, r)};
}

std::string ImageFolderSource::describeInputs() const {
    std::string how =
        image_size_ > 0
            ? "resized and centre-cropped to " + std::to_string(image_size_) + "×" +
                  std::to_string(image_size_)
            : "as stored (" + std::to_string(width_) + "×" + std::to_string(height_) + ")";
    return std::to_string(files_.size()) + " images, " + (channels_ == 1 ? "grey" : "RGB") + ", " +
           how + ", as float32 " + shapeText({size(), channels_, height_, width_}) + " in [0, 1]";
}

std::string ImageFolderSource::describeTargets() const {
    return "labels int64 " + shapeText({size()});
}

}  // namespace ampbench::data
