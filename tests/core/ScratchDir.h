#pragma once
// A fixture whose test gets a folder of its own under the temporary directory,
// removed after the test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

#include "core/run/RemoveTree.h"

namespace ampbench::test {

class ScratchDirTest : public ::testing::Test {
  protected:
    void SetUp() override {
        std::random_device rd;
        const std::string suite =
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name();
        dir_ = std::filesystem::temp_directory_path() /
               ("ampbench_" + suite + "_" + std::to_string(getpid()) + "_" + std::to_string(rd()));
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { ampbench::run::removeTree(dir_.string()); }
    std::string file(const std::string& name) const { return (dir_ / name).string(); }

    std::filesystem::path dir_;
};

}  // namespace ampbench::test
