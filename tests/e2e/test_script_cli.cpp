// End to end: the user's own Python training script through `run --script`. The
// example Fashion-MNIST script trains fp32 and bf16 arms on two seeds into the runs
// `run` planned and is judged and reported; a stream the recorder writes to a file
// ingests into a fresh database with every double exact; scripts that crash, print
// garbage, never record, stop sending, are killed or are interrupted end their runs
// with a clear message and keep their rows.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "Shell.h"
#include "core/store/Database.h"
#include "core/stream/RecordStream.h"

namespace fs = std::filesystem;
using ampbench::run::FailureKind;
using ampbench::run::RunStatus;
using ampbench::store::Database;
namespace test = ampbench::test;

namespace {

const std::string kCli = AMPBENCH_CLI_PATH;
const std::string kScripts = AMPBENCH_TEST_SCRIPTS;
const std::string kExample = AMPBENCH_EXAMPLE_SCRIPT;
const std::string kPythonDir = AMPBENCH_PYTHON_DIR;  ///< the checkout's python/
const std::string kFashionMnist = "/usr/share/datasets/fashion-mnist";

bool runs(const std::string& command) {
    return test::shell(command + " >/dev/null").code == 0;
}

/// Debian's python3 first (it has python3-torch), else the one on PATH.
const std::string& python() {
    static const std::string found = [] {
        for (const char* p : {"/usr/bin/python3", "python3"}) {
            if (runs(std::string(p) + " -c 'import torch'")) {
                return std::string(p);
            }
        }
        return std::string(runs("/usr/bin/python3 -c pass") ? "/usr/bin/python3" : "python3");
    }();
    return found;
}

bool haveTorch() {
    static const bool yes = runs(python() + " -c 'import torch'");
    return yes;
}

std::string readFile(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

class ScriptCli : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ampbench-script-e2e-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "runs.db").string();
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    /// `run --script` of a script in tests/python/scripts, one arm, one seed.
    test::ShellResult runScript(const std::string& script, const std::string& extra = "") {
        return test::shell(kCli + " --db " + db_ + " run --script " + kScripts + "/" + script +
                           " --python " + python() + " --arm fp32=fp32 --seeds 1 --micro-steps 8 " +
                           extra);
    }
    std::unique_ptr<Database> open() const { return Database::open(db_, Database::Mode::ReadOnly); }

    fs::path dir_;
    std::string db_;
};

TEST_F(ScriptCli, TheFashionMnistExampleTrainsEveryArmAndSeedIntoItsPlannedRunsAndIsJudged) {
    if (!haveTorch()) {
        GTEST_SKIP() << "python3-torch is not installed (apt-get install python3-torch)";
    }
    if (!fs::exists(kFashionMnist)) {
        GTEST_SKIP() << "Fashion-MNIST is not at " << kFashionMnist;
    }
    const auto r =
        test::shell(kCli + " --db " + db_ + " run --script " + kExample + " --python " + python() +
                    " --script-arg=--train-samples --script-arg=3000"
                    " --script-arg=--eval-samples --script-arg=1000"
                    " --arm fp32=fp32 --arm bf16=amp-bf16 --seeds 1 2"
                    " --micro-steps 60 --warmup 3 --micro-batch 32");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("verdicts against fp32"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("bf16"), std::string::npos) << r.out;
    auto db = open();
    ASSERT_EQ(db->experiments().size(), 1u);
    // The stored spec says that a script trained, and which.
    const auto stored = nlohmann::json::parse(db->experiments().front().spec_json);
    EXPECT_EQ(stored.at("model").at("name"), "script");
    EXPECT_NE(stored.at("model").at("file").get<std::string>().find("train.py"), std::string::npos);
    const auto all = db->runs();
    ASSERT_EQ(all.size(), 4u) << "the planned runs get the rows; no run is added";
    for (const auto& run : all) {
        EXPECT_EQ(run.status, RunStatus::Finished) << run.id << ": " << run.error;
        EXPECT_TRUE(run.origin.empty()) << "trained here, not imported";
        const auto steps = db->steps(run.id);
        ASSERT_EQ(steps.size(), 60u) << "run " << run.id;
        EXPECT_EQ(steps.back().samples, 60 * 32);
        EXPECT_EQ(run.last_step, 60);
        for (size_t i = 0; i < steps.size(); ++i) {
            EXPECT_EQ(steps[i].step, static_cast<int64_t>(i + 1));
            EXPECT_TRUE(std::isfinite(steps[i].loss));
            EXPECT_GT(steps[i].step_ms, 0.0);
            EXPECT_GT(steps[i].mem_peak, 0);
            EXPECT_EQ(steps[i].timed, i >= 3);
        }
        const auto evals = db->evals(run.id);
        ASSERT_EQ(evals.size(), 1u);
        EXPECT_GT(evals[0].val_accuracy, 0.3) << "a CNN learns Fashion-MNIST in 60 steps";
        EXPECT_LE(evals[0].val_accuracy, 1.0);
    }
    // The losses differ between the arms: bf16 autocast really ran in the bf16 arm.
    EXPECT_NE(db->steps(all[0].id).back().loss, db->steps(all[1].id).back().loss);
    const auto report = test::shell(kCli + " --db " + db_ + " report 1 --json " +
                                    path("report.json") + " --csv " + path("report.csv"));
    ASSERT_EQ(report.code, 0) << report.out;
    const auto j = nlohmann::json::parse(readFile(path("report.json")));
    EXPECT_FALSE(j.empty());
    EXPECT_NE(readFile(path("report.csv")).find("bf16"), std::string::npos);
}

TEST_F(ScriptCli, ARecorderWrittenFileIngestsIntoAFreshDatabaseWithEveryDoubleExact) {
    const std::string file = path("stream.ndjson");
    // Doubles that a careless writer rounds: a third, 0.1, the smallest subnormal,
    // the largest double, NaN and both infinities; a step count past 2^53.
    const std::string program =
        "import ampbench, math\n"
        "rec = ampbench.Recorder('" +
        file +
        "', arm='bf16', seed=7, precision='amp-bf16',"
        " accumulation=2, lr=0.1, warmup_steps=1)\n"
        "rec.step(1/3, lr=0.1, samples=2**53 + 1)\n"
        "rec.step(5e-324, lr=1.7976931348623157e308, samples=3)\n"
        "rec.step(float('nan'), lr=float('inf'), samples=3, grad_norm=float('-inf'))\n"
        "rec.eval(metric=0.8125, loss=2/3)\n"
        "rec.event('a note', kind='warning', value=-0.0)\n"
        "rec.close()\n";
    std::ofstream(path("write.py")) << program;
    const auto w =
        test::shell("PYTHONPATH=" + kPythonDir + " " + python() + " " + path("write.py"));
    ASSERT_EQ(w.code, 0) << w.out;
    // Every line is a record of the C++ reader's schema.
    std::ifstream in(file);
    std::string line;
    int64_t n = 0;
    while (std::getline(in, line)) {
        EXPECT_NO_THROW(ampbench::stream::decode(line, ++n)) << line;
    }
    const auto r = test::shell(kCli + " --db " + db_ + " ingest " + file);
    ASSERT_EQ(r.code, 0) << r.out;
    auto db = open();
    const auto all = db->runs();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].arm, "bf16");
    EXPECT_EQ(all[0].seed, 7u);
    EXPECT_EQ(all[0].status, RunStatus::Finished);
    const auto steps = db->steps(all[0].id);
    ASSERT_EQ(steps.size(), 3u);
    EXPECT_EQ(steps[0].loss, 1.0 / 3.0);
    EXPECT_EQ(steps[0].samples, (int64_t{1} << 53) + 1);
    EXPECT_EQ(steps[0].lr, 0.1);
    EXPECT_FALSE(steps[0].timed);
    EXPECT_TRUE(steps[1].timed);
    EXPECT_EQ(steps[1].loss, 5e-324);
    EXPECT_EQ(steps[1].lr, 1.7976931348623157e308);
    EXPECT_EQ(steps[1].samples, (int64_t{1} << 53) + 4);
    EXPECT_TRUE(std::isnan(steps[2].loss));
    EXPECT_EQ(steps[2].lr, INFINITY);
    EXPECT_EQ(steps[2].grad_norm, -INFINITY);
    const auto evals = db->evals(all[0].id);
    ASSERT_EQ(evals.size(), 1u);
    EXPECT_EQ(evals[0].val_loss, 2.0 / 3.0);
    EXPECT_EQ(evals[0].val_accuracy, 0.8125);
    const auto events = db->events(all[0].id);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, ampbench::run::EventKind::Warning);
    EXPECT_EQ(events[0].message, "a note");
    EXPECT_EQ(db->lastSeq(all[0].id), 5);
    // Read again: nothing is added twice.
    const auto again = test::shell(kCli + " --db " + db_ + " ingest " + file);
    EXPECT_EQ(again.code, 0) << again.out;
    EXPECT_NE(again.out.find("0 rows added"), std::string::npos) << again.out;
}

TEST_F(ScriptCli, AScriptThatCrashesMidRunFailsWithItsExceptionAndKeepsItsSteps) {
    const auto r = runScript("steps_then_crash.py");
    EXPECT_EQ(r.code, 1) << r.out;
    auto db = open();
    const auto run = db->runs().at(0);
    EXPECT_EQ(run.status, RunStatus::Failed);
    EXPECT_EQ(run.failure, FailureKind::Runtime);
    EXPECT_NE(run.error.find("exited with status 1 after step 6"), std::string::npos) << run.error;
    EXPECT_NE(run.error.find("ValueError: the data loader ran dry at batch 7"), std::string::npos)
        << run.error;
    EXPECT_EQ(db->steps(run.id).size(), 6u);
    EXPECT_NE(r.out.find("Traceback"), std::string::npos) << "the script's stderr is shown";
}

TEST_F(ScriptCli, GarbageOnTheScriptsStdoutNeverReachesTheRun) {
    const auto r = runScript("garbage_on_stdout.py");
    EXPECT_EQ(r.code, 0) << r.out;
    auto db = open();
    const auto run = db->runs().at(0);
    EXPECT_EQ(run.status, RunStatus::Finished) << run.error;
    const auto steps = db->steps(run.id);
    ASSERT_EQ(steps.size(), 8u);
    for (const auto& s : steps) {
        EXPECT_NE(s.step, 99) << "a line on stdout is the script's, never a record";
        EXPECT_EQ(s.loss, 0.5);
    }
    EXPECT_NE(r.out.find("garbage"), std::string::npos) << "stdout goes to stderr, unchanged";
}

TEST_F(ScriptCli, GarbageInTheRecordStreamIsNamedAndTheGoodRowsKept) {
    const auto r = runScript("garbage_in_stream.py");
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("record stream line"), std::string::npos) << r.out;
    auto db = open();
    const auto run = db->runs().at(0);
    EXPECT_EQ(run.status, RunStatus::Failed);
    EXPECT_EQ(run.failure, FailureKind::Recording);
    EXPECT_NE(run.error.find("1 problem"), std::string::npos) << run.error;
    EXPECT_NE(run.error.find("line 3"), std::string::npos) << run.error;
    ASSERT_EQ(db->steps(run.id).size(), 2u);
    EXPECT_EQ(db->steps(run.id)[1].loss, 0.8);
}

TEST_F(ScriptCli, AScriptThatNeverCallsTheRecorderFailsSayingSo) {
    const auto r = runScript("never_records.py");
    EXPECT_EQ(r.code, 1) << r.out;
    auto db = open();
    const auto run = db->runs().at(0);
    EXPECT_EQ(run.status, RunStatus::Failed);
    EXPECT_NE(run.error.find("never created ampbench.Recorder()"), std::string::npos) << run.error;
    EXPECT_NE(r.out.find("never created ampbench.Recorder()"), std::string::npos) << r.out;
    EXPECT_TRUE(db->steps(run.id).empty());
}

TEST_F(ScriptCli, StderrThatIsNotUtf8IsStoredWithReplacementCharactersAndReported) {
    const std::string replaced = "bad bytes \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD in the loader";
    const auto r = runScript("bad_bytes_on_stderr.py");
    EXPECT_EQ(r.code, 1) << r.out;
    {
        auto db = open();
        const auto run = db->runs().at(0);
        EXPECT_EQ(run.status, RunStatus::Failed);
        EXPECT_NE(run.error.find("exited with status 3 after step 2"), std::string::npos)
            << run.error;
        EXPECT_NE(run.error.find(replaced), std::string::npos) << run.error;
    }
    auto report = test::shell(kCli + " --db " + db_ + " report 1 --json " + path("report.json"));
    ASSERT_EQ(report.code, 0) << report.out;
    const std::string text = readFile(path("report.json"));
    EXPECT_NO_THROW(nlohmann::json::parse(text)) << text;
    EXPECT_NE(text.find(replaced), std::string::npos) << text;

    // A database written before holds the raw bytes; its report is written all the same.
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db_.c_str(), &raw), SQLITE_OK);
    const int rc = sqlite3_exec(raw, "UPDATE runs SET error = 'older \xFF\xFE text'", nullptr,
                                nullptr, nullptr);
    sqlite3_close(raw);
    ASSERT_EQ(rc, SQLITE_OK);
    report = test::shell(kCli + " --db " + db_ + " report 1 --json " + path("older.json"));
    ASSERT_EQ(report.code, 0) << report.out;
    const std::string older = readFile(path("older.json"));
    EXPECT_NO_THROW(nlohmann::json::parse(older)) << older;
    EXPECT_NE(older.find("older \xEF\xBF\xBD\xEF\xBF\xBD text"), std::string::npos) << older;
}

TEST_F(ScriptCli, AScriptThatStopsSendingIsStoppedAndItsRowsKept) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = runScript("records_then_hangs.py", "--script-silence 1");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
    EXPECT_EQ(r.code, 1) << r.out;
    auto db = open();
    const auto run = db->runs().at(0);
    EXPECT_EQ(run.status, RunStatus::Failed);
    EXPECT_NE(run.error.find("sent no record for 1 s (--script-silence)"), std::string::npos)
        << run.error;
    EXPECT_NE(run.error.find("after step 3"), std::string::npos) << run.error;
    EXPECT_EQ(db->steps(run.id).size(), 3u);
}

TEST_F(ScriptCli, AKilledScriptLeavesItsRunInterruptedWithItsRows) {
    const auto r = runScript("records_then_killed.py");
    EXPECT_EQ(r.code, 1) << r.out;
    auto db = open();
    const auto run = db->runs().at(0);
    EXPECT_EQ(run.status, RunStatus::Interrupted);
    EXPECT_EQ(run.failure, FailureKind::Interrupted);
    EXPECT_NE(run.error.find("killed by signal 9"), std::string::npos) << run.error;
    EXPECT_EQ(db->steps(run.id).size(), 4u);
}

/// The CLI training slow_steps.py (two runs) in the background, until the first run
/// holds a few steps in the database: the pids of the CLI and of the script.
struct Background {
    std::thread runner;
    pid_t cli = 0;
    pid_t script = 0;
};

void startSlowScript(const ScriptCli& t, const std::string& db, Background& bg,
                     const std::function<std::string(const std::string&)>& path) {
    const std::string command =
        kCli + " --db " + db + " run --script " + kScripts + "/slow_steps.py --script-arg " +
        path("script.pid") + " --python " + python() +
        " --arm a=fp32 --arm b=fp32 --seeds 1 --micro-steps 8 > " + path("out.txt") +
        " 2>&1 & echo $! > " + path("cli.pid") + "; wait $!; echo $? > " + path("code.txt");
    bg.runner = std::thread([command] { test::shell(command); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int64_t steps = 0;
    while (std::chrono::steady_clock::now() < deadline && steps < 5) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (!fs::exists(db) || !fs::exists(path("script.pid"))) {
            continue;
        }
        try {
            auto d = Database::open(db, Database::Mode::ReadOnly);
            steps = d->runs().empty() ? 0 : d->stepCount(d->runs().front().id);
        } catch (const std::exception&) {
        }
    }
    (void)t;
    ASSERT_GE(steps, 5) << readFile(path("out.txt"));
    bg.cli = std::stoi(readFile(path("cli.pid")));
    bg.script = std::stoi(readFile(path("script.pid")));
}

/// Whether `pid` goes (a zombie counts as gone). The script records until it is
/// stopped: one that never goes is killed here, so it outlives no test.
bool endsSoon(pid_t pid) {
    const bool gone = test::eventually(
        [&] {
            const std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
            return stat.empty() || stat.find(") Z") != std::string::npos;
        },
        test::kPatience, std::chrono::milliseconds(100));
    if (!gone) {
        ::kill(pid, SIGKILL);
    }
    return gone;
}

TEST_F(ScriptCli, CtrlCEndsTheScriptAndCancelsTheRunsWithTheirRows) {
    Background bg;
    startSlowScript(*this, db_, bg, [this](const std::string& n) { return path(n); });
    if (HasFatalFailure()) {
        bg.runner.join();
        return;
    }
    ASSERT_EQ(kill(bg.cli, SIGINT), 0);
    bg.runner.join();
    EXPECT_EQ(std::stoi(readFile(path("code.txt"))), 130) << readFile(path("out.txt"));
    EXPECT_TRUE(endsSoon(bg.script)) << "the script ended with the CLI";
    auto db = open();
    const auto all = db->runs();
    ASSERT_EQ(all.size(), 2u);
    for (const auto& run : all) {
        EXPECT_EQ(run.status, RunStatus::Cancelled) << run.id;
        EXPECT_EQ(run.failure, FailureKind::Cancelled);
    }
    const auto first = all[0].arm == "a" ? all[0] : all[1];
    EXPECT_GE(db->steps(first.id).size(), 5u) << "the rows recorded before Ctrl-C are kept";
    EXPECT_NE(readFile(path("out.txt")).find("rows recorded so far are kept"), std::string::npos);
}

TEST_F(ScriptCli, AfterKillNineOfTheCliTheScriptEndsAndItsRunReadsInterruptedWithItsRows) {
    Background bg;
    startSlowScript(*this, db_, bg, [this](const std::string& n) { return path(n); });
    if (HasFatalFailure()) {
        bg.runner.join();
        return;
    }
    ASSERT_EQ(kill(bg.cli, SIGKILL), 0);
    bg.runner.join();
    EXPECT_TRUE(endsSoon(bg.script)) << "the script does not train on for no one";
    auto db = open();
    const auto all = db->runs();
    ASSERT_EQ(all.size(), 2u);
    for (const auto& run : all) {
        EXPECT_EQ(run.status, RunStatus::Interrupted) << run.id << " (queued ones too)";
    }
    const auto first = all[0].arm == "a" ? all[0] : all[1];
    EXPECT_GE(db->steps(first.id).size(), 5u) << "every row committed before is kept";
}

TEST_F(ScriptCli, TheScriptGetsItsArmsSettingsItsArgumentsAndThePackageOfThisCheckout) {
    fs::create_directories(path("settings"));
    const auto r = test::shell(
        "SETTINGS_DIR=" + path("settings") + " AMPBENCH_STREAM=/dev/null " + kCli + " --db " + db_ +
        " run --script " + kScripts + "/echo_settings.py --python " + python() +
        " --script-arg=--flag --script-arg 'two words'"
        " --arm base=fp32 --arm acc=amp-bf16,accum=2 --seeds 5"
        " --micro-steps 8 --warmup 1 --micro-batch 16 --lr 0.01 --device cpu");
    ASSERT_EQ(r.code, 0) << r.out;
    auto db = open();
    for (const auto& run : db->runs()) {
        const auto j = nlohmann::json::parse(
            readFile(path("settings/run" + std::to_string(run.id) + ".json")));
        EXPECT_EQ(j["AMPBENCH_RUN_ID"], std::to_string(run.id));
        EXPECT_EQ(j["AMPBENCH_ARM"], run.arm);
        EXPECT_EQ(j["AMPBENCH_SEED"], "5");
        EXPECT_EQ(j["AMPBENCH_DEVICE"], "cpu");
        EXPECT_EQ(j["AMPBENCH_MICRO_BATCH"], "16");
        EXPECT_EQ(j["AMPBENCH_STREAM_FD"], "3") << "a stream path set by hand does not apply";
        EXPECT_EQ(j.count("AMPBENCH_STREAM"), 0u);
        EXPECT_EQ(j["argv"], nlohmann::json::array({"--flag", "two words"}));
        // The variables set are the ones the package documents (AMPBENCH_STREAM, a
        // path for recording by hand, is the one the workbench never sets).
        std::vector<std::string> set;
        for (const auto& [k, v] : j.items()) {
            if (k.rfind("AMPBENCH_", 0) == 0) {
                set.push_back(k);
            }
        }
        set.push_back("AMPBENCH_STREAM");
        std::sort(set.begin(), set.end());
        EXPECT_EQ(nlohmann::json(set), j["documented"]);
        EXPECT_EQ(j["ampbench_file"].get<std::string>().rfind(kPythonDir + "/ampbench/", 0), 0u)
            << j["ampbench_file"];
        if (run.arm == "acc") {
            EXPECT_EQ(j["AMPBENCH_PRECISION"], "amp-bf16");
            EXPECT_EQ(j["AMPBENCH_ACCUMULATION"], "2");
            EXPECT_EQ(j["AMPBENCH_EFFECTIVE_BATCH"], "32");
            EXPECT_EQ(std::stod(j["AMPBENCH_LR"].get<std::string>()), 0.02) << "linear rule";
            EXPECT_EQ(j["AMPBENCH_PLANNED_STEPS"], "4");
            EXPECT_EQ(db->steps(run.id).at(0).samples, 32);
        } else {
            EXPECT_EQ(j["AMPBENCH_PRECISION"], "fp32");
            EXPECT_EQ(j["AMPBENCH_ACCUMULATION"], "1");
            EXPECT_EQ(std::stod(j["AMPBENCH_LR"].get<std::string>()), 0.01);
        }
        EXPECT_EQ(run.status, RunStatus::Finished) << run.error;
    }
}

TEST_F(ScriptCli, TheStoredSpecRepeatsTheScriptsArgumentsAndInterpreter) {
    fs::create_directories(path("settings"));
    const std::string env = "SETTINGS_DIR=" + path("settings") + " ";
    auto r = test::shell(env + kCli + " --db " + db_ + " run --script " + kScripts +
                         "/echo_settings.py --python " + python() +
                         " --script-arg=--flag --script-arg \"it's two\""
                         " --arm base=fp32 --seeds 1 --micro-steps 2 --warmup 1 --device cpu");
    ASSERT_EQ(r.code, 0) << r.out;
    std::string spec_json;
    {
        auto db = open();
        spec_json = db->experiments().front().spec_json;
    }
    const auto stored = nlohmann::json::parse(spec_json);
    EXPECT_EQ(stored.at("model").at("python"), python());
    EXPECT_EQ(stored.at("model").at("args"), "--flag 'it'\\''s two'");
    // The stored spec alone trains the script as it was: same interpreter, same words.
    std::ofstream(path("spec.json")) << spec_json;
    r = test::shell(env + kCli + " --db " + db_ + " run --config " + path("spec.json"));
    ASSERT_EQ(r.code, 0) << r.out;
    auto db = open();
    ASSERT_EQ(db->runs().size(), 2u);
    for (const auto& run : db->runs()) {
        const auto j = nlohmann::json::parse(
            readFile(path("settings/run" + std::to_string(run.id) + ".json")));
        EXPECT_EQ(j["argv"], nlohmann::json::array({"--flag", "it's two"})) << run.id;
        EXPECT_EQ(run.status, RunStatus::Finished) << run.error;
    }
}

TEST_F(ScriptCli, DryRunAndSaveSpecShowTheSpecAsItIsStoredWithTheScriptAsTheModel) {
    const std::string script = std::string(kScripts) + "/echo_settings.py";
    auto r = test::shell(kCli + " --db " + db_ + " run --script " + script + " --python " +
                         python() + " --script-arg=--flag --arm base=fp32 --seeds 1 --save-spec " +
                         path("saved.json") + " --dry-run 2>/dev/null");
    ASSERT_EQ(r.code, 0) << r.out;
    const auto printed = nlohmann::json::parse(r.out);
    EXPECT_EQ(printed.at("model").at("name"), "script");
    EXPECT_EQ(printed.at("model").at("file"), fs::absolute(script).string());
    EXPECT_EQ(printed.at("model").at("args"), "--flag");
    EXPECT_EQ(printed.at("model").at("python"), python());
    EXPECT_EQ(nlohmann::json::parse(readFile(path("saved.json"))), printed);
    EXPECT_FALSE(fs::exists(db_));  // a dry run plans nothing
}

TEST_F(ScriptCli, AMissingScriptOrInterpreterIsRefusedBeforeAnythingIsPlanned) {
    auto r = test::shell(kCli + " --db " + db_ + " run --script " + path("nope.py"));
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_NE(r.out.find("--script " + path("nope.py") + ": no such file"), std::string::npos)
        << r.out;
    r = test::shell(kCli + " --db " + db_ + " run --script " + kScripts +
                    "/never_records.py --python " + path("no-python"));
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_NE(r.out.find("--python " + path("no-python")), std::string::npos) << r.out;
    r = test::shell(kCli + " --db " + db_ + " run --script " + kScripts +
                    "/never_records.py --model mlp");
    EXPECT_EQ(r.code, 2) << r.out;
    r = test::shell(kCli + " --db " + db_ + " run --script " + kScripts +
                    "/never_records.py --python " + python() + " --arm dp=fp32,ranks=2");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("a script trains in one process"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(db_)) << "nothing was planned";
}

}  // namespace
