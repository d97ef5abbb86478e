#pragma once
#include <string>

namespace ampbench::config {

/// Where Fashion-MNIST's four IDX files are read from when a spec names no folder:
/// $AMPBENCH_FASHION_MNIST when set (a machine without Debian's package, such as a
/// GPU server), else Debian's dataset-fashion-mnist folder.
std::string defaultFashionMnistDir();

/// True when the default folder holds the training images.
bool haveFashionMnist();

/// The dataset kind a path names, by what it is: a folder with Fashion-MNIST's
/// files "fashion-mnist", another folder "image-folder", an .npz or .npy file
/// "arrays", a .csv file "csv"; "" when it is none of these.
std::string datasetForPath(const std::string& path);

/// Whether a model name is a file to load (ends in .pt, .pth or .ts, or holds a '/').
bool isModelFile(const std::string& name);

}  // namespace ampbench::config
