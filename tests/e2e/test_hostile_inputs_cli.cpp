// Hostile input files through the real CLI: FIFOs and devices named as data or model
// files (at once, exit 3, never a hang), a rerun whose data became a FIFO, a model
// archive that opens but cannot be imported, bombs (an .npz member, a PNG header),
// implausible labels and values, and a data file whose name is not UTF-8.
#include <gtest/gtest.h>
#include <minizip/zip.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../core/NpyBytes.h"
#include "Shell.h"

namespace fs = std::filesystem;
namespace test = ampbench::test;

namespace {

const std::string kHostileCli = AMPBENCH_CLI_PATH;

std::string shellQuoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

void writeBytes(const fs::path& path, const std::string& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<long>(bytes.size()));
}

/// Four features and a label (row % 3), learnable.
std::string hostileTable(int rows) {
    std::string out = "a,b,c,d,label\n";
    for (int i = 0; i < rows; ++i) {
        const int y = i % 3;
        for (int f = 0; f < 4; ++f) {
            out += std::to_string(y + 0.01 * ((i * 7 + f) % 10)) + ",";
        }
        out += std::to_string(y) + "\n";
    }
    return out;
}

void writeZipEntries(const fs::path& path,
                     const std::vector<std::pair<std::string, std::string>>& entries,
                     bool compressed) {
    zipFile zf = zipOpen64(path.string().c_str(), 0);
    ASSERT_NE(zf, nullptr);
    for (const auto& [name, bytes] : entries) {
        ASSERT_EQ(
            zipOpenNewFileInZip(zf, name.c_str(), nullptr, nullptr, 0, nullptr, 0, nullptr,
                                compressed ? Z_DEFLATED : 0, compressed ? Z_BEST_COMPRESSION : 0),
            ZIP_OK);
        ASSERT_EQ(zipWriteInFileInZip(zf, bytes.data(), static_cast<unsigned>(bytes.size())),
                  ZIP_OK);
        ASSERT_EQ(zipCloseFileInZip(zf), ZIP_OK);
    }
    ASSERT_EQ(zipClose(zf, nullptr), ZIP_OK);
}

std::string bigEndian32(uint32_t v) {
    std::string s;
    for (int k = 3; k >= 0; --k) {
        s += static_cast<char>((v >> (8 * k)) & 0xff);
    }
    return s;
}

/// A PNG that is only its signature and an IHDR claiming w×h grey pixels.
std::string pngHeaderOnly(uint32_t w, uint32_t h) {
    const std::string ihdr =
        "IHDR" + bigEndian32(w) + bigEndian32(h) + std::string("\x08\0\0\0\0", 5);
    const auto crc =
        crc32(0L, reinterpret_cast<const Bytef*>(ihdr.data()), static_cast<uInt>(ihdr.size()));
    return "\x89PNG\r\n\x1a\n" + bigEndian32(13) + ihdr + bigEndian32(static_cast<uint32_t>(crc));
}

class HostileCli : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ampbench-hostile-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "r.db").string();
        good_ = (dir_ / "good.csv").string();
        writeBytes(good_, hostileTable(120));
    }
    void TearDown() override { fs::remove_all(dir_); }

    /// Bounded: a regression that blocks on a FIFO fails here instead of hanging.
    test::ShellResult cli(const std::string& args) const {
        return test::shell("cd " + shellQuoted(dir_.string()) + " && timeout 120 " + kHostileCli +
                           " --db " + shellQuoted(db_) + " " + args + " < /dev/null");
    }
    std::string fifo(const std::string& name) const {
        const auto path = (dir_ / name).string();
        EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
        return path;
    }
    /// A few steps of one arm; `model`: a built-in model's name or a quoted file.
    static std::string smallRun(const std::string& model = "mlp") {
        return "run --model " + model +
               " --micro-steps 6 --micro-batch 8 --seeds 1 --arm fp32=fp32 "
               "--eval-interval 0 --eval-batches 1 --warmup 0 --threads 1 -q ";
    }

    fs::path dir_;
    std::string db_, good_;
};

}  // namespace

TEST_F(HostileCli, FifosAndDevicesAreRefusedAtOnceWithExitThree) {
    const auto npy = fifo("x.npy"), npz = fifo("t.npz"), csv = fifo("t.csv"), model = fifo("n.pt");
    const std::string is_fifo = ": is a FIFO (named pipe), not a regular file";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--data " + shellQuoted(npy), npy + is_fifo},
        {"--data " + shellQuoted(npz), npz + is_fifo},
        {"--data " + shellQuoted(csv), csv + is_fifo},
        {"--data " + shellQuoted(good_) + " --val-data " + shellQuoted(csv), csv + is_fifo},
    };
    for (const auto& [args, expected] : cases) {
        const auto r = cli(smallRun() + args);
        EXPECT_EQ(r.code, 3) << args << "\n" << r.out;
        EXPECT_TRUE(mentions(r.out, expected)) << args << "\n" << r.out;
        EXPECT_FALSE(fs::exists(db_)) << "nothing may be written for " << args;
    }
    for (const auto& [file, expected] :
         {std::pair{model, model + is_fifo},
          std::pair{std::string("/dev/zero"),
                    std::string("/dev/zero: is a character device, not a regular file")}}) {
        const std::string args = "--data " + shellQuoted(good_);
        const auto r = cli(smallRun(shellQuoted(file)) + args);
        EXPECT_EQ(r.code, 3) << args << "\n" << r.out;
        EXPECT_TRUE(mentions(r.out, expected)) << args << "\n" << r.out;
        EXPECT_FALSE(fs::exists(db_)) << "nothing may be written for " << args;
    }
}

TEST_F(HostileCli, ARerunWhoseDataBecameAFifoIsRefusedNotHung) {
    const auto data = (dir_ / "d.csv").string();
    writeBytes(data, hostileTable(120));
    auto r = cli(smallRun() + "--data " + shellQuoted(data));
    ASSERT_EQ(r.code, 0) << r.out;
    fs::remove(data);
    fifo("d.csv");
    for (const std::string& args : {std::string("rerun 1"), std::string("rerun 1 --force")}) {
        r = cli(args);
        EXPECT_EQ(r.code, 3) << args << "\n" << r.out;
        EXPECT_TRUE(mentions(r.out, data + ": is a FIFO (named pipe), not a regular file"))
            << r.out;
    }
}

TEST_F(HostileCli, AModelArchiveThatOpensButCannotBeImportedExitsThreeNamingIt) {
    // A TorchScript archive in form (version, constants, data naming class Net) whose
    // code does not parse: it opens, and its import fails.
    const auto model = dir_ / "broken.pt";
    writeZipEntries(model,
                    {{"archive/version", "3\n"},
                     {"archive/constants.pkl", std::string("\x80\x02)q\x00.", 6)},
                     {"archive/data.pkl", std::string("\x80\x02"
                                                      "c__torch__\nNet\nq\x00)\x81}b.",
                                                      25)},
                     {"archive/code/__torch__.py", "class Net(Module):\n  def forward(self x\n"}},
                    false);
    const auto r = cli(smallRun(shellQuoted(model.string())) + "--data " + shellQuoted(good_));
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_TRUE(mentions(r.out, model.string() + ": not a TorchScript module")) << r.out;
}

TEST_F(HostileCli, BombsAndImplausibleValuesAreRefusedWithExitThree) {
    // 100 samples promised, 16 MB of zeros inflated (a few kB on disk).
    const auto bomb = dir_ / "bomb.npz";
    const std::string x = ampbench::data::test_files::npyBytes("<f4", {100, 4}, "", 0) +
                          std::string(size_t(16) << 20, '\0');
    std::string y =
        ampbench::data::test_files::npyBytes("<i8", {100}, "", 0) + std::string(800, '\0');
    writeZipEntries(bomb, {{"x.npy", x}, {"y.npy", y}}, true);
    ASSERT_LT(fs::file_size(bomb), size_t(1) << 20);
    writeBytes(dir_ / "images" / "cat" / "big.png", pngHeaderOnly(20000, 20000));
    writeBytes(dir_ / "huge.csv", "a,b,label\n1,2,0\n3,1e39,1\n");
    writeBytes(dir_ / "labels.csv", "a,b,label\n1,2,0\n3,4,1000000000\n");
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"bomb.npz", "its .npy header promises"},
        {"images", "images over 64 megapixels are refused"},
        {"huge.csv", "huge.csv line 3: column 'b' is 1e39, beyond float32"},
        {"labels.csv", "more than 1,000,000 classes are refused"},
    };
    for (const auto& [data, expected] : cases) {
        const auto r = cli(smallRun() + "--data " + shellQuoted((dir_ / data).string()));
        EXPECT_EQ(r.code, 3) << data << "\n" << r.out;
        EXPECT_TRUE(mentions(r.out, expected)) << data << "\n" << r.out;
    }
}

TEST_F(HostileCli, ADataFileWhoseNameIsNotUtf8TrainsAndIsShown) {
    const auto data = (dir_ / std::string("d\xff\xfe.csv")).string();
    writeBytes(data, hostileTable(120));
    auto r = cli(smallRun() + "--data " + shellQuoted(data));
    ASSERT_EQ(r.code, 0) << r.out;
    r = cli("show 1");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(mentions(r.out, "file        data.path")) << r.out;
}
