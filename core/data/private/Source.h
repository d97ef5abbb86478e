#pragma once
// The samples of one file (or folder) as stored, and the dataset that splits,
// converts and normalises them.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/data/Datasets.h"

namespace ampbench::data {

/// One file's samples as stored. Reads are const and thread-safe.
class Source {
  public:
    virtual ~Source() = default;
    /// The file or folder as the user named it, for messages.
    virtual const std::string& name() const = 0;
    virtual int64_t size() const = 0;
    /// One input's shape as read() returns it, without the batch dimension.
    virtual std::vector<int64_t> sampleShape() const = 0;
    /// The inputs' dtype as read() returns them.
    virtual c10::ScalarType inputType() const = 0;
    /// Every target, as stored (small enough to scan, or mapped).
    virtual const at::Tensor& targets() const = 0;
    /// Every input when they are one tensor (for token ids' range); undefined otherwise.
    virtual at::Tensor inputs() const { return {}; }
    /// Where the inputs and the targets are, for messages about their values.
    virtual std::string inputsWhere() const { return name(); }
    virtual std::string targetsWhere() const { return name(); }
    /// Inputs and targets of `rows` (int64), as stored: converted by the dataset.
    virtual Batch read(const at::Tensor& rows) const = 0;
    /// "x uint8 [60000, 1, 28, 28]" and "y int64 [60000]".
    virtual std::string describeInputs() const = 0;
    virtual std::string describeTargets() const = 0;
};

/// An array of a TensorSource and how to name it.
struct NamedArray {
    at::Tensor data;
    std::string label;  ///< in describe(): "x", "labels y.npy", "features"
    std::string where;  ///< in messages: "train.npz (x)", "y.npy"
};

/// Inputs and targets held as tensors (in memory or mapped from a file).
class TensorSource final : public Source {
  public:
    /// `x` is N×…; a 1-D `x` is read as N samples of one feature. `y` has N rows
    /// (the caller checks).
    TensorSource(std::string name, NamedArray x, NamedArray y);
    const std::string& name() const override { return name_; }
    int64_t size() const override { return x_.data.size(0); }
    std::vector<int64_t> sampleShape() const override;
    c10::ScalarType inputType() const override { return x_.data.scalar_type(); }
    const at::Tensor& targets() const override { return y_.data; }
    at::Tensor inputs() const override { return x_.data; }
    std::string inputsWhere() const override { return x_.where; }
    std::string targetsWhere() const override { return y_.where; }
    Batch read(const at::Tensor& rows) const override;
    std::string describeInputs() const override;
    std::string describeTargets() const override;

  private:
    std::string name_;
    NamedArray x_, y_;  ///< possibly views of a read-only mapping: never written
};

/// Where the validation part comes from.
struct Validation {
    std::shared_ptr<const Source> source;  ///< null: a fraction of the training source
    std::string origin;                    ///< "val.npz", "x_val, y_val"
};

/// The dataset over a training source and its validation part (spec.val_fraction of
/// the training source in a fixed random order when `val.source` is null). Checks
/// that both agree, fills InputShape and applies spec.mean and spec.std.
std::shared_ptr<const Dataset> makeFileDataset(const config::DataSpec& spec,
                                               std::shared_ptr<const Source> train, Validation val,
                                               std::vector<std::string> class_names = {});

}  // namespace ampbench::data
