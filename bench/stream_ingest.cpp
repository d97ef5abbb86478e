// How fast the record stream moves: a long run (default 100,000 steps, an evaluation
// every 1,000 and an event every 500) encoded to lines, decoded, ingested into a new
// database, and read back as `tail` reads it. Prints records per second for each
// repeat and the median; not a test.
//
//   bench_stream_ingest [STEPS] [REPEATS] [FOLDER]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/store/Database.h"
#include "core/stream/Ingestor.h"
#include "core/stream/RecordStream.h"
#include "core/stream/Tail.h"

using namespace ampbench;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<std::string> makeStream(int64_t steps) {
    std::vector<std::string> lines;
    lines.push_back(stream::encode(stream::makeHeader(R"({"hostname":"bench"})")));
    store::ExperimentRow e;
    e.id = 1;
    e.name = "bench";
    e.spec_json = "{}";
    lines.push_back(stream::encode(e));
    store::RunRow r;
    r.id = 1;
    r.experiment_id = 1;
    r.arm = "amp";
    r.status = run::RunStatus::Running;
    lines.push_back(stream::encode(r));
    int64_t seq = 0;
    for (int64_t n = 1; n <= steps; ++n) {
        run::StepRecord s;
        s.step = n;
        s.samples = n * 128;
        s.loss = 2.3 * std::exp(-1e-5 * static_cast<double>(n)) + 1e-3 * (n % 17);
        s.lr = 1e-3 * (1.0 - static_cast<double>(n) / static_cast<double>(steps + 1));
        s.loss_scale = 65536.0;
        s.grad_norm = n % 12 == 0 ? 0.731 + 1e-4 * n : std::nan("");
        s.step_ms = 4.0 + 1e-3 * (n % 97);
        s.data_wait_ms = 0.012;
        s.mem_allocated = 1'234'567'890 + n;
        s.mem_reserved = 2'000'000'000;
        s.mem_peak = 1'500'000'000;
        s.wall_s = 0.004 * n;
        lines.push_back(stream::encode(stream::RowRecord{1, {++seq, s}}));
        if (n % 1000 == 0) {
            lines.push_back(stream::encode(
                stream::RowRecord{1, {++seq, run::EvalRecord{n, n * 128, 0.4, 0.87, 0.004 * n}}}));
        }
        if (n % 500 == 0) {
            lines.push_back(stream::encode(stream::RowRecord{
                1,
                {++seq, run::EventRecord{n, run::EventKind::Info, "norm every 12th step", 12}}}));
        }
    }
    lines.push_back(stream::encode(
        stream::StatusRecord{1, run::RunStatus::Finished, run::FailureKind::None, "", seq}));
    return lines;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::string loadAverage() {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return a + " " + b + " " + c;
}

}  // namespace

int main(int argc, char** argv) {
    const int64_t steps = argc > 1 ? std::stoll(argv[1]) : 100000;
    const int repeats = argc > 2 ? std::stoi(argv[2]) : 5;
    const fs::path folder = argc > 3 ? fs::path(argv[3]) : fs::temp_directory_path();
    std::printf("load average before: %s; %ld CPUs online\n", loadAverage().c_str(),
                sysconf(_SC_NPROCESSORS_ONLN));

    auto t0 = Clock::now();
    const auto lines = makeStream(steps);
    const double encode_s = since(t0);
    const auto records = static_cast<double>(lines.size());
    size_t bytes = 0;
    for (const auto& l : lines)
        bytes += l.size() + 1;
    std::printf("stream: %zu lines (%lld steps), %.1f MiB, %.0f bytes a step line\n", lines.size(),
                static_cast<long long>(steps), bytes / 1048576.0,
                static_cast<double>(lines[4].size()));
    std::printf("encode: %.0f records/s\n", records / encode_s);

    std::vector<double> decode, ingest, replay, tail;
    for (int r = 0; r < repeats; ++r) {
        t0 = Clock::now();
        for (size_t i = 0; i < lines.size(); ++i)
            (void)stream::decode(lines[i], static_cast<int64_t>(i + 1));
        decode.push_back(records / since(t0));

        const std::string path = (folder / ("bench-ingest-" + std::to_string(getpid()) + ".db"));
        fs::remove(path);
        {
            auto db = store::Database::open(path);
            t0 = Clock::now();
            stream::Ingestor in(*db, "bench");
            for (const auto& l : lines)
                in.feed(l);
            in.finish();
            ingest.push_back(records / since(t0));
            if (!in.problems().empty() ||
                in.counts().rows_added != static_cast<int64_t>(lines.size()) - 4)
                std::printf("unexpected: %zu problems, %lld rows added\n", in.problems().size(),
                            static_cast<long long>(in.counts().rows_added));
            t0 = Clock::now();
            stream::Ingestor again(*db, "bench");
            for (const auto& l : lines)
                again.feed(l);
            again.finish();
            replay.push_back(records / since(t0));

            t0 = Clock::now();
            size_t written = 0;
            stream::Tail t(*db, {*db->runFromOrigin("bench", 1)});
            t.poll([&](const stream::Record& rec) { written += stream::encode(rec).size(); });
            tail.push_back(records / since(t0));
        }
        fs::remove(path);
        fs::remove(path + "-wal");
        fs::remove(path + "-shm");
        std::printf("repeat %d: decode %.0f, ingest %.0f, replay %.0f, tail %.0f records/s\n",
                    r + 1, decode.back(), ingest.back(), replay.back(), tail.back());
    }
    std::printf(
        "median of %d: decode %.0f records/s, ingest into a new database %.0f records/s, "
        "ingest of the same stream again %.0f records/s, tail (read + encode) %.0f records/s\n",
        repeats, median(decode), median(ingest), median(replay), median(tail));
    std::printf("load average after: %s\n", loadAverage().c_str());
    return 0;
}
