#include "core/data/Datasets.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <map>
#include <mutex>
#include <tuple>

#include "core/data/DataError.h"
#include "core/data/FashionMnist.h"
#include "core/data/FileDatasets.h"
#include "core/data/private/Split.h"

namespace ampbench::data {
namespace {

class FashionMnistDataset final : public Dataset {
  public:
    FashionMnistDataset(const FashionMnist& raw, double val_fraction) {
        auto [train_idx, val_idx] = splitRows(raw.train_images.size(0), val_fraction);
        train_x_ = raw.train_images.index_select(0, train_idx).contiguous();
        train_y_ = raw.train_labels.index_select(0, train_idx).contiguous();
        val_x_ = raw.train_images.index_select(0, val_idx).contiguous();
        val_y_ = raw.train_labels.index_select(0, val_idx).contiguous();
        test_x_ = raw.test_images;
        test_y_ = raw.test_labels;
    }
    InputShape shape() const override { return {}; }
    int64_t testSize() const override { return test_x_.size(0); }
    Batch testBatch(int64_t start, int64_t count) const override {
        return {test_x_.slice(0, start, start + count), test_y_.slice(0, start, start + count)};
    }
    std::string describe() const override {
        return "Fashion-MNIST: " + std::to_string(trainSize()) + " training, " +
               std::to_string(valSize()) + " validation (held out), " + std::to_string(testSize()) +
               " test images";
    }
    int64_t trainSize() const override { return train_x_.size(0); }
    int64_t valSize() const override { return val_x_.size(0); }
    Batch trainBatch(const at::Tensor& idx) const override {
        return {train_x_.index_select(0, idx), train_y_.index_select(0, idx)};
    }
    Batch valBatch(int64_t start, int64_t count) const override {
        return {val_x_.slice(0, start, start + count), val_y_.slice(0, start, start + count)};
    }
    bool synthetic() const override { return false; }

  private:
    at::Tensor train_x_, train_y_, val_x_, val_y_, test_x_, test_y_;
};

/// Random images with random labels: for throughput, not for accuracy. A pool of
/// fixed samples is drawn once; batches index into it.
class SyntheticImages final : public Dataset {
  public:
    explicit SyntheticImages(const config::DataSpec& s) {
        shape_.channels = s.channels;
        shape_.height = s.height;
        shape_.width = s.width;
        shape_.classes = s.classes;
        shape_.sample = {s.channels, s.height, s.width};
        auto gen = at::detail::createCPUGenerator(kSplitSeed);
        train_x_ = at::randn({kPool, s.channels, s.height, s.width}, gen, at::kFloat);
        train_y_ = at::randint(s.classes, {kPool}, gen, at::kLong);
        val_x_ = at::randn({kPool / 4, s.channels, s.height, s.width}, gen, at::kFloat);
        val_y_ = at::randint(s.classes, {kPool / 4}, gen, at::kLong);
    }
    InputShape shape() const override { return shape_; }
    int64_t trainSize() const override { return kPool; }
    int64_t valSize() const override { return kPool / 4; }
    Batch trainBatch(const at::Tensor& idx) const override {
        return {train_x_.index_select(0, idx), train_y_.index_select(0, idx)};
    }
    Batch valBatch(int64_t start, int64_t count) const override {
        return {val_x_.slice(0, start, start + count), val_y_.slice(0, start, start + count)};
    }
    bool synthetic() const override { return true; }

  private:
    static constexpr int64_t kPool = 512;
    InputShape shape_;
    at::Tensor train_x_, train_y_, val_x_, val_y_;
};

/// Random token sequences; the target is the input shifted by one.
class SyntheticTokens final : public Dataset {
  public:
    explicit SyntheticTokens(const config::DataSpec& s) {
        shape_.seq_len = s.seq_len;
        shape_.vocab = s.vocab;
        shape_.classes = s.vocab;
        shape_.channels = shape_.height = shape_.width = 0;
        shape_.sample = {s.seq_len};
        shape_.target = {s.seq_len};
        auto gen = at::detail::createCPUGenerator(kSplitSeed);
        train_ = at::randint(s.vocab, {kPool, s.seq_len + 1}, gen, at::kLong);
        val_ = at::randint(s.vocab, {kPool / 4, s.seq_len + 1}, gen, at::kLong);
    }
    InputShape shape() const override { return shape_; }
    int64_t trainSize() const override { return kPool; }
    int64_t valSize() const override { return kPool / 4; }
    Batch trainBatch(const at::Tensor& idx) const override {
        return split(train_.index_select(0, idx));
    }
    Batch valBatch(int64_t start, int64_t count) const override {
        return split(val_.slice(0, start, start + count));
    }
    bool synthetic() const override { return true; }

  private:
    static Batch split(const at::Tensor& seq) {
        auto t = seq.size(1);
        return {seq.slice(1, 0, t - 1).contiguous(), seq.slice(1, 1, t).contiguous()};
    }
    static constexpr int64_t kPool = 256;
    InputShape shape_;
    at::Tensor train_, val_;
};

}  // namespace

std::string shapeText(at::IntArrayRef shape) {
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        out += (i ? ", " : "") + std::to_string(shape[i]);
    }
    return out + "]";
}

std::string dtypeName(at::ScalarType type) {
    switch (type) {
        case at::kBool:
            return "bool";
        case at::kByte:
            return "uint8";
        case at::kChar:
            return "int8";
        case at::kShort:
            return "int16";
        case at::kInt:
            return "int32";
        case at::kLong:
            return "int64";
        case at::kHalf:
            return "float16";
        case at::kBFloat16:
            return "bfloat16";
        case at::kFloat:
            return "float32";
        case at::kDouble:
            return "float64";
        default:
            return c10::toString(type);
    }
}

std::shared_ptr<const Dataset> openDataset(const config::DataSpec& spec) {
    if (spec.name == "fashion-mnist") {
        // The files are parsed once per process; each split fraction gets its own view.
        static std::mutex mutex;  // guards cache
        static std::map<std::tuple<std::string, double>, std::shared_ptr<const Dataset>> cache;
        const std::string dir = spec.dir.empty() ? defaultFashionMnistDir() : spec.dir;
        std::lock_guard<std::mutex> lock(mutex);
        auto key = std::make_tuple(dir, spec.val_fraction);
        auto it = cache.find(key);
        if (it != cache.end()) {
            return it->second;
        }
        auto raw = loadFashionMnist(dir);
        auto ds = std::make_shared<FashionMnistDataset>(raw, spec.val_fraction);
        cache.emplace(key, ds);
        return ds;
    }
    if (spec.name == "synthetic-images") {
        return std::make_shared<SyntheticImages>(spec);
    }
    if (spec.name == "synthetic-tokens") {
        return std::make_shared<SyntheticTokens>(spec);
    }
    if (spec.name == "arrays") {
        return openArrays(spec);
    }
    if (spec.name == "image-folder") {
        return openImageFolder(spec);
    }
    if (spec.name == "csv") {
        return openCsv(spec);
    }
    throw DataError("unknown dataset '" + spec.name +
                    "' (known: fashion-mnist, synthetic-images, synthetic-tokens, arrays, "
                    "image-folder, csv)");
}

}  // namespace ampbench::data
