// Datasets from NumPy arrays (.npz, memory-mapped .npy pairs), written here at test
// time, and a named error for each way such a file can be wrong.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "core/data/DataError.h"
#include "core/data/Datasets.h"
#include "core/data/FileDatasets.h"
#include "core/data/private/Npy.h"
#include "core/data/private/Split.h"
#include "tests/core/FileDataFiles.h"

using namespace ampbench;
using namespace ampbench::data;
using namespace ampbench::data::test_files;

TEST(FileData, NpzStoredAndCompressedLoadScaledUint8) {
    for (bool compressed : {false, true}) {
        TempDir dir;
        auto path = dir.file("train.npz");
        auto r = rows(10, {1, 2, 3});
        writeNpz(path, {{"x", npy(r.x)}, {"y", npy(r.y)}}, compressed);
        auto ds = openArrays(spec("arrays", path, 0.2));
        ASSERT_EQ(ds->trainSize(), 8);
        ASSERT_EQ(ds->valSize(), 2);
        auto s = ds->shape();
        EXPECT_EQ(s.sample, (std::vector<int64_t>{1, 2, 3}));
        EXPECT_EQ(s.target, std::vector<int64_t>{});
        EXPECT_EQ(s.channels, 1);
        EXPECT_EQ(s.height, 2);
        EXPECT_EQ(s.width, 3);
        EXPECT_EQ(s.classes, 3);
        EXPECT_FALSE(s.float_target);
        EXPECT_FALSE(s.tokens());
        EXPECT_FALSE(ds->synthetic());
        auto b = ds->trainBatch(all(8));
        ASSERT_EQ(b.input.scalar_type(), at::kFloat);
        ASSERT_EQ(b.target.scalar_type(), at::kLong);
        EXPECT_EQ(b.input.sizes(), (at::IntArrayRef{8, 1, 2, 3}));
        auto [train_rows, val_rows] = splitRows(10, 0.2);
        EXPECT_TRUE(
            b.input.select(1, 0).select(1, 1).select(1, 2).mul(255).round().to(at::kLong).equal(
                train_rows));
        EXPECT_TRUE(b.target.equal(train_rows.remainder(3)));
        EXPECT_TRUE(ds->valBatch(0, 2).target.equal(val_rows.remainder(3)));
        EXPECT_EQ(ds->describe(), path + ": x uint8 [10, 1, 2, 3] scaled to [0, 1], y int64 [10] " +
                                      "(3 classes); validation: 20% of it (2)");
    }
}

TEST(FileData, NpyIsMemoryMappedAndReadsTheRightRows) {
    TempDir dir;
    auto x_path = dir.file("x.npy");
    auto x = at::arange(400, at::kFloat).view({100, 4});
    writeFile(x_path, npy(x));
    writeFile(dir.file("y.npy"), npy(at::arange(100, at::kInt).remainder(7)));
    auto maps = [] { return readFile("/proc/self/maps"); };
    {
        auto ds = openArrays(spec("arrays", x_path, 0.1));
        EXPECT_NE(maps().find(x_path), std::string::npos);
        EXPECT_NE(maps().find(dir.file("y.npy")), std::string::npos);
        auto train_rows = splitRows(100, 0.1).first;
        auto idx = at::tensor(std::vector<int64_t>{5, 0, 17, 89}, at::kLong);
        auto b = ds->trainBatch(idx);
        auto want = train_rows.index_select(0, idx);
        EXPECT_TRUE(b.input.equal(x.index_select(0, want)));
        EXPECT_TRUE(b.target.equal(want.remainder(7)));
        EXPECT_EQ(b.target.scalar_type(), at::kLong);
        auto s = ds->shape();
        EXPECT_EQ(s.sample, std::vector<int64_t>{4});
        EXPECT_EQ(s.channels, 1);
        EXPECT_EQ(s.height, 1);
        EXPECT_EQ(s.width, 4);
        EXPECT_EQ(s.classes, 7);
        EXPECT_EQ(ds->describe(),
                  x_path + ": inputs float32 [100, 4], labels " + dir.file("y.npy") +
                      " int32 [100] as int64 (7 classes); validation: 10% of it (10)");
    }
    EXPECT_EQ(maps().find(x_path), std::string::npos) << "the mapping outlives the dataset";
}

TEST(FileData, LabelsFileIsFoundByName) {
    TempDir dir;
    auto r = rows(6, {2});
    writeFile(dir.file("train_X.npy"), npy(r.x));
    writeFile(dir.file("train_Y.npy"), npy(r.y));
    EXPECT_EQ(openArrays(spec("arrays", dir.file("train_X.npy")))->trainSize(), 6);
    writeFile(dir.file("inputs.npy"), npy(r.x));
    auto err = errorOf([&] { openArrays(spec("arrays", dir.file("inputs.npy"))); });
    EXPECT_NE(err.find("inputs.npy"), std::string::npos) << err;
    EXPECT_NE(err.find("data.labels"), std::string::npos) << err;
    auto s = spec("arrays", dir.file("inputs.npy"));
    s.labels = dir.file("train_Y.npy");
    EXPECT_EQ(openArrays(s)->shape().classes, 3);
    writeFile(dir.file("a_x.npy"), npy(r.x));
    err = errorOf([&] { openArrays(spec("arrays", dir.file("a_x.npy"))); });
    EXPECT_NE(err.find("a_y.npy do not exist"), std::string::npos) << err;
}

TEST(FileData, DtypesConvert) {
    TempDir dir;
    auto y = at::arange(4, at::kLong);
    auto open = [&](const at::Tensor& x) {
        writeNpz(dir.file("d.npz"), {{"x", npy(x)}, {"y", npy(y)}}, false);
        return inFileOrder(*openArrays(spec("arrays", dir.file("d.npz")))).input;
    };
    auto values = at::tensor(std::vector<double>{0.5, -1.25, 3, 4}).view({4, 1});
    for (auto t : {at::kHalf, at::kFloat, at::kDouble}) {
        auto in = open(values.to(t));
        EXPECT_EQ(in.scalar_type(), at::kFloat);
        EXPECT_TRUE(in.equal(values.to(at::kFloat)));
    }
    EXPECT_TRUE(open(values.gt(1)).equal(values.gt(1).to(at::kFloat)));
    auto tokens = open(at::tensor(std::vector<int32_t>{7, 0, 300, 2}).view({4, 1}));
    EXPECT_EQ(tokens.scalar_type(), at::kLong);
    EXPECT_EQ(tokens[2][0].item<int64_t>(), 300);
    auto bytes = open(at::tensor(std::vector<uint8_t>{0, 51, 255, 1}).view({4, 1}));
    EXPECT_FLOAT_EQ(bytes[1][0].item<float>(), 0.2f);
    EXPECT_FLOAT_EQ(bytes[2][0].item<float>(), 1.0f);

    // Labels of any integer dtype are int64 classes.
    for (auto t : {at::kBool, at::kByte, at::kInt}) {
        y = at::tensor(std::vector<int64_t>{1, 0, 1, 1}).to(t);
        writeNpz(dir.file("d.npz"), {{"x", npy(values)}, {"y", npy(y)}}, false);
        auto ds = openArrays(spec("arrays", dir.file("d.npz")));
        EXPECT_EQ(ds->shape().classes, 2);
        auto target = inFileOrder(*ds).target;
        EXPECT_EQ(target.scalar_type(), at::kLong);
        EXPECT_TRUE(target.equal(y.to(at::kLong)));
    }
}

TEST(FileData, NormalisesPerChannelAndPerFeature) {
    TempDir dir;
    auto x = at::full({2, 3, 2, 2}, 1.0, at::kFloat);
    x.select(1, 1).fill_(2.0);
    x.select(1, 2).fill_(4.0);
    writeNpz(dir.file("c.npz"), {{"x", npy(x)}, {"y", npy(at::zeros({2}, at::kLong))}}, true);
    auto s = spec("arrays", dir.file("c.npz"));
    s.mean = {1, 2, 3};
    s.std = {0.5, 1, 2};
    auto ds = openArrays(s);
    auto in = inFileOrder(*ds).input;
    EXPECT_FLOAT_EQ(in[1][0][1][1].item<float>(), 0.0f);
    EXPECT_FLOAT_EQ(in[1][2][0][0].item<float>(), 0.5f);
    EXPECT_NE(ds->describe().find("normalised (mean [1, 2, 3], std [0.5, 1, 2])"),
              std::string::npos);
    s.mean = {1};
    s.std = {};
    EXPECT_FLOAT_EQ(inFileOrder(*openArrays(s)).input[0][2][0][0].item<float>(), 3.0f);

    s.mean = {1, 2};
    auto err = errorOf([&] { openArrays(s); });
    EXPECT_NE(err.find("data.mean has 2 values"), std::string::npos) << err;
    EXPECT_NE(err.find("3 channels"), std::string::npos) << err;
    EXPECT_NE(err.find("c.npz"), std::string::npos) << err;
    s.mean = {};
    s.std = {1, 0, 1};
    EXPECT_NE(errorOf([&] { openArrays(s); }).find("data.std"), std::string::npos);

    writeNpz(dir.file("f.npz"),
             {{"x", npy(at::tensor(std::vector<float>{1, 10, 3, 30}).view({2, 2}))},
              {"y", npy(at::tensor(std::vector<float>{0.5, 1.5}))}},
             false);
    auto f = spec("arrays", dir.file("f.npz"));
    f.mean = {2, 20};
    f.std = {1, 10};
    auto feats = inFileOrder(*openArrays(f)).input;
    EXPECT_TRUE(feats.equal(at::tensor(std::vector<float>{-1, -1, 1, 1}).view({2, 2})));
    f.mean = {1, 2, 3};
    EXPECT_NE(errorOf([&] { openArrays(f); }).find("2 features"), std::string::npos);

    writeNpz(dir.file("t.npz"),
             {{"x", npy(at::ones({2, 3}, at::kLong))}, {"y", npy(at::ones({2}, at::kLong))}},
             false);
    auto t = spec("arrays", dir.file("t.npz"));
    t.mean = {0.5};
    EXPECT_NE(errorOf([&] { openArrays(t); }).find("token ids"), std::string::npos);
}

TEST(FileData, SplitIsDeterministicAndDisjoint) {
    TempDir dir;
    auto r = rows(50, {1});
    writeFile(dir.file("x.npy"), npy(r.x));
    writeFile(dir.file("y.npy"), npy(at::arange(50, at::kLong)));
    auto a = openArrays(spec("arrays", dir.file("x.npy"), 0.3));
    auto b = openArrays(spec("arrays", dir.file("x.npy"), 0.3));
    ASSERT_EQ(a->valSize(), 15);
    ASSERT_EQ(a->trainSize(), 35);
    auto val = a->valBatch(0, 15).target;
    auto train = a->trainBatch(all(35)).target;
    EXPECT_TRUE(val.equal(b->valBatch(0, 15).target));
    EXPECT_TRUE(train.equal(b->trainBatch(all(35)).target));
    EXPECT_TRUE(std::get<0>(at::cat({train, val}).sort()).equal(at::arange(50, at::kLong)));
    EXPECT_TRUE(val.equal(splitRows(50, 0.3).second)) << "the split Fashion-MNIST uses";
}

TEST(FileData, ValPathIsReadAlikeAndTrainingKeepsFileOrder) {
    TempDir dir;
    auto r = rows(6, {2});
    writeFile(dir.file("x.npy"), npy(r.x));
    writeFile(dir.file("y.npy"), npy(r.y));
    writeNpz(dir.file("val.npz"),
             {{"x", npy(rows(4, {2}).x)}, {"y", npy(at::tensor(std::vector<int64_t>{0, 7, 1, 2}))}},
             true);
    auto s = spec("arrays", dir.file("x.npy"), 0.5);
    s.val_path = dir.file("val.npz");
    auto ds = openArrays(s);
    EXPECT_EQ(ds->trainSize(), 6);
    EXPECT_EQ(ds->valSize(), 4);
    EXPECT_TRUE(ds->trainBatch(all(6)).target.equal(r.y));
    EXPECT_EQ(ds->valBatch(1, 1).target.item<int64_t>(), 7);
    EXPECT_EQ(ds->shape().classes, 8) << "labels of both parts count";
    EXPECT_NE(ds->describe().find("validation: " + s.val_path + " (4)"), std::string::npos);

    writeNpz(dir.file("odd.npz"), {{"x", npy(rows(4, {3}).x)}, {"y", npy(rows(4, {3}).y)}}, true);
    s.val_path = dir.file("odd.npz");
    auto err = errorOf([&] { openArrays(s); });
    EXPECT_NE(err.find("odd.npz: samples have shape [3]"), std::string::npos) << err;
    EXPECT_NE(err.find("[2]"), std::string::npos) << err;

    writeFile(dir.file("v_x.npy"), npy(rows(3, {2}).x));
    writeFile(dir.file("v_y.npy"), npy(at::ones({3}, at::kFloat)));
    s.val_path = dir.file("v_x.npy");
    err = errorOf([&] { openArrays(s); });
    EXPECT_NE(err.find("regression values"), std::string::npos) << err;
}

TEST(FileData, NpzValidationArrays) {
    TempDir dir;
    auto r = rows(8, {3});
    auto v = rows(3, {3});
    writeNpz(dir.file("a.npz"),
             {{"x", npy(r.x)}, {"y", npy(r.y)}, {"x_val", npy(v.x)}, {"y_val", npy(v.y)}}, true);
    auto ds = openArrays(spec("arrays", dir.file("a.npz"), 0.5));
    EXPECT_EQ(ds->trainSize(), 8);
    EXPECT_EQ(ds->valSize(), 3);
    EXPECT_TRUE(ds->valBatch(0, 3).target.equal(v.y));
    EXPECT_NE(ds->describe().find("validation: x_val, y_val (3)"), std::string::npos);

    writeNpz(dir.file("b.npz"), {{"x", npy(r.x)}, {"y", npy(r.y)}, {"x_val", npy(v.x)}}, false);
    auto err = errorOf([&] { openArrays(spec("arrays", dir.file("b.npz"))); });
    EXPECT_NE(err.find("b.npz: no array 'y_val' (it holds: x, y, x_val)"), std::string::npos)
        << err;
}

TEST(FileData, TokenSequences) {
    TempDir dir;
    auto seq = at::randint(50, {20, 9}, at::kLong);
    seq[3][4] = 61;
    writeNpz(dir.file("t.npz"),
             {{"x", npy(seq.slice(1, 0, 8).to(at::kInt))}, {"y", npy(seq.slice(1, 1, 9))}}, true);
    auto ds = openArrays(spec("arrays", dir.file("t.npz")));
    auto s = ds->shape();
    EXPECT_TRUE(s.tokens());
    EXPECT_EQ(s.seq_len, 8);
    EXPECT_EQ(s.vocab, 62);
    EXPECT_EQ(s.classes, 62);
    EXPECT_EQ(s.channels, 0);
    EXPECT_EQ(s.target, std::vector<int64_t>{8});
    auto b = inFileOrder(*ds);
    EXPECT_EQ(b.input.scalar_type(), at::kLong);
    EXPECT_TRUE(b.input.equal(seq.slice(1, 0, 8)));
    EXPECT_TRUE(b.target.equal(seq.slice(1, 1, 9)));

    seq[5][0] = -3;  // in x only
    writeNpz(dir.file("n.npz"), {{"x", npy(seq.slice(1, 0, 8))}, {"y", npy(seq.slice(1, 1, 9))}},
             false);
    auto err = errorOf([&] { openArrays(spec("arrays", dir.file("n.npz"))); });
    EXPECT_NE(err.find("n.npz (x): row 5 holds token id -3"), std::string::npos) << err;
}

TEST(FileData, FloatTargetsAreRegression) {
    TempDir dir;
    auto x = at::randn({12}, at::kDouble);
    writeFile(dir.file("x.npy"), npy(x));
    writeFile(dir.file("y.npy"), npy(x.mul(2).view({12, 1}).expand({12, 2}).contiguous()));
    auto ds = openArrays(spec("arrays", dir.file("x.npy")));
    auto s = ds->shape();
    EXPECT_TRUE(s.float_target);
    EXPECT_EQ(s.classes, 0);
    EXPECT_EQ(s.sample, std::vector<int64_t>{1}) << "a 1-D x is one feature per sample";
    EXPECT_EQ(s.target, std::vector<int64_t>{2});
    auto b = ds->trainBatch(all(12));
    EXPECT_EQ(b.target.scalar_type(), at::kFloat);
    EXPECT_TRUE(b.target.select(1, 1).allclose(b.input.select(1, 0).mul(2)));
    EXPECT_NE(ds->describe().find("as float32 (regression values)"), std::string::npos);
}

TEST(FileData, ConcurrentReadsAgree) {
    TempDir dir;
    writeFile(dir.file("x.npy"), npy(at::randn({64, 8})));
    writeFile(dir.file("y.npy"), npy(at::arange(64, at::kLong)));
    auto ds = openDataset(spec("arrays", dir.file("x.npy")));
    auto want = ds->trainBatch(all(64));
    std::vector<int> same(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 50; ++i) {
                auto b = ds->trainBatch(all(64));
                same[t] += b.input.equal(want.input) && b.target.equal(want.target);
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    EXPECT_EQ(same, std::vector<int>(4, 50));
}

// ---- bad arrays ----

TEST(FileData, BadArraysAreNamed) {
    TempDir dir;
    auto x = dir.file("x.npy");
    auto expectError = [&](const std::string& path, std::vector<std::string> words) {
        auto err = errorOf([&] { openArrays(spec("arrays", path)); });
        for (const auto& w : words) {
            EXPECT_NE(err.find(w), std::string::npos) << "'" << w << "' not in: " << err;
        }
    };
    expectError(x, {x + ": cannot open (No such file or directory)"});

    writeFile(x, npy(rows(10, {3}).x));
    writeFile(dir.file("y.npy"), npy(rows(9, {}).y));
    expectError(x, {x + ": labels " + dir.file("y.npy") + " have 9 rows but the inputs have 10"});

    writeFile(dir.file("y.npy"),
              npy(at::tensor(std::vector<int64_t>{0, 1, -1, 2, 0, 0, 0, 0, 0, 0})));
    expectError(x, {dir.file("y.npy") + ": row 2 holds class label -1"});

    writeFile(x, npy<uint16_t>("<u2", {2, 2}, {1, 2, 3, 4}));
    expectError(x, {x, "'<u2' (uint16) is not supported", "float32"});
    writeFile(x, npy<float>(">f4", {1}, {1}));
    expectError(x, {x, "big-endian"});
    auto fortran = npy<float>("<f4", {2, 2}, {1, 2, 3, 4});
    writeFile(x, fortran.replace(fortran.find("False"), 5, "True "));
    expectError(x, {x, "Fortran"});
    auto good = npy<float>("<f4", {1000, 784}, std::vector<float>(250));
    writeFile(x, good);
    expectError(
        x, {x + ": truncated: the header promises 3136000 bytes of data, the file holds 1000"});
    writeFile(x, npy<float>("<f4", {0, 3}, {}));
    writeFile(dir.file("y.npy"), npy<int64_t>("<i8", {0}, {}));
    expectError(x, {x + ": no samples"});
    writeFile(x, "PK\x03\x04 not numpy");
    expectError(x, {x, "not a NumPy .npy file"});

    auto h = dir.file("h_x.npy");
    writeFile(h, npy(rows(3, {2}).x));
    writeFile(dir.file("h_y.npy"), npy(rows(3, {2}).y));
    auto err = errorOf([&] { openArrays(spec("arrays", h, 1.0)); });
    EXPECT_NE(err.find(h + ": its 3 samples leave none for training"), std::string::npos) << err;

    auto npz = dir.file("train.npz");
    writeNpz(npz, {{"x", npy(rows(4, {1}).x)}, {"labels", npy(rows(4, {1}).y)}}, true);
    expectError(npz, {npz + ": no array 'y' (it holds: x, labels)"});
    auto bytes = readFile(npz);
    writeFile(npz, bytes.substr(0, bytes.size() / 2));
    expectError(npz, {npz, "not a readable .npz"});
    writeFile(npz, "just text");
    expectError(npz, {npz, "not a readable .npz"});
    // A stored entry with one data byte changed: the zip's checksum catches it.
    writeNpz(npz, {{"x", npy(at::ones({4, 4}))}, {"y", npy(at::ones({4}, at::kLong))}}, false);
    bytes = readFile(npz);
    auto pos = bytes.find('\x80', bytes.find("NUMPY") + 64);  // inside a float 1.0
    ASSERT_NE(pos, std::string::npos);
    bytes[pos] = '\x81';
    writeFile(npz, bytes);
    expectError(npz, {npz + " (x.npy)", "checksum"});
}

TEST(FileData, NpyHeaderSurvivesGarbage) {
    auto parse = [](const std::string& bytes) {
        return errorOf([&] {
            parseNpyHeader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "g.npy");
        });
    };
    auto good = npy<int64_t>("<i8", {2, 3}, {1, 2, 3, 4, 5, 6});
    EXPECT_EQ(parse(good), "(no DataError)");
    for (size_t n = 0; n < good.size(); ++n) {
        EXPECT_NE(parse(good.substr(0, n)).find("g.npy: "), std::string::npos) << n;
    }
    auto header = [&](const std::string& dict) {
        std::string out = "\x93NUMPY\x01";
        out += '\0';
        out += static_cast<char>(dict.size());
        out += '\0';
        return out + dict;
    };
    EXPECT_NE(parse(header("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }"))
                  .find("negative"),
              std::string::npos);
    EXPECT_NE(parse(header("{'descr': '<f4', 'fortran_order': False, 'shape': "
                           "(99999999999999999999,), }"))
                  .find("too large"),
              std::string::npos);
    EXPECT_NE(parse(header("{'descr': '<f4', 'fortran_order': False, 'shape': "
                           "(4294967296, 4294967296, 4294967296), }"))
                  .find("more bytes than can be addressed"),
              std::string::npos);
    EXPECT_NE(parse(header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}"))
                  .find("structured"),
              std::string::npos);
    EXPECT_NE(parse(header("{'descr': '<f4', 'shape': (1,)}")).find("fortran_order"),
              std::string::npos);
    EXPECT_NE(parse(header("{'descr': '<f4', 'fortran_order': Maybe}")).find("True or False"),
              std::string::npos);
    auto longer = good;
    longer[8] = '\xff';
    longer[9] = '\x7f';
    EXPECT_NE(parse(longer).find("truncated"), std::string::npos);
    auto v9 = good;
    v9[6] = 9;
    EXPECT_NE(parse(v9).find("version 9.0"), std::string::npos);
    // Python 2's NumPy wrote "3L"; version 2.0 has a 4-byte length.
    auto py2 = header("{'descr': '|u1', 'fortran_order': False, 'shape': (3L,), }") + "abc";
    EXPECT_EQ(parse(py2), "(no DataError)");
    std::string dict = "{'descr':'<f4','fortran_order':False,'shape':()}";
    std::string v2 = "\x93NUMPY\x02";
    v2 += '\0';
    v2 += static_cast<char>(dict.size());
    v2 += std::string(3, '\0') + dict + std::string(4, '\0');
    EXPECT_EQ(parse(v2), "(no DataError)");
    // Random bytes behind a valid magic and length: an error, never a crash.
    std::mt19937 rng(7);
    for (int i = 0; i < 300; ++i) {
        auto g = good;
        for (int k = 0; k < 6; ++k) {
            g[10 + rng() % (g.size() - 10)] = static_cast<char>(rng());
        }
        parse(g);
    }
}

TEST(FileData, UnalignedNpyDataIsCopied) {
    TempDir dir;
    // A hand-made header of odd length: the doubles start off their alignment.
    std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1)}";
    while ((10 + dict.size()) % 8 != 3) {
        dict += ' ';
    }
    std::string head = "\x93NUMPY\x01";
    head += '\0';
    head += static_cast<char>(dict.size());
    head += '\0';
    std::vector<double> v = {1.5, -2.5};
    writeFile(dir.file("x.npy"), head + dict + std::string(reinterpret_cast<char*>(v.data()), 16));
    writeFile(dir.file("y.npy"), npy(at::ones({2}, at::kLong)));
    auto in = inFileOrder(*openArrays(spec("arrays", dir.file("x.npy")))).input;
    EXPECT_TRUE(in.equal(at::tensor(std::vector<float>{1.5, -2.5}).view({2, 1})));
}
