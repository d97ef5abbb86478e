// Datasets from image folders (PNG, JPEG) and CSV tables, written here at test time,
// and a named error for each way they can be wrong.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "core/data/DataError.h"
#include "core/data/Datasets.h"
#include "core/data/FileDatasets.h"
#include "tests/core/FileDataFiles.h"

namespace fs = std::filesystem;
using namespace ampbench;
using namespace ampbench::data;
using namespace ampbench::data::test_files;

// ---- image folders ----

TEST(FileData, ImageFolderDecodesPngAndJpegPerClass) {
    TempDir dir;
    writeImage(dir.file("imgs/cat/1.png"), 4, 3, 10);
    writeImage(dir.file("imgs/cat/2.PNG"), 4, 3, 20);
    writeImage(dir.file("imgs/dog/a.jpg"), 4, 3, 100);
    writeImage(dir.file("imgs/dog/b.jpeg"), 4, 3, 200);
    writeFile(dir.file("imgs/dog/notes.txt"), "not an image");
    writeImage(dir.file("imgs/.thumbnails/x.png"), 4, 3, 0);  // hidden: not a class
    writeImage(dir.file("val/dog/v.png"), 4, 3, 50);
    auto s = spec("image-folder", dir.file("imgs"));
    auto ds = openImageFolder(s);
    auto shape = ds->shape();
    EXPECT_EQ(shape.sample, (std::vector<int64_t>{3, 3, 4}));
    EXPECT_EQ(shape.channels, 3);
    EXPECT_EQ(shape.height, 3);
    EXPECT_EQ(shape.width, 4);
    EXPECT_EQ(shape.classes, 2);
    EXPECT_EQ(shape.class_names, (std::vector<std::string>{"cat", "dog"}));
    ASSERT_EQ(ds->trainSize(), 4);
    auto b = inFileOrder(*ds);
    EXPECT_TRUE(b.target.equal(at::tensor(std::vector<int64_t>{0, 0, 1, 1})));
    EXPECT_FLOAT_EQ(b.input[1][2][0][0].item<float>(), 22.0f / 255) << "PNG is exact";
    EXPECT_NEAR(b.input[3][0][1][1].item<float>(), 200.0 / 255, 0.03);
    EXPECT_NE(ds->describe().find("imgs: 4 images, RGB, as stored (4×3), as float32 [4, 3, 3, 4] "
                                  "in [0, 1], labels int64 [4] (2 classes: cat, dog)"),
              std::string::npos)
        << ds->describe();

    s.channels = 1;
    s.val_path = dir.file("val");
    ds = openDataset(s);
    EXPECT_EQ(ds->shape().sample, (std::vector<int64_t>{1, 3, 4}));
    EXPECT_NEAR(ds->trainBatch(all(1)).input[0][0][0][0].item<float>(), 11.0 / 255, 2.0 / 255);
    ASSERT_EQ(ds->valSize(), 1);
    EXPECT_EQ(ds->valBatch(0, 1).target.item<int64_t>(), 1) << "val's classes by name";
}

TEST(FileData, ImageFolderResizesTheShorterSideAndCropsTheCentre) {
    TempDir dir;
    // 8 wide, 4 high: left half black, right half white.
    std::vector<unsigned char> px(8 * 4);
    for (size_t i = 0; i < px.size(); ++i) {
        px[i] = i % 8 < 4 ? 0 : 255;
    }
    writePixels(dir.file("imgs/a/wide.png"), 8, 4, 1, px);
    writeImage(dir.file("imgs/a/z.png"), 6, 6, 100);  // another size: resized alike
    auto s = spec("image-folder", dir.file("imgs"));
    s.image_size = 2;
    s.channels = 1;
    auto ds = openImageFolder(s);
    EXPECT_EQ(ds->shape().sample, (std::vector<int64_t>{1, 2, 2}));
    auto in = inFileOrder(*ds).input;
    // 8×4 → 4×2, then columns 1 and 2 of 4: the middle, dark left of bright.
    EXPECT_LT(in[0][0][0][0].item<float>(), 0.5f);
    EXPECT_GT(in[0][0][0][1].item<float>(), 0.5f);
    EXPECT_TRUE(in[0][0][0].equal(in[0][0][1]));
    EXPECT_NEAR(in[1][0][1][1].item<float>(), 101.0 / 255, 2.0 / 255);
}

TEST(FileData, ImagesDecodeOnSeveralThreadsAlike) {
    TempDir dir;
    for (int i = 0; i < 12; ++i) {
        writeImage(dir.file("imgs/" + std::string(i % 2 ? "b" : "a") + "/" + std::to_string(i) +
                            (i % 3 ? ".png" : ".jpg")),
                   9, 7, 20 * i);
    }
    auto s = spec("image-folder", dir.file("imgs"), 0.25);
    s.image_size = 5;
    auto ds = openDataset(s);
    ASSERT_EQ(ds->trainSize(), 9);
    const auto want_train = ds->trainBatch(all(9));
    const auto want_val = ds->valBatch(0, 3);
    std::vector<int> same(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 10; ++i) {
                auto b = i % 2 ? ds->trainBatch(all(9)) : ds->valBatch(0, 3);
                const auto& w = i % 2 ? want_train : want_val;
                same[t] += b.input.equal(w.input) && b.target.equal(w.target);
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    EXPECT_EQ(same, std::vector<int>(4, 10));
}

TEST(FileData, BadImageFoldersAreNamed) {
    TempDir dir;
    auto expectError = [&](const config::DataSpec& s, std::vector<std::string> words) {
        auto err = errorOf([&] {
            auto ds = openImageFolder(s);
            ds->trainBatch(all(ds->trainSize()));
        });
        for (const auto& w : words) {
            EXPECT_NE(err.find(w), std::string::npos) << "'" << w << "' not in: " << err;
        }
    };
    auto root = [&](const std::string& name) { return spec("image-folder", dir.file(name)); };
    expectError(root("missing"), {"missing: cannot open (No such file or directory)"});
    fs::create_directories(dir.file("empty"));
    expectError(root("empty"), {"empty: no class folders (expected one sub-folder per class"});
    writeImage(dir.file("loose/1.png"), 2, 2, 0);
    expectError(root("loose"), {"loose: no class folders", "it holds 1 image directly"});

    writeImage(dir.file("bare/a/1.png"), 2, 2, 0);
    writeFile(dir.file("bare/b/readme.txt"), "");
    expectError(root("bare"), {"bare/b: no PNG or JPEG files"});

    writeImage(dir.file("bad/a/1.png"), 2, 2, 0);
    writeFile(dir.file("bad/b/2.png"), "this is not a PNG");
    expectError(root("bad"), {"bad/b/2.png: cannot decode (not a PNG or JPEG: "});

    writeImage(dir.file("odd/a/1.png"), 4, 4, 0);
    writeImage(dir.file("odd/a/2.png"), 3, 2, 0);
    expectError(root("odd"),
                {"odd/a/2.png: 3×2 pixels", "odd/a/1.png) has 4×4", "data.image_size"});

    auto s = root("odd");
    s.channels = 4;
    expectError(s, {"data.channels is 4"});
    writeImage(dir.file("val/zebra/1.png"), 4, 4, 0);
    s = root("odd");
    s.image_size = 4;
    s.val_path = dir.file("val");
    expectError(s, {"val: class folder 'zebra' is not one of the training classes (a)"});
}

// ---- CSV ----

TEST(FileData, CsvReadsFeaturesAndLabels) {
    TempDir dir;
    auto csv = dir.file("data.csv");
    writeFile(csv,
              "\xEF\xBB\xBF"
              "a,b,label\r\n1,2.5,0\r\n\r\n  \n3,\"4\",2\r\n-1e-3,5,1");
    auto ds = openCsv(spec("csv", csv));
    auto s = ds->shape();
    EXPECT_EQ(s.sample, std::vector<int64_t>{2});
    EXPECT_EQ(s.width, 2);
    EXPECT_EQ(s.height, 1);
    EXPECT_EQ(s.classes, 3);
    EXPECT_FALSE(s.float_target);
    EXPECT_EQ(ds->valSize(), 0);
    auto b = inFileOrder(*ds);
    EXPECT_TRUE(
        b.input.equal(at::tensor(std::vector<float>{1, 2.5, 3, 4, -1e-3f, 5}).view({3, 2})));
    EXPECT_TRUE(b.target.equal(at::tensor(std::vector<int64_t>{0, 2, 1})));
    EXPECT_EQ(ds->describe(), csv +
                                  ": features float32 [3, 2], label 'label' int64 [3] "
                                  "(3 classes); no validation part");

    auto by_name = spec("csv", csv);
    by_name.label_column = "a";
    ds = openCsv(by_name);
    EXPECT_TRUE(ds->shape().float_target) << "-1e-3 is no class";
    EXPECT_EQ(ds->shape().classes, 0);
    EXPECT_TRUE(
        inFileOrder(*ds).input.select(1, 0).equal(at::tensor(std::vector<float>{2.5, 4, 5})));
    auto by_index = spec("csv", csv);
    by_index.label_column = "1";
    EXPECT_TRUE(
        inFileOrder(*openCsv(by_index)).target.equal(at::tensor(std::vector<float>{2.5, 4, 5})));
}

TEST(FileData, CsvWordLabelsAreClassNames) {
    TempDir dir;
    writeFile(dir.file("iris.csv"), "x1,x2,species\n1,2,setosa\n3,4,virginica\n5,6,setosa\n");
    writeFile(dir.file("val.csv"), "x1,x2,species\n1,2,versicolor\n");
    auto s = spec("csv", dir.file("iris.csv"));
    s.val_path = dir.file("val.csv");
    auto ds = openCsv(s);
    EXPECT_EQ(ds->shape().class_names,
              (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
    EXPECT_EQ(ds->shape().classes, 3);
    EXPECT_TRUE(ds->trainBatch(all(3)).target.equal(at::tensor(std::vector<int64_t>{0, 2, 0})));
    EXPECT_EQ(ds->valBatch(0, 1).target.item<int64_t>(), 1);
}

TEST(FileData, BadCsvIsNamed) {
    TempDir dir;
    auto csv = dir.file("data.csv");
    auto expectError = [&](const std::string& text, std::vector<std::string> words,
                           const std::string& label_column = "") {
        writeFile(csv, text);
        auto s = spec("csv", csv);
        s.label_column = label_column;
        auto err = errorOf([&] { openCsv(s); });
        for (const auto& w : words) {
            EXPECT_NE(err.find(w), std::string::npos) << "'" << w << "' not in: " << err;
        }
    };
    expectError("a,b,y\n1,2,0\n1,2\n", {csv + " line 3: 2 fields, but the header has 3 columns"});
    expectError("a,petal_len,y\n1,2,0\n\n1,abc,1\n",
                {csv + " line 4: column 'petal_len' is not a number ('abc')"});
    expectError("a,y\n1,0\n2,-1\n", {csv + " line 3: label -1 is negative"});
    expectError("a,y\n1,0\n2,cat\n", {csv + " line 3: column 'y' is not a number ('cat')"});
    expectError("a,y\n1,0\n", {csv, "'nope' is neither a column's name", "'a', 'y'"}, "nope");
    expectError("", {csv + ": empty"});
    expectError("a,y\n", {csv + ": no rows below the header"});
    expectError("a,y\n1,\"0\n", {csv, "not closed"});
    expectError("y\n1\n", {csv, "only one column"});
    std::error_code ec;
    fs::remove(csv, ec);
    EXPECT_NE(errorOf([&] {
                  openCsv(spec("csv", csv));
              }).find(csv + ": cannot open (No such file or directory)"),
              std::string::npos);
}
