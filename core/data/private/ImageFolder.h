#pragma once
// A folder of PNG and JPEG images, one sub-folder per class, decoded per batch.
#include <cstdint>
#include <string>
#include <vector>

#include "core/data/private/Source.h"

namespace ampbench::data {

class ImageFolderSource final : public Source {
  public:
    /// Lists `folder`'s class sub-folders (sorted by name) and their images (sorted),
    /// and decodes the first image for the samples' shape. `channels`: 1 (grey) or
    /// 3 (RGB); `image_size` > 0: the shorter side resized to it, then the centre
    /// cropped to a square; 0: every image as stored, all of the first one's size.
    /// `classes`: the training classes when this is a validation folder (its
    /// sub-folders must be among them); empty: its own sub-folders are the classes.
    ImageFolderSource(const std::string& folder, int channels, int image_size,
                      const std::vector<std::string>& classes = {});
    const std::vector<std::string>& classNames() const { return class_names_; }

    const std::string& name() const override { return name_; }
    int64_t size() const override { return static_cast<int64_t>(files_.size()); }
    std::vector<int64_t> sampleShape() const override { return {channels_, height_, width_}; }
    c10::ScalarType inputType() const override { return c10::ScalarType::Float; }
    const at::Tensor& targets() const override { return labels_; }
    /// Float C×H×W images in [0, 1]; DataError naming the file that cannot be read.
    Batch read(const at::Tensor& rows) const override;
    std::string describeInputs() const override;
    std::string describeTargets() const override;

  private:
    at::Tensor decode(int64_t row) const;

    std::string name_;
    std::vector<std::string> files_;  ///< folder/class/file, in class then name order
    std::vector<std::string> class_names_;
    at::Tensor labels_;  ///< int64, one per file
    int64_t channels_ = 3, height_ = 0, width_ = 0;
    int image_size_ = 0;
    int64_t first_height_ = 0, first_width_ = 0;  ///< as stored, for messages
};

}  // namespace ampbench::data
