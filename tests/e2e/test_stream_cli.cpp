// End to end: the record stream through the real CLI. A run streamed into ingest
// gives a local database equal row for row to the server's; tail resumes without
// duplicates or gaps and follows a run another process trains; ingest's exit codes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "Hold.h"
#include "Shell.h"
#include "StoredSteps.h"
#include "core/config/DataPaths.h"
#include "core/store/Database.h"
#include "core/store/NumericsStore.h"
#include "core/stream/RecordStream.h"

namespace fs = std::filesystem;
using ampbench::run::RunStatus;
using ampbench::store::Database;
using ampbench::store::NumericsStore;
namespace test = ampbench::test;

namespace {

const std::string kCli = AMPBENCH_CLI_PATH;

test::ShellResult sh(const std::string& command) {
    return test::shell(command);
}

class StreamCli : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ampbench-stream-e2e-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        server_ = (dir_ / "server.db").string();
        local_ = (dir_ / "local.db").string();
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    std::string cli(const std::string& db) const { return kCli + " --db " + db + " "; }

    /// Every run of the server equals its local copy: fields, status and each step,
    /// evaluation and event with its sequence number (compared as their stream lines,
    /// which are exact).
    void expectSameDatabases(const std::string& origin) {
        auto server = Database::open(server_, Database::Mode::ReadOnly);
        auto local = Database::open(local_, Database::Mode::ReadOnly);
        const auto runs = server->runs();
        ASSERT_FALSE(runs.empty());
        EXPECT_EQ(local->runs().size(), runs.size());
        for (const auto& theirs : runs) {
            const auto id = local->runFromOrigin(origin, theirs.id);
            ASSERT_TRUE(id) << "run " << theirs.id;
            const auto mine = local->run(*id);
            EXPECT_EQ(mine->status, theirs.status);
            EXPECT_EQ(mine->failure, theirs.failure);
            EXPECT_EQ(mine->error, theirs.error);
            EXPECT_EQ(mine->arm, theirs.arm);
            EXPECT_EQ(mine->seed, theirs.seed);
            EXPECT_EQ(mine->spec_json, theirs.spec_json);
            EXPECT_EQ(mine->env_json, theirs.env_json);
            EXPECT_EQ(mine->planned_steps, theirs.planned_steps);
            EXPECT_EQ(mine->last_step, theirs.last_step);
            const auto a = server->recordsSince(theirs.id, 0);
            const auto b = local->recordsSince(*id, 0);
            ASSERT_EQ(a.size(), b.size()) << "run " << theirs.id;
            for (size_t i = 0; i < a.size(); ++i) {
                ASSERT_EQ(ampbench::stream::encode(ampbench::stream::RowRecord{1, a[i]}),
                          ampbench::stream::encode(ampbench::stream::RowRecord{1, b[i]}));
            }
            EXPECT_EQ(a.size(), static_cast<size_t>(server->lastSeq(theirs.id)));
            EXPECT_EQ(server->steps(theirs.id).size(), local->steps(*id).size());
            EXPECT_EQ(server->evals(theirs.id).size(), local->evals(*id).size());
            EXPECT_EQ(server->events(theirs.id).size(), local->events(*id).size());
            const auto theirs_numerics = NumericsStore(*server).rows(theirs.id);
            const auto my_numerics = NumericsStore(*local).rows(*id);
            ASSERT_EQ(my_numerics.size(), theirs_numerics.size()) << "run " << theirs.id;
            for (size_t i = 0; i < my_numerics.size(); ++i) {
                EXPECT_EQ(my_numerics[i].step, theirs_numerics[i].step);
                EXPECT_EQ(my_numerics[i].name, theirs_numerics[i].name);
                EXPECT_EQ(my_numerics[i].numel, theirs_numerics[i].numel);
                EXPECT_EQ(my_numerics[i].format, theirs_numerics[i].format);
                EXPECT_EQ(my_numerics[i].saturated, theirs_numerics[i].saturated);
            }
        }
    }

    /// The smoke preset's spec with per-layer numerics every `every` optimizer steps.
    std::string smokeSpecWithNumerics(int every) const {
        const auto saved =
            test::shell(cli(server_) + "run --preset smoke --seeds 1 --dry-run --save-spec " +
                        path("smoke.json"));
        EXPECT_EQ(saved.code, 0) << saved.out;
        auto spec = nlohmann::json::parse(std::ifstream(path("smoke.json")));
        spec["numerics_every"] = every;
        std::ofstream(path("numerics.json")) << spec.dump();
        return path("numerics.json");
    }

    fs::path dir_;
    std::string server_, local_;
};

std::string slurp(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// The CLI started with `args` and not waited for; its output goes to `log`.
pid_t spawnCli(const std::vector<std::string>& args, const std::string& log) {
    std::vector<std::string> words{kCli};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words)
        argv.push_back(w.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
        ::execv(kCli.c_str(), argv.data());
        ::_exit(127);
    }
    return pid;
}

/// A process this test started: killed and reaped if the test ends before it does.
struct Child {
    pid_t pid = -1;
    ~Child() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
    /// Waits for its end; its wait status.
    int wait() {
        int status = 0;
        ::waitpid(pid, &status, 0);
        pid = -1;
        return status;
    }
};

/// The rows the database at `db` holds, summed over its runs (0 while there is none).
int64_t rowsHeld(const std::string& db) {
    try {
        if (!fs::exists(db))
            return 0;
        auto d = Database::open(db, Database::Mode::ReadOnly);
        int64_t rows = 0;
        for (const auto& run : d->runs())
            rows += d->lastSeq(run.id);
        return rows;
    } catch (const std::exception&) {
        return 0;  // not created yet
    }
}

}  // namespace

TEST_F(StreamCli, RunStreamIntoIngestGivesTheServersRowsRowForRow) {
    if (!ampbench::config::haveFashionMnist())
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    const auto r = sh(cli(server_) + "run --config " + smokeSpecWithNumerics(16) +
                      " --steps 96 --eval-interval 48 --stream 2>" + path("human.txt") + " | tee " +
                      path("stream.ndjson") + " | " + cli(local_) + "ingest --origin gpu -");
    ASSERT_EQ(r.code, 0) << r.out << slurp(path("human.txt"));
    EXPECT_NE(r.out.find("3 runs added"), std::string::npos) << r.out;
    {
        // Per-layer numerics travel too (compared run by run below).
        auto server = Database::open(server_, Database::Mode::ReadOnly);
        int64_t numerics = 0;
        for (const auto& run : server->runs())
            numerics += NumericsStore(*server).count(run.id);
        EXPECT_GT(numerics, 0);
        EXPECT_NE(r.out.find(std::to_string(numerics) + " per-layer numerics rows added"),
                  std::string::npos)
            << r.out;
    }
    // stdout held the stream alone; the table went to stderr.
    EXPECT_NE(slurp(path("human.txt")).find("speed-up"), std::string::npos);
    std::istringstream lines(slurp(path("stream.ndjson")));
    int64_t n = 0;
    for (std::string line; std::getline(lines, line);)
        EXPECT_NO_THROW(ampbench::stream::decode(line, ++n)) << line;
    expectSameDatabases("gpu");

    // The same stream again: nothing added.
    const auto again = sh(cli(local_) + "ingest --origin gpu " + path("stream.ndjson"));
    EXPECT_EQ(again.code, 0) << again.out;
    EXPECT_NE(again.out.find("0 experiments and 0 runs added, 0 rows added"), std::string::npos)
        << again.out;
    EXPECT_NE(again.out.find(" 0 per-layer numerics rows added"), std::string::npos) << again.out;
    expectSameDatabases("gpu");
}

// A stream cut off after some records, then resumed from the last one held here:
// the local database ends equal to the server's, nothing twice, nothing missing.
TEST_F(StreamCli, TailSinceResumesWithoutDuplicatesOrGaps) {
    if (!ampbench::config::haveFashionMnist())
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    ASSERT_EQ(
        sh(cli(server_) + "run --preset smoke --steps 64 --seeds 1 --eval-interval 32 -q").code, 0);
    const auto cut =
        sh(cli(server_) + "tail --experiment 1 --stream | head -n 60 > " + path("part.ndjson"));
    ASSERT_EQ(cut.code, 0) << cut.out;
    const auto first = sh(cli(local_) + "ingest --origin gpu " + path("part.ndjson"));
    ASSERT_EQ(first.code, 0) << first.out;
    std::string since;
    {
        auto local = Database::open(local_, Database::Mode::ReadOnly);
        auto server = Database::open(server_, Database::Mode::ReadOnly);
        for (const auto& run : server->runs()) {
            const auto id = local->runFromOrigin("gpu", run.id);
            since += " --since " + std::to_string(run.id) + ":" +
                     std::to_string(id ? local->lastSeq(*id) : 0);
        }
    }
    const auto rest = sh(cli(server_) + "tail --experiment 1 --stream" + since + " | " +
                         cli(local_) + "ingest --origin gpu -");
    ASSERT_EQ(rest.code, 0) << rest.out;  // 8 would mean a gap was found
    EXPECT_NE(rest.out.find(" 0 already here"), std::string::npos) << rest.out;
    expectSameDatabases("gpu");

    // Resuming from a point beyond what is here is a gap, named, and the rows kept.
    auto gap_db = path("gap.db");
    const auto gap = sh(cli(server_) + "tail --run 1 --since 10 --stream | " + cli(gap_db) +
                        "ingest --origin gpu -");
    EXPECT_EQ(gap.code, 8) << gap.out;
    EXPECT_NE(gap.out.find("run 1 of gpu (here run 1): records 1-10 missing"), std::string::npos)
        << gap.out;
}

// tail --follow reads a run another process is training, and ends when it has. The
// trainer is held still from its first stored steps until the tail has brought them
// here, so the tail joins mid-run however short the run and however fast the machine.
TEST_F(StreamCli, TailFollowsARunTrainingElsewhereToItsEnd) {
    if (!ampbench::config::haveFashionMnist())
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    Child trainer{spawnCli({"--db", server_, "run", "--preset", "smoke", "--steps", "96", "--seeds",
                            "1", "--eval-interval", "32", "-q"},
                           path("train.txt"))};
    ASSERT_GT(trainer.pid, 0);
    ASSERT_TRUE(test::readyOrEnded(trainer.pid, [&] { return test::firstRunSteps(server_) > 0; }))
        << slurp(path("train.txt"));
    test::Hold hold(trainer.pid);
    ASSERT_TRUE(hold.holds()) << "the trainer ended before the tail could join:\n"
                              << slurp(path("train.txt"));
    {
        auto server = Database::open(server_, Database::Mode::ReadOnly);
        ASSERT_EQ(server->runs().size(), 3u);
        ASSERT_NE(server->runs().back().status, RunStatus::Finished)
            << "the experiment ended before the tail could join";
    }
    std::atomic<bool> over{false};
    test::ShellResult follow;
    std::thread tail([&] {
        follow = sh(cli(server_) + "tail --experiment 1 --follow --stream | " + cli(local_) +
                    "ingest --origin gpu -");
        over = true;
    });
    // The rows the held trainer has stored so far have arrived here.
    const bool joined = test::eventually([&] { return over || rowsHeld(local_) > 0; });
    hold.release();
    tail.join();
    ASSERT_TRUE(joined) << "nothing arrived within " << test::kPatience.count() << " s";
    ASSERT_EQ(follow.code, 0) << follow.out;
    EXPECT_NE(follow.out.find("3 statuses"), std::string::npos) << follow.out;
    const int status = trainer.wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(path("train.txt"));
    auto server = Database::open(server_, Database::Mode::ReadOnly);
    for (const auto& run : server->runs())
        EXPECT_EQ(run.status, RunStatus::Finished) << slurp(path("train.txt"));
    expectSameDatabases("gpu");
}

TEST_F(StreamCli, IngestRefusesWhatIsNotAStreamAndReportsBadLines) {
    std::ofstream(path("notes.txt")) << "experiment 3 'smoke': 3 runs on cpu\n";
    auto r = sh(cli(local_) + "ingest " + path("notes.txt"));
    EXPECT_EQ(r.code, 9) << r.out;
    EXPECT_NE(r.out.find("line 1: not a record stream"), std::string::npos) << r.out;

    std::ofstream(path("v2.ndjson")) << R"({"type":"header","stream_version":2})"
                                     << "\n";
    r = sh(cli(local_) + "ingest " + path("v2.ndjson"));
    EXPECT_EQ(r.code, 9) << r.out;
    EXPECT_NE(r.out.find("version 2 and this build reads version 1"), std::string::npos) << r.out;

    r = sh(cli(local_) + "ingest - < /dev/null");
    EXPECT_EQ(r.code, 9) << r.out;
    EXPECT_NE(r.out.find("no records"), std::string::npos) << r.out;

    std::ofstream(path("bad.ndjson"))
        << ampbench::stream::encode(ampbench::stream::makeHeader("")) << "\n"
        << R"({"type":"experiment","id":1,"name":"x","spec_json":"{}"})"
        << "\n"
        << "{\"type\":\"step\"}\n";
    r = sh(cli(local_) + "ingest --origin gpu " + path("bad.ndjson"));
    EXPECT_EQ(r.code, 8) << r.out;
    EXPECT_NE(r.out.find("line 3: step record: \"run\" is missing"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1 experiments"), std::string::npos) << r.out;
}

TEST_F(StreamCli, TailNeedsStreamAndAKnownRun) {
    Database::open(server_);  // an empty database
    auto r = sh(cli(server_) + "tail --run 1");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("add --stream"), std::string::npos) << r.out;
    r = sh(cli(server_) + "tail --run 7 --stream");
    EXPECT_EQ(r.code, 5) << r.out;
    r = sh(cli(server_) + "tail --run 7 --since x --stream");
    EXPECT_EQ(r.code, 2) << r.out;
}

namespace {

/// A finished run of `steps` steps in a new database at `path`, as a server records it.
void recordRun(const std::string& path, const std::string& name, int64_t steps) {
    auto db = Database::open(path);
    const int64_t exp = db->createExperiment(name, R"({"name":")" + name + R"("})");
    const int64_t run = db->createRun(exp, "amp", 0, 1, "{}", steps);
    db->markRunning(run, "{}");
    for (int64_t n = 1; n <= steps; ++n) {
        ampbench::run::StepRecord s;
        s.step = n;
        s.samples = 32 * n;
        s.loss = 1.0 / static_cast<double>(n);
        db->insertSteps(run, {s});
    }
    db->finishRun(run, RunStatus::Finished, "");
}

}  // namespace

namespace {

/// The cells of a CSV text (RFC 4180: quoted fields may hold commas, quotes and line
/// breaks), row by row.
std::vector<std::vector<std::string>> csvCells(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1);
    std::string cell;
    bool quoted = false, any = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                cell += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                cell += c;
            }
        } else if (c == '"') {
            quoted = any = true;
        } else if (c == ',' || c == '\n') {
            rows.back().push_back(cell);
            cell.clear();
            if (c == '\n') {
                rows.emplace_back();
            }
        } else {
            cell += c;
            any = true;
        }
    }
    if (!cell.empty() || any) {
        rows.back().push_back(cell);
    }
    if (rows.back().empty()) {
        rows.pop_back();
    }
    return rows;
}

/// A spreadsheet runs a cell as a formula when it starts with = + - @, a tab or a
/// carriage return; a number ("-0.5", "+1e-3") is only a number.
bool formulaLike(const std::string& cell) {
    if (cell.empty() || std::string("=+-@\t\r").find(cell[0]) == std::string::npos) {
        return false;
    }
    char* end = nullptr;
    const double v = std::strtod(cell.c_str(), &end);
    return !(end == cell.c_str() + cell.size() && std::isfinite(v));
}

}  // namespace

// Names that a spreadsheet would run as formulas come in a stream (experiment and
// arm names, event messages): every CSV the CLI writes of them is written, and no
// cell of it starts a formula; the JSON keeps the names as they are.
TEST_F(StreamCli, FormulaLikeNamesFromAStreamAreWrittenInertToEveryCsv) {
    const std::string experiment = "=HYPERLINK(\"http://x\",\"y\")";
    const std::vector<std::string> arms = {"+amp", "@bf16", "-fp8+cmd|' /C calc'!A0", "=1+1"};
    {
        auto db = Database::open(server_);
        const int64_t exp = db->createExperiment(experiment, "{}");
        for (size_t a = 0; a < arms.size(); ++a) {
            const int64_t run = db->createRun(exp, arms[a], static_cast<int>(a), 1, "{}", 3);
            db->markRunning(run, "{}");
            for (int64_t n = 1; n <= 3; ++n) {
                ampbench::run::StepRecord s;
                s.step = n;
                s.samples = 32 * n;
                s.loss = n == 3 ? -INFINITY : 1.0 / static_cast<double>(n);
                s.grad_norm = -0.5;
                db->insertSteps(run, {s});
            }
            std::vector<ampbench::run::EventRecord> events;
            for (const char* message : {"=cmd", "+cmd", "@cmd", "\tcmd", "\rcmd", "-cmd"}) {
                events.push_back({2, ampbench::run::EventKind::Warning, message, -1.0});
            }
            db->insertEvents(run, events);
            db->finishRun(run, RunStatus::Finished, "");
        }
    }
    auto r = sh(cli(server_) + "tail --experiment 1 --stream | " + cli(local_) + "ingest -");
    ASSERT_EQ(r.code, 0) << r.out;
    {
        auto local = Database::open(local_, Database::Mode::ReadOnly);
        ASSERT_EQ(local->runs().size(), arms.size());
        EXPECT_EQ(local->runs()[0].experiment_name, experiment) << "stored as it came";
        EXPECT_EQ(local->events(local->runs()[0].id).at(3).message, "\tcmd");
    }
    r = sh(cli(local_) + "report 1 --csv " + path("report.csv") + " --json " + path("report.json"));
    ASSERT_EQ(r.code, 0) << r.out;
    r = sh(cli(local_) + "export -e 1 --csv " + path("export.csv") + " --json " +
           path("export.json"));
    ASSERT_EQ(r.code, 0) << r.out;
    for (const char* file : {"report.csv", "export.csv"}) {
        std::ifstream in(path(file), std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        const auto rows = csvCells(text);
        ASSERT_GT(rows.size(), 1u) << file;
        size_t cells = 0;
        for (const auto& row : rows) {
            for (const auto& cell : row) {
                EXPECT_FALSE(formulaLike(cell)) << file << ": " << cell;
                ++cells;
            }
        }
        EXPECT_GT(cells, 100u) << file;
        EXPECT_NE(text.find(",\"'" + std::string("=HYPERLINK(\"\"http://x\"\",\"\"y\"\")") + "\","),
                  std::string::npos)
            << file << ": " << text.substr(0, 400);
        for (const auto& arm : arms) {
            EXPECT_NE(text.find("'" + arm), std::string::npos) << file << ": " << arm;
        }
        EXPECT_NE(text.find(",-0.5\n"), std::string::npos) << file << ": a number stays one";
    }
    std::ifstream in(path("export.json"));
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j["runs"][0]["experiment"], experiment) << "JSON holds the names as they are";
    EXPECT_EQ(j["runs"][0]["arm"], arms[0]);
}

// Two servers' tails read here carry the same host name (both run on this machine)
// and the same ids: each keeps an experiment and a run of its own.
TEST_F(StreamCli, TwoServersUnderOneHostNameStayApart) {
    const std::string other = path("other.db");
    recordRun(server_, "on the first", 40);
    recordRun(other, "on the second", 25);
    for (const auto& db : {server_, other}) {
        const auto r = sh(cli(db) + "tail --experiment 1 --stream | " + cli(local_) + "ingest -");
        ASSERT_EQ(r.code, 0) << r.out;
        EXPECT_NE(r.out.find("1 experiments and 1 runs added"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("(database " + Database::open(db)->databaseId() + ")"),
                  std::string::npos)
            << r.out;
    }
    auto local = Database::open(local_, Database::Mode::ReadOnly);
    ASSERT_EQ(local->runs().size(), 2u);
    for (const auto& run : local->runs()) {
        const bool first = run.experiment_name == "on the first";
        EXPECT_EQ(local->stepCount(run.id), first ? 40 : 25) << run.experiment_name;
    }
}

// Two ingests of one stream started together, five times: both exit 0 and each row
// is stored once.
TEST_F(StreamCli, TwoIngestsOfOneStreamAtOnceBothSucceed) {
    recordRun(server_, "e", 2000);
    ASSERT_EQ(sh(cli(server_) + "tail --run 1 --stream > " + path("s.ndjson")).code, 0);
    for (int attempt = 0; attempt < 5; ++attempt) {
        const std::string db = path("local" + std::to_string(attempt) + ".db");
        const std::string one = cli(db) + "ingest --origin gpu " + path("s.ndjson");
        const auto r =
            sh("(" + one + " > " + path("a.txt") + " 2>&1; echo a=$? >> " + path("codes.txt") +
               ") & (" + one + " > " + path("b.txt") + " 2>&1; echo b=$? >> " + path("codes.txt") +
               ") & wait; cat " + path("codes.txt") + "; rm " + path("codes.txt"));
        EXPECT_NE(r.out.find("a=0"), std::string::npos) << r.out << slurp(path("a.txt"));
        EXPECT_NE(r.out.find("b=0"), std::string::npos) << r.out << slurp(path("b.txt"));
        auto local = Database::open(db, Database::Mode::ReadOnly);
        ASSERT_EQ(local->runs().size(), 1u);
        EXPECT_EQ(local->stepCount(local->runs()[0].id), 2000);
    }
}

// Contradicting records exit 8 naming them; a header of a version beyond an int, 9;
// a bad --origin, 2; and tail resumes after the largest sequence number.
TEST_F(StreamCli, InconsistentStreamsAndNumbersBeyondTheirFieldsAreReported) {
    recordRun(server_, "e", 10);
    ASSERT_EQ(sh(cli(server_) + "tail --run 1 --stream > " + path("s.ndjson")).code, 0);
    ASSERT_EQ(sh(cli(local_) + "ingest --origin gpu " + path("s.ndjson")).code, 0);
    auto lines = slurp(path("s.ndjson"));
    const auto header = lines.substr(0, lines.find('\n') + 1);
    ampbench::run::StepRecord changed;
    changed.step = 5;
    changed.loss = 42.0;
    std::ofstream(path("changed.ndjson"))
        << header << ampbench::stream::encode(ampbench::stream::RowRecord{1, {5, changed}}) << "\n";
    auto r = sh(cli(local_) + "ingest --origin gpu " + path("changed.ndjson"));
    EXPECT_EQ(r.code, 8) << r.out;
    EXPECT_NE(r.out.find("line 2: run 1 of gpu (here run 1): record 5 is a step (step 5) here"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("1 refused"), std::string::npos) << r.out;

    std::ofstream(path("v.ndjson")) << R"({"type":"header","stream_version":4294967297})"
                                    << "\n";
    r = sh(cli(local_) + "ingest " + path("v.ndjson"));
    EXPECT_EQ(r.code, 9) << r.out;
    EXPECT_NE(r.out.find("version 4294967297 and this build reads version 1"), std::string::npos)
        << r.out;

    r = sh(cli(local_) + "ingest --origin " + std::string(201, 'o') + " " + path("s.ndjson"));
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("at most 200 bytes"), std::string::npos) << r.out;

    r = sh(cli(server_) + "tail --run 1 --since 1:9223372036854775807 --stream");
    EXPECT_EQ(r.code, 0) << r.out;
    r = sh(cli(server_) + "tail --run 1 --since 1:9223372036854775808 --stream");
    EXPECT_EQ(r.code, 2) << r.out;
}
