// Hostile input files, each built here at small size: model archives whose tensors
// claim more than they hold, zip and PNG bombs, labels that ask for billions of
// classes, values beyond float32, FIFOs and devices named as files, names that are not
// UTF-8, and files too large to checksum whole. Each is refused with its name, at once.
#include <ATen/ATen.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <minizip/unzip.h>
#include <minizip/zip.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "core/data/DataError.h"
#include "core/data/FileDatasets.h"
#include "core/data/InputRecord.h"
#include "core/data/private/CsvTable.h"
#include "core/data/private/ImageFolder.h"
#include "core/data/private/Npy.h"
#include "core/models/ScriptedModel.h"
#include "core/run/InputFiles.h"
#include "tests/core/FileDataFiles.h"
#include "tests/core/ScriptedModules.h"

using namespace ampbench;
using namespace ampbench::data;
using namespace ampbench::data::test_files;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string modelErrorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const models::ModelError& e) {
        return e.what();
    }
    return "(no ModelError)";
}

using Entries = std::vector<std::pair<std::string, std::string>>;

/// Every entry of a zip archive, in order.
Entries readZip(const std::string& path) {
    Entries out;
    unzFile zf = unzOpen64(path.c_str());
    EXPECT_NE(zf, nullptr);
    for (int rc = unzGoToFirstFile(zf); rc == UNZ_OK; rc = unzGoToNextFile(zf)) {
        char name[512];
        unz_file_info64 info{};
        unzGetCurrentFileInfo64(zf, &info, name, sizeof name, nullptr, 0, nullptr, 0);
        std::string bytes(info.uncompressed_size, '\0');
        unzOpenCurrentFile(zf);
        unzReadCurrentFile(zf, bytes.data(), static_cast<unsigned>(bytes.size()));
        unzCloseCurrentFile(zf);
        out.emplace_back(name, bytes);
    }
    unzClose(zf);
    return out;
}

void writeZip(const std::string& path, const Entries& entries) {
    zipFile zf = zipOpen64(path.c_str(), 0);
    ASSERT_NE(zf, nullptr);
    for (const auto& [name, bytes] : entries) {
        ASSERT_EQ(
            zipOpenNewFileInZip(zf, name.c_str(), nullptr, nullptr, 0, nullptr, 0, nullptr, 0, 0),
            ZIP_OK);
        ASSERT_EQ(zipWriteInFileInZip(zf, bytes.data(), static_cast<unsigned>(bytes.size())),
                  ZIP_OK);
        ASSERT_EQ(zipCloseFileInZip(zf), ZIP_OK);
    }
    ASSERT_EQ(zipClose(zf, nullptr), ZIP_OK);
}

std::string& entry(Entries& entries, const std::string& suffix) {
    for (auto& [name, bytes] : entries) {
        if (name.size() >= suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            return bytes;
        }
    }
    ADD_FAILURE() << "no entry " << suffix;
    static std::string none;
    return none;
}

std::string binint(uint32_t v) {
    std::string s = "J";
    for (int k = 0; k < 4; ++k) {
        s += static_cast<char>((v >> (8 * k)) & 0xff);
    }
    return s;
}

/// The length of the pickle integer opcode at `at` (BININT1, BININT2, BININT).
size_t intLength(const std::string& pkl, size_t at) {
    switch (pkl.at(at)) {
        case 'K':
            return 2;
        case 'M':
            return 3;
        case 'J':
            return 5;
        default:
            ADD_FAILURE() << "no integer at " << at << ": " << int(pkl.at(at));
            return 1;
    }
}

/// In data.pkl as LibTorch's pickler writes it, the first storage reads
/// ('storage', torch.FloatStorage, '0', 'cpu', numel) then BINPERSID, and the tensor's
/// storage offset follows. Rewrites the numel and/or the offset.
std::string rewriteFirstTensor(std::string pkl, int64_t numel, int64_t offset) {
    const std::string cpu = std::string("X\x03\x00\x00\x00", 5) + "cpu";
    size_t at = pkl.find(cpu);
    EXPECT_NE(at, std::string::npos);
    at += cpu.size();
    if (pkl[at] == 'q') {  // BINPUT of the device string
        at += 2;
    }
    const size_t numel_at = at;
    const size_t numel_len = intLength(pkl, at);
    EXPECT_EQ(pkl.substr(numel_at + numel_len, 2), "tQ");
    size_t after = numel_at + numel_len + 2;
    if (pkl[after] == 'q') {  // BINPUT of the storage
        after += 2;
    }
    if (offset >= 0) {
        pkl.replace(after, intLength(pkl, after), binint(static_cast<uint32_t>(offset)));
    }
    if (numel >= 0) {
        pkl.replace(numel_at, numel_len, binint(static_cast<uint32_t>(numel)));
    }
    return pkl;
}

void saveModule(const std::string& path) {
    test_modules::mlp(12, 12, 3).save(path);
}

}  // namespace

TEST(HostileModel, AStorageClaimingMoreThanItsRecordIsRefusedNamingFileAndTensor) {
    TempDir dir;
    const auto good = dir.file("good.pt"), bad = dir.file("bad.pt");
    saveModule(good);
    auto entries = readZip(good);
    // The first parameter, w1, holds 12×12 floats: 576 bytes in the archive.
    auto& pkl = entry(entries, "/data.pkl");
    pkl = rewriteFirstTensor(pkl, int64_t(1) << 24, int64_t(1) << 23);
    writeZip(bad, entries);
    const auto why = modelErrorOf([&] { models::inspectScripted(bad); });
    EXPECT_TRUE(has(why, bad + ": tensor 'w1'")) << why;
    EXPECT_TRUE(has(why, "claims 16777216 elements (67108864 bytes), but the archive holds 576"))
        << why;
    EXPECT_TRUE(has(modelErrorOf([&] { models::loadScripted(bad, c10::Device(c10::kCPU)); }),
                    "tensor 'w1'"));
    // The untouched archive, rewritten the same way, still loads.
    writeZip(good, readZip(good));
    EXPECT_NO_THROW(models::loadScripted(good, c10::Device(c10::kCPU)));
}

TEST(HostileModel, ATensorReachingPastItsStorageIsRefused) {
    TempDir dir;
    const auto good = dir.file("good.pt"), bad = dir.file("bad.pt");
    saveModule(good);
    auto entries = readZip(good);
    auto& pkl = entry(entries, "/data.pkl");
    pkl = rewriteFirstTensor(pkl, -1, int64_t(1) << 23);  // the storage honest, the offset not
    writeZip(bad, entries);
    const auto why = modelErrorOf([&] { models::inspectScripted(bad); });
    EXPECT_TRUE(has(why, bad + ": tensor 'w1'")) << why;
    EXPECT_TRUE(has(why, "storage offset 8388608) reaches byte")) << why;
    EXPECT_TRUE(has(why, "its storage holds 576 bytes")) << why;
}

TEST(HostileModel, APickleNestedDeeperThanAnyModuleIsRefusedBeforeLoading) {
    TempDir dir;
    const auto good = dir.file("good.pt"), bad = dir.file("deep.pt");
    saveModule(good);
    auto entries = readZip(good);
    // A list in 5000 tuples: LibTorch would build and free it recursively.
    entry(entries, "/data.pkl") = "\x80\x02]" + std::string(5000, '\x85') + ".";
    writeZip(bad, entries);
    EXPECT_EQ(modelErrorOf([&] { models::inspectScripted(bad); }),
              bad +
                  ": data.pkl nests containers more than 1000 deep: not a TorchScript file this "
                  "workbench can check, so it is not loaded");
}

TEST(HostileModel, AnArchiveThatOpensButCannotBeImportedNamesTheFile) {
    TempDir dir;
    const auto good = dir.file("good.pt"), bad = dir.file("broken.pt");
    saveModule(good);
    auto entries = readZip(good);
    Entries kept;
    for (auto& e : entries) {
        if (e.first.find("/code/") == std::string::npos) {
            kept.push_back(e);  // the classes' code removed: data.pkl names unknown classes
        }
    }
    writeZip(bad, kept);
    const auto why = modelErrorOf([&] { models::inspectScripted(bad); });
    EXPECT_TRUE(has(why, bad + ": not a TorchScript module that this LibTorch can load")) << why;
}

TEST(HostileModel, FifoAndDevicesAreRefusedAsModelsWithoutOpeningThem) {
    TempDir dir;
    const auto fifo = dir.file("net.pt");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_EQ(modelErrorOf([&] { models::inspectScripted(fifo); }),
              fifo +
                  ": is a FIFO (named pipe), not a regular file (the workbench reads only regular "
                  "files)");
    EXPECT_TRUE(has(modelErrorOf([&] { models::inspectScripted("/dev/zero"); }),
                    "/dev/zero: is a character device, not a regular file"));
    const auto folder = fs::path(fifo).parent_path().string();
    EXPECT_TRUE(has(modelErrorOf([&] { models::inspectScripted(folder); }),
                    folder + ": is a folder, not a regular file"));
}

TEST(HostileFiles, FifosAndDevicesAreRefusedByEveryDataReader) {
    TempDir dir;
    const auto fifo_npy = dir.file("x.npy"), fifo_npz = dir.file("t.npz"),
               fifo_csv = dir.file("t.csv");
    for (const auto& f : {fifo_npy, fifo_npz, fifo_csv}) {
        ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0);
    }
    const std::string fifo = ": is a FIFO (named pipe), not a regular file";
    EXPECT_TRUE(has(errorOf([&] { mapNpy(fifo_npy); }), fifo_npy + fifo));
    EXPECT_TRUE(has(errorOf([&] { NpzFile z(fifo_npz); }), fifo_npz + fifo));
    EXPECT_TRUE(has(errorOf([&] { readCsv(fifo_csv, ""); }), fifo_csv + fifo));
    EXPECT_TRUE(has(errorOf([&] { mapNpy("/dev/zero"); }), "/dev/zero: is a character device"));
    EXPECT_TRUE(has(errorOf([&] { openArrays(spec("arrays", fifo_npz)); }), fifo_npz + fifo));
    // A validation file that is a FIFO, beside good training data.
    const auto train = dir.file("train.npz");
    auto r = rows(10, {2});
    writeNpz(train, {{"x", npy(r.x)}, {"y", npy(r.y)}}, false);
    auto s = spec("arrays", train);
    s.val_path = fifo_npz;
    EXPECT_TRUE(has(errorOf([&] { openArrays(s); }), fifo_npz + fifo));
    // An image folder that is a FIFO says what it is.
    EXPECT_TRUE(has(errorOf([&] { ImageFolderSource src(fifo_csv, 3, 0); }),
                    fifo_csv + ": is a FIFO (named pipe), not a folder"));
}

TEST(HostileFiles, TheInputRecordNeverOpensAFifo) {
    TempDir dir;
    const auto path = dir.file("x.csv");
    writeFile(path, "a,b\n1,0\n");
    const auto then = recordInput("data.path", path);
    ASSERT_EQ(then.kind, "file");
    ASSERT_EQ(::unlink(path.c_str()), 0);
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    const auto now = recordInput("data.path", path);  // would block if opened
    EXPECT_EQ(now.kind, "special");
    EXPECT_EQ(now.method, "a FIFO (named pipe)");
    const auto lines = run::inputDifferences({then}, {now});
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_TRUE(has(lines[0], "data.path " + path + " is a FIFO (named pipe) now, not a file"))
        << lines[0];
}

TEST(HostileFiles, AnNpzMemberInflatingBeyondItsHeaderIsRefusedUnread) {
    TempDir dir;
    // A header promising 100 samples of 4 float32, then 32 MB of zeros (a few kB deflated).
    const auto header = npyBytes("<f4", {100, 4}, nullptr, 0);
    const std::string member = header + std::string(size_t(32) << 20, '\0');
    const auto y = npy(at::zeros({100}, at::kLong));
    const auto bomb = dir.file("bomb.npz");
    writeNpz(bomb, {{"x", member}, {"y", y}}, /*compressed=*/true);
    EXPECT_LT(fs::file_size(bomb), size_t(1) << 20);
    const auto why = errorOf([&] { openArrays(spec("arrays", bomb)); });
    EXPECT_TRUE(has(why, bomb + " (x.npy): the archive says it inflates to " +
                             std::to_string(member.size()) +
                             " bytes, but its .npy header "
                             "promises " +
                             std::to_string(header.size() + 1600)))
        << why;

    // The same stream under a directory that claims the header's size: inflation stops
    // there, and the member is refused.
    z_stream zs{};
    ASSERT_EQ(deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
              Z_OK);
    std::string raw(deflateBound(&zs, member.size()), '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(member.data()));
    zs.avail_in = static_cast<uInt>(member.size());
    zs.next_out = reinterpret_cast<Bytef*>(raw.data());
    zs.avail_out = static_cast<uInt>(raw.size());
    ASSERT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
    raw.resize(zs.total_out);
    deflateEnd(&zs);
    const auto liar = dir.file("liar.npz");
    zipFile zf = zipOpen64(liar.c_str(), 0);
    ASSERT_NE(zf, nullptr);
    ASSERT_EQ(zipOpenNewFileInZip2(zf, "x.npy", nullptr, nullptr, 0, nullptr, 0, nullptr,
                                   Z_DEFLATED, Z_BEST_COMPRESSION, /*raw=*/1),
              ZIP_OK);
    ASSERT_EQ(zipWriteInFileInZip(zf, raw.data(), static_cast<unsigned>(raw.size())), ZIP_OK);
    const uLong crc =
        crc32(0L, reinterpret_cast<const Bytef*>(member.data()), static_cast<uInt>(member.size()));
    ASSERT_EQ(zipCloseFileInZipRaw64(zf, header.size() + 1600, crc), ZIP_OK);
    ASSERT_EQ(zipOpenNewFileInZip(zf, "y.npy", nullptr, nullptr, 0, nullptr, 0, nullptr, 0, 0),
              ZIP_OK);
    ASSERT_EQ(zipWriteInFileInZip(zf, y.data(), static_cast<unsigned>(y.size())), ZIP_OK);
    ASSERT_EQ(zipCloseFileInZip(zf), ZIP_OK);
    ASSERT_EQ(zipClose(zf, nullptr), ZIP_OK);
    const auto lie = errorOf([&] { openArrays(spec("arrays", liar)); });
    EXPECT_EQ(lie, liar + " (x.npy): damaged: its checksum does not match its data");

    // An honest compressed member still reads.
    const auto fine = dir.file("fine.npz");
    auto r = rows(100, {4});
    writeNpz(fine, {{"x", npy(r.x)}, {"y", npy(r.y)}}, true);
    EXPECT_EQ(openArrays(spec("arrays", fine))->trainSize(), 100);
}

TEST(HostileFiles, AHugePngIsRefusedFromItsHeaderBeforeDecoding) {
    TempDir dir;
    // The signature and an IHDR chunk claiming 20000×20000 grey pixels, 4.8 GB as RGB
    // float32: a few dozen bytes.
    std::string ihdr = "IHDR";
    for (uint32_t v : {20000u, 20000u}) {
        for (int k = 3; k >= 0; --k) {
            ihdr += static_cast<char>((v >> (8 * k)) & 0xff);
        }
    }
    ihdr += std::string("\x08\x00\x00\x00\x00", 5);
    const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(ihdr.data()), 17);
    std::string png = "\x89PNG\r\n\x1a\n";
    png += std::string("\x00\x00\x00\x0d", 4) + ihdr;
    for (int k = 3; k >= 0; --k) {
        png += static_cast<char>((crc >> (8 * k)) & 0xff);
    }
    const auto file = dir.file("images/cat/big.png");
    writeFile(file, png);
    const auto why = errorOf([&] { ImageFolderSource src(dir.file("images"), 3, 0); });
    EXPECT_EQ(why, file + ": 20000×20000 pixels: images over 64 megapixels are refused");
}

TEST(HostileFiles, ImplausibleClassLabelsAreRefusedNamingFileRowAndLabel) {
    TempDir dir;
    const auto path = dir.file("t.npz");
    auto x = at::zeros({3, 2}, at::kFloat);
    for (int64_t label : {int64_t(1000000000), int64_t(1) << 31, (int64_t(1) << 32) + 3}) {
        writeNpz(path, {{"x", npy(x)}, {"y", npy(at::tensor({int64_t(0), int64_t(1), label}))}},
                 false);
        const auto why = errorOf([&] { openArrays(spec("arrays", path)); });
        EXPECT_TRUE(has(why, path + " (y): row 2 holds class label " + std::to_string(label) +
                                 ": class labels from 0 to 999999 are accepted (more than "
                                 "1,000,000 classes are refused)"))
            << why;
    }
    // int32 at its top: the class count would overflow.
    writeNpz(path, {{"x", npy(x)}, {"y", npy(at::tensor({0, 1, 2147483647}, at::kInt))}}, false);
    EXPECT_TRUE(has(errorOf([&] { openArrays(spec("arrays", path)); }),
                    "row 2 holds class label 2147483647"));
    // CSV labels too.
    const auto csv = dir.file("t.csv");
    writeFile(csv, "a,label\n1,0\n2,1000000\n");
    EXPECT_TRUE(has(errorOf([&] { openCsv(spec("csv", csv)); }),
                    csv + ": row 1 holds class label 1000000"));
    // The largest accepted label still builds.
    writeNpz(path, {{"x", npy(x)}, {"y", npy(at::tensor({int64_t(0), int64_t(1), int64_t(999)}))}},
             false);
    EXPECT_EQ(openArrays(spec("arrays", path))->shape().classes, 1000);
}

TEST(HostileFiles, CsvValuesBeyondFloat32AreRefusedNamingFileRowAndColumn) {
    TempDir dir;
    const auto csv = dir.file("t.csv");
    writeFile(csv, "a,b,label\n1,2,0\n3,1e39,1\n");
    EXPECT_EQ(errorOf([&] { readCsv(csv, ""); }),
              csv +
                  " line 3: column 'b' is 1e39, beyond float32 (the training dtype holds at "
                  "most ±3.40282e+38; it would become inf)");
    writeFile(csv, "a,b,target\n1,2,0.5\n3,4,-2e40\n");
    EXPECT_TRUE(has(errorOf([&] { openCsv(spec("csv", csv)); }),
                    csv + " line 3: column 'target' is -2e40, beyond float32"));
    writeFile(csv, "a,b,target\n1,2,0.5\n3,3.4e38,-2e38\n");
    EXPECT_NO_THROW(openCsv(spec("csv", csv)));
}

TEST(HostileFiles, ALargeFileIsRecordedBySamplingAndStillTellsChanges) {
    TempDir dir;
    const auto path = dir.file("big.npy");
    std::string bytes(size_t(3) << 20, 'a');
    writeFile(path, bytes);
    const int64_t above = int64_t(1) << 20;
    const auto first = recordInput("data.path", path, kContentLimit, above);
    EXPECT_EQ(first.method, "sampled");
    EXPECT_EQ(first.bytes, int64_t(bytes.size()));
    EXPECT_EQ(recordInput("data.path", path, kContentLimit, above), first);
    EXPECT_EQ(recordInput("data.path", path).method, "content");  // under the default limit
    // A changed header (with the time kept) and a changed size are both seen.
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    bytes[10] = 'b';
    writeFile(path, bytes);
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
    const auto header = recordInput("data.path", path, kContentLimit, above);
    EXPECT_NE(header.checksum, first.checksum);
    writeFile(path, bytes + "x");
    EXPECT_NE(recordInput("data.path", path, kContentLimit, above).checksum, header.checksum);
    const auto lines = run::inputDifferences({first}, {header});
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_TRUE(has(lines[0], "of its size, time, header and sampled blocks")) << lines[0];
    EXPECT_EQ(run::inputsFromJson(run::inputsToJson({first})).front(), first);
}

/// Bytes this process has read so far through read() and its kind (/proc/self/io).
int64_t bytesRead() {
    std::ifstream io("/proc/self/io");
    std::string key;
    int64_t value = 0;
    while (io >> key >> value) {
        if (key == "rchar:") {
            return value;
        }
    }
    return -1;
}

/// The largest resident set this process has had so far, in bytes.
int64_t peakResident() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

TEST(HostileFiles, AHugeNpyIsMappedAndSampledNotReadWhole) {
    TempDir dir;
    // 2,000,000 samples of 2,000 float32: 16 GB, sparse on disk.
    const auto x = dir.file("x.npy"), y = dir.file("y.npy");
    const int64_t n = 2000000, f = 2000;
    const auto header = npyBytes("<f4", {n, f}, nullptr, 0);
    writeFile(x, header);
    ASSERT_EQ(::truncate(x.c_str(), static_cast<off_t>(header.size() + n * f * 4)), 0);
    writeFile(y, npy(at::zeros({n}, at::kLong).remainder(3)));
    const int64_t read_before = bytesRead(), peak_before = peakResident();
    config::ExperimentSpec s;
    s.data = spec("arrays", x, 0.1);
    const auto inputs = recordInputs(s);
    auto ds = openArrays(s.data);
    auto batch = ds->trainBatch(at::arange(8, at::kLong));
    const int64_t read = bytesRead() - read_before, grew = peakResident() - peak_before;
    ASSERT_EQ(inputs.size(), 1u);
    EXPECT_EQ(inputs[0].method, "sampled");
    EXPECT_EQ(ds->trainSize(), n - n / 10);
    EXPECT_EQ(batch.input.sizes(), (at::IntArrayRef{8, f}));
    // Mapped and sampled (4 MB and the labels), neither read through nor paged in
    // whole: what was read and what stayed resident are each far below 16 GB.
    constexpr int64_t kGiB = int64_t(1) << 30;
    ASSERT_GE(read_before, 0) << "/proc/self/io cannot be read";
    EXPECT_LT(read, kGiB) << read << " bytes read";
    EXPECT_LT(grew, kGiB) << "the resident set grew by " << grew << " bytes";
}

TEST(HostileFiles, PathsThatAreNotUtf8AreRecordedAsJson) {
    TempDir dir;
    const auto path = dir.file(std::string("d\xff\xfe.csv"));
    writeFile(path, "a,b\n1,0\n");
    const auto f = recordInput("data.path", path);
    std::string json;
    ASSERT_NO_THROW(json = run::inputsToJson({f}));
    const auto back = run::inputsFromJson(json);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0], f);  // the same file: size and checksum
    EXPECT_TRUE(run::inputDifferences(back, {f}).empty());
}
