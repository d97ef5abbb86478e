#pragma once
#include <string>

namespace ampbench::config {

/// Where Fashion-MNIST's four IDX files are read from when a spec names no folder:
/// $AMPBENCH_FASHION_MNIST when set (a machine without Debian's package, such as a
/// GPU server), else Debian's dataset-fashion-mnist folder.
std::string defaultFashionMnistDir();

/// True when the default folder holds the training images.
bool haveFashionMnist();

}  // namespace ampbench::config
