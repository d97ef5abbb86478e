#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace ampbench::data {

/// Raw contents of an IDX file (gzip-compressed or plain).
struct IdxImages {
    int64_t count = 0;
    int64_t rows = 0;
    int64_t cols = 0;
    std::vector<uint8_t> pixels;  ///< count × rows × cols
};
IdxImages readIdxImages(const std::string& path);
std::vector<uint8_t> readIdxLabels(const std::string& path);

/// Where Debian's dataset-fashion-mnist package puts the files.
std::string defaultFashionMnistDir();

/// Fashion-MNIST as tensors: images float32 N×1×28×28 normalized with the training
/// set's mean and standard deviation, labels int64 N.
struct FashionMnist {
    at::Tensor train_images, train_labels;
    at::Tensor test_images, test_labels;
};
/// Throws DataError naming the missing or bad file and how to get the data.
FashionMnist loadFashionMnist(const std::string& dir);

}  // namespace ampbench::data
