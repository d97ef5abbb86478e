// Fashion-MNIST reader on Debian's real files, and clear errors on bad files.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "core/data/DataError.h"
#include "core/data/Datasets.h"
#include "core/data/FashionMnist.h"
#include "core/run/RemoveTree.h"

namespace fs = std::filesystem;
using namespace ampbench::data;

namespace {

bool haveData() {
    return fs::exists(defaultFashionMnistDir() + "/train-images-idx3-ubyte.gz");
}

class TempDir {
  public:
    TempDir() {
        path_ = fs::temp_directory_path() /
                ("ampbench-fm-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
        fs::create_directories(path_);
    }
    ~TempDir() { ampbench::run::removeTree(path_.string()); }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

  private:
    static inline int counter_ = 0;
    fs::path path_;
};

/// An uncompressed IDX file: the reader takes plain files as well as gzip.
void writeIdx(const std::string& path, const std::vector<unsigned char>& bytes) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
}

std::vector<unsigned char> idxHeader(uint32_t magic, std::vector<uint32_t> dims) {
    std::vector<unsigned char> out;
    auto put = [&](uint32_t v) {
        for (int s = 24; s >= 0; s -= 8) {
            out.push_back(static_cast<unsigned char>(v >> s));
        }
    };
    put(magic);
    for (auto d : dims) {
        put(d);
    }
    return out;
}

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const DataError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(FashionMnist, ReadsDebiansFiles) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto fm = loadFashionMnist("");
    ASSERT_EQ(fm.train_images.sizes(), (at::IntArrayRef{60000, 1, 28, 28}));
    ASSERT_EQ(fm.test_images.sizes(), (at::IntArrayRef{10000, 1, 28, 28}));
    auto train_counts = at::bincount(fm.train_labels, {}, 10);
    auto test_counts = at::bincount(fm.test_labels, {}, 10);
    for (int c = 0; c < 10; ++c) {
        EXPECT_EQ(train_counts[c].item<int64_t>(), 6000) << "class " << c;
        EXPECT_EQ(test_counts[c].item<int64_t>(), 1000) << "class " << c;
    }
    // Normalized with the training set's statistics: mean ≈ 0, std ≈ 1.
    EXPECT_NEAR(fm.train_images.mean().item<double>(), 0.0, 0.01);
    EXPECT_NEAR(fm.train_images.std().item<double>(), 1.0, 0.01);
}

TEST(FashionMnist, ValidationSplitIsHeldOutAndFixed) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    ampbench::config::DataSpec spec;
    auto ds = openDataset(spec);
    EXPECT_EQ(ds->trainSize(), 54000);
    EXPECT_EQ(ds->valSize(), 6000);
    EXPECT_EQ(openDataset(spec).get(), ds.get()) << "read once per process";
    auto v = ds->valBatch(0, 6000);
    auto counts = at::bincount(v.target, {}, 10);
    EXPECT_GT(counts.min().item<int64_t>(), 450) << "every class is in the validation part";
}

TEST(FashionMnist, WrongMagicIsNamed) {
    TempDir dir;
    auto path = dir.file("bad-images");
    auto bytes = idxHeader(0x00000801, {2, 28, 28});  // a label magic in an image file
    writeIdx(path, bytes);
    auto msg = errorOf([&] { readIdxImages(path); });
    EXPECT_NE(msg.find("wrong magic number"), std::string::npos) << msg;
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST(FashionMnist, TruncatedFileIsNamed) {
    TempDir dir;
    auto path = dir.file("short-images");
    auto bytes = idxHeader(0x00000803, {3, 28, 28});
    bytes.resize(bytes.size() + 28 * 28 * 2);  // two of three images
    writeIdx(path, bytes);
    auto msg = errorOf([&] { readIdxImages(path); });
    EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;

    // A gzip stream cut in the middle.
    if (haveData()) {
        std::ifstream in(defaultFashionMnistDir() + "/t10k-labels-idx1-ubyte.gz", std::ios::binary);
        std::vector<char> all((std::istreambuf_iterator<char>(in)), {});
        auto cut = dir.file("cut-labels.gz");
        std::ofstream(cut, std::ios::binary).write(all.data(), static_cast<long>(all.size() / 2));
        auto msg2 = errorOf([&] { readIdxLabels(cut); });
        EXPECT_FALSE(msg2.empty());
        EXPECT_NE(msg2.find(cut), std::string::npos) << msg2;
    }
}

TEST(FashionMnist, MissingDataSaysHowToGetIt) {
    auto msg = errorOf([] { loadFashionMnist("/nonexistent/fashion"); });
    EXPECT_NE(msg.find("dataset-fashion-mnist"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--data"), std::string::npos) << msg;
    TempDir dir;
    auto msg2 = errorOf([&] { loadFashionMnist(dir.file("")); });
    EXPECT_NE(msg2.find("train-images-idx3-ubyte"), std::string::npos) << msg2;
}

// A FIFO in the dataset folder would block the reader; a gzip bomb would ask for
// gigabytes. Both are refused naming the file.
TEST(FashionMnist, AFifoOrAGzipBombIsRefusedNamingTheFile) {
    TempDir dir;
    const auto fifo = dir.file("train-images-idx3-ubyte");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto msg = errorOf([&] { readIdxImages(fifo); });
    EXPECT_NE(msg.find(fifo + ": is a FIFO"), std::string::npos) << msg;

    // 300 MiB of zeros deflate to about 300 kB.
    const auto bomb = dir.file("bomb-labels.gz");
    gzFile gz = gzopen(bomb.c_str(), "wb1");
    ASSERT_NE(gz, nullptr);
    const std::vector<char> zeros(1 << 20, 0);
    for (int i = 0; i < 300; ++i) {
        ASSERT_EQ(gzwrite(gz, zeros.data(), static_cast<unsigned>(zeros.size())), 1 << 20);
    }
    gzclose(gz);
    msg = errorOf([&] { readIdxLabels(bomb); });
    EXPECT_NE(msg.find(bomb + ": inflates to more than 256 MiB"), std::string::npos) << msg;
}
