#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "core/config/ExperimentSpec.h"

namespace ampbench::data {

struct Batch {
    at::Tensor input;   ///< images N×C×H×W float, features N×F float, or tokens N×T int64
    at::Tensor target;  ///< labels N int64, next tokens N×T int64, or values N×… float
};

/// What a model needs to know about its input.
struct InputShape {
    int channels = 1, height = 28, width = 28;
    int classes = 10;  ///< label values 0..classes-1 (0 for regression targets)
    int seq_len = 0;   ///< > 0 for token data
    int vocab = 0;
    /// One sample's input and target shape, without the batch dimension ({} = a scalar).
    std::vector<int64_t> sample = {1, 28, 28};
    std::vector<int64_t> target = {};
    bool float_target = false;             ///< regression values instead of integer labels
    std::vector<std::string> class_names;  ///< when the data names its classes
    bool tokens() const { return seq_len > 0; }
};

/// A dataset split into a training part (sampled by index) and a held-out
/// validation part. Thread-safe for concurrent reads.
class Dataset {
  public:
    virtual ~Dataset() = default;
    virtual InputShape shape() const = 0;
    virtual int64_t trainSize() const = 0;
    virtual int64_t valSize() const = 0;
    /// Training samples at the given indices (int64 CPU tensor), on the CPU.
    virtual Batch trainBatch(const at::Tensor& indices) const = 0;
    /// Validation samples [start, start+count), on the CPU.
    virtual Batch valBatch(int64_t start, int64_t count) const = 0;
    /// The dataset's own test split, when it has one (0: none).
    virtual int64_t testSize() const { return 0; }
    /// Test samples [start, start+count), on the CPU; only when testSize() > 0.
    virtual Batch testBatch(int64_t start, int64_t count) const { return valBatch(start, count); }
    /// True when samples are generated, not read: the trainer may then keep a
    /// pool of batches on the device and skip the prefetcher.
    virtual bool synthetic() const = 0;
    /// Where the data came from and what it holds, one line ("train.npz: x uint8
    /// [60000, 1, 28, 28] scaled to [0, 1], y int64 [60000]").
    virtual std::string describe() const { return {}; }
};

/// "[64, 1, 28, 28]": a shape in messages.
std::string shapeText(at::IntArrayRef shape);
/// NumPy's name of a dtype in messages: "float32", "int64", "uint8", ...
std::string dtypeName(at::ScalarType type);

/// Opens the dataset a spec names. Fashion-MNIST is read once per process and
/// shared; the validation part is a fixed, seed-independent slice of the
/// training file, so every run of every arm is judged on the same images.
std::shared_ptr<const Dataset> openDataset(const config::DataSpec& spec);

}  // namespace ampbench::data
