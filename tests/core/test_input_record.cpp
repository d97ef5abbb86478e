// The record of the files a run read: checksums that change with the bytes, folders
// by content or (when large) by listing, and sentences naming what changed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ScratchDir.h"
#include "core/data/InputRecord.h"

using namespace ampbench;
namespace fs = std::filesystem;

namespace {

class InputRecordTest : public test::ScratchDirTest {
  protected:
    void SetUp() override {
        ScratchDirTest::SetUp();
        fs::create_directories(dir_ / "folder" / "sub");
    }
    static void write(const fs::path& p, const std::string& text) {
        std::ofstream(p, std::ios::binary) << text;
    }
};

}  // namespace

TEST_F(InputRecordTest, FileChecksumFollowsItsBytes) {
    const auto file = dir_ / "data.csv";
    write(file, "a,b\n1,2\n");
    const auto first = data::recordInput("data.path", file.string());
    EXPECT_EQ(first.kind, "file");
    EXPECT_EQ(first.bytes, 8);
    EXPECT_EQ(first.checksum.size(), 8u);
    EXPECT_EQ(data::recordInput("data.path", file.string()), first);
    write(file, "a,b\n1,3\n");  // same size, other bytes
    const auto second = data::recordInput("data.path", file.string());
    EXPECT_EQ(second.bytes, first.bytes);
    EXPECT_NE(second.checksum, first.checksum);
    const auto lines = run::inputDifferences({first}, {second});
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("data.path " + file.string() + " changed: 8 bytes, CRC-32 " +
                            first.checksum + " then"),
              std::string::npos)
        << lines[0];
    EXPECT_TRUE(run::inputDifferences({first}, {first}).empty());
}

TEST_F(InputRecordTest, FolderByContentOrByListingAndMissingPaths) {
    write(dir_ / "folder" / "a.png", "aaaa");
    write(dir_ / "folder" / "sub" / "b.png", "bb");
    const auto folder = (dir_ / "folder").string();
    const auto content = data::recordInput("data.path", folder);
    EXPECT_EQ(content.kind, "folder");
    EXPECT_EQ(content.method, "content");
    EXPECT_EQ(content.files, 2);
    EXPECT_EQ(content.bytes, 6);
    const auto listing = data::recordInput("data.path", folder, /*limit=*/4);
    EXPECT_EQ(listing.method, "listing");
    // A renamed file changes the record although no byte changed.
    fs::rename(dir_ / "folder" / "sub" / "b.png", dir_ / "folder" / "sub" / "c.png");
    EXPECT_NE(data::recordInput("data.path", folder).checksum, content.checksum);

    const auto gone = data::recordInput("data.val_path", (dir_ / "none.csv").string());
    EXPECT_EQ(gone.kind, "missing");
    const auto lines = run::inputDifferences({content}, {gone});
    ASSERT_EQ(lines.size(), 2u);  // one file no longer read, another read now
}

TEST_F(InputRecordTest, SpecRecordsTheFilesItNamesAndRoundTripsAsJson) {
    write(dir_ / "train.csv", "x,y\n1,0\n");
    write(dir_ / "val.csv", "x,y\n2,1\n");
    config::ExperimentSpec spec;
    spec.data.name = "csv";
    spec.data.path = (dir_ / "train.csv").string();
    spec.data.val_path = (dir_ / "val.csv").string();
    const auto inputs = data::recordInputs(spec);
    ASSERT_EQ(inputs.size(), 2u);
    EXPECT_EQ(inputs[0].field, "data.path");
    EXPECT_EQ(inputs[1].field, "data.val_path");
    EXPECT_EQ(run::inputsFromJson(run::inputsToJson(inputs)), inputs);
    EXPECT_TRUE(run::inputsFromJson("not json").empty());

    spec.data.name = "synthetic-images";
    EXPECT_TRUE(data::recordInputs(spec).empty());
}
