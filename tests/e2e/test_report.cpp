// End to end: a tiny finished experiment trained by ampbench-cli, then
// `ampbench-cli report`, and every output checked against the database (the drawing
// itself, in process: test_report_rendering.cpp).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QByteArray>
#include <QImage>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "Shell.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/Format.h"
#include "core/config/DataPaths.h"
#include "core/store/Database.h"

namespace fs = std::filesystem;
using namespace ampbench;

namespace {

using Result = test::ShellResult;
using test::shell;

Result cli(const std::string& args) {
    return shell(std::string(AMPBENCH_CLI_PATH) + " " + args);
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
    return text;
}

std::string html_escape(const std::string& text) {
    return replaceAll(
        replaceAll(replaceAll(replaceAll(text, "&", "&amp;"), "<", "&lt;"), ">", "&gt;"), "\"",
        "&quot;");
}

bool haveData() {
    return ampbench::config::haveFashionMnist();
}

/// One tiny experiment for the whole suite: the smoke preset as it is, two seeds per arm
/// so the noise band exists. Some seconds on two CPU cores. Under ctest it is trained
/// once for every test of this binary (AMPBENCH_REPORT_FIXTURE names the folder,
/// e2e/report-fixture.cmake writes it) and each test works on a copy of its own.
class ReportTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        dir_ = fs::temp_directory_path() / ("ampbench-report-" + std::to_string(getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "runs.db").string();
        if (!haveData()) {
            return;
        }
        const char* shared = std::getenv("AMPBENCH_REPORT_FIXTURE");
        if (shared && fs::exists(fs::path(shared) / "code.txt")) {
            const fs::path trained(shared);
            train_.out = slurp(trained / "train.txt");
            try {
                train_.code = std::stoi(slurp(trained / "code.txt"));
            } catch (const std::exception&) {
                train_.code = -1;  // killed: the output says what there is to say
            }
            for (const char* file : {"runs.db", "runs.db-wal"}) {
                if (fs::exists(trained / file)) {
                    fs::copy_file(trained / file, dir_ / file);
                }
            }
            return;
        }
        train_ = cli("--db " + db_ + " run --preset smoke -q");
    }
    static void TearDownTestSuite() { fs::remove_all(dir_); }
    void SetUp() override {
        if (!haveData()) {
            GTEST_SKIP() << "dataset-fashion-mnist is not installed";
        }
        ASSERT_EQ(train_.code, 0) << train_.out;
    }
    static fs::path dir_;
    static std::string db_;
    static Result train_;
};
fs::path ReportTest::dir_;
std::string ReportTest::db_;
Result ReportTest::train_;

std::vector<std::string> embeddedPngs(const std::string& html) {
    // A plain scan: std::regex recurses per character and overflows the stack on images.
    std::vector<std::string> out;
    const std::string prefix = "data:image/png;base64,";
    for (size_t at = html.find(prefix); at != std::string::npos; at = html.find(prefix, at)) {
        at += prefix.size();
        const size_t end = html.find('"', at);
        out.push_back(QByteArray::fromBase64(QByteArray::fromStdString(html.substr(at, end - at)))
                          .toStdString());
    }
    return out;
}

uint32_t bigEndian(const std::string& s, size_t at) {
    return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
           (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}

}  // namespace

TEST_F(ReportTest, WritesHtmlPdfCsvJsonThatMatchTheDatabase) {
    const auto html = dir_ / "r.html", pdf = dir_ / "r.pdf", csv = dir_ / "r.csv",
               json = dir_ / "r.json";
    auto r = cli("--db " + db_ + " report 1 --html " + html.string() + " --pdf " + pdf.string() +
                 " --csv " + csv.string() + " --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(r.out.find("warning:"), std::string::npos) << "every run finished:\n" << r.out;

    auto db = store::Database::open(db_, store::Database::Mode::ReadOnly);
    auto data = analysis::loadExperiment(*db, 1);
    ASSERT_TRUE(data);
    const auto a = analysis::analyzeExperiment(*data);

    // HTML: the summary table's values as the database gives them.
    const std::string page = replaceAll(slurp(html), "&nbsp;", " ");
    const auto arms = analysis::summarizeArms(analysis::summarizeExperimentRuns(*db, 1));
    ASSERT_EQ(arms.size(), 3u);
    for (const auto& s : arms) {
        for (const std::string& value :
             {s.arm, analysis::formatMs(s.median_step_ms),
              analysis::formatNumber(s.samples_per_s, 0), analysis::formatBytes(s.peak_mem),
              analysis::formatPercent(s.val_accuracy, 2), analysis::formatRatio(s.speedup)}) {
            EXPECT_NE(page.find(value), std::string::npos) << s.arm << ": " << value;
        }
    }
    for (const auto& v : a.verdicts) {
        EXPECT_NE(page.find(" " + analysis::toString(v.verdict) + " </span>"), std::string::npos)
            << v.arm << "'s verdict badge";
        EXPECT_NE(page.find(html_escape(analysis::describe(v.summary))), std::string::npos)
            << v.summary;
    }
    EXPECT_NE(page.find("ampbench-cli run --config spec.json"), std::string::npos);
    EXPECT_NE(page.find("libtorch_version"), std::string::npos) << "the environment";

    // Images: embedded PNGs with pixels in them.
    const auto pngs = embeddedPngs(slurp(html));
    ASSERT_GE(pngs.size(), 5u);
    for (const auto& png : pngs) {
        ASSERT_GT(png.size(), 5000u);
        EXPECT_EQ(png.substr(1, 3), "PNG");
        EXPECT_EQ(png.substr(12, 4), "IHDR");
        EXPECT_GT(bigEndian(png, 16), 400u);  // width
        EXPECT_GT(bigEndian(png, 20), 200u);  // height
    }

    // PDF: pages, as poppler counts them.
    auto info = shell("pdfinfo " + pdf.string());
    ASSERT_EQ(info.code, 0) << "pdfinfo (poppler-utils) reads the PDF:\n" << info.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(info.out, m, std::regex("Pages:\\s+(\\d+)"))) << info.out;
    EXPECT_GE(std::stoi(m[1].str()), 2);

    // CSV: one line per metric value of every run.
    int64_t expected = 0;
    for (const auto& run : data->runs) {
        expected += static_cast<int64_t>(run.steps.size()) * 11 +
                    static_cast<int64_t>(run.evals.size()) * 2 +
                    static_cast<int64_t>(run.events.size());
    }
    const std::string csv_text = slurp(csv);
    EXPECT_EQ(std::count(csv_text.begin(), csv_text.end(), '\n') - 1, expected);

    // JSON: parses, and its verdicts are the analysis's.
    auto j = nlohmann::json::parse(slurp(json));
    ASSERT_EQ(j["verdicts"].size(), a.verdicts.size());
    for (size_t i = 0; i < a.verdicts.size(); ++i) {
        EXPECT_EQ(j["verdicts"][i]["arm"], a.verdicts[i].arm);
        EXPECT_EQ(j["verdicts"][i]["verdict"], analysis::toString(a.verdicts[i].verdict));
        EXPECT_EQ(j["verdicts"][i]["noise_known"], true) << "two seeds per arm";
    }
    EXPECT_EQ(j["noise_band"]["seeds"], 2);
    EXPECT_EQ(j["spec"]["name"], "fashion-mnist-smoke");
    EXPECT_EQ(j["summary"]["runs"].size(), 6u);
}

// The smoke preset as a user runs it reaches a verdict on every arm: it was "too few
// optimizer steps (48, at least 50)", always.
TEST_F(ReportTest, TheSmokePresetReachesAVerdict) {
    EXPECT_EQ(train_.out.find("too few optimizer steps"), std::string::npos) << train_.out;
    auto db = store::Database::open(db_, store::Database::Mode::ReadOnly);
    auto data = analysis::loadExperiment(*db, 1);
    ASSERT_TRUE(data);
    const auto a = analysis::analyzeExperiment(*data);
    ASSERT_EQ(a.verdicts.size(), 3u);
    for (const auto& v : a.verdicts) {
        EXPECT_NE(v.verdict, analysis::Verdict::Inconclusive)
            << v.arm << ": " << analysis::describe(v.summary);
        EXPECT_TRUE(v.noise_known) << v.arm;
    }
}

TEST_F(ReportTest, BaselineCanBeChosen) {
    const auto json = dir_ / "amp-base.json";
    auto r = cli("--db " + db_ + " report 1 --baseline amp --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.out;
    auto j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["baseline"], "amp");
    EXPECT_EQ(j["verdicts"][0]["arm"], "amp") << "the baseline leads";
    EXPECT_EQ(j["verdicts"][0]["verdict"], "baseline");
    EXPECT_EQ(j["verdicts"][1]["arm"], "fp32");
    auto bad = cli("--db " + db_ + " report 1 --baseline nope --json " + json.string());
    EXPECT_EQ(bad.code, 2) << bad.out;
    EXPECT_NE(bad.out.find("arms: fp32, amp, amp-accum4"), std::string::npos) << bad.out;
}

TEST_F(ReportTest, IncompleteRunsAreNamedAndTheRestReported) {
    // A copy of experiment 1 in experiment 2 whose last run was interrupted mid-way.
    int64_t cut_run = 0;
    {
        auto db = store::Database::open(db_);
        auto source = analysis::loadExperiment(*db, 1);
        ASSERT_TRUE(source);
        const int64_t exp = db->createExperiment("partial copy", source->experiment.spec_json);
        for (size_t i = 0; i < source->runs.size(); ++i) {
            const auto& run = source->runs[i];
            const bool last = i + 1 == source->runs.size();
            const int64_t id = db->createRun(exp, run.row.arm, run.row.arm_index, run.row.seed,
                                             run.row.spec_json, run.row.planned_steps);
            db->markRunning(id, run.row.env_json);
            std::vector<run::StepRecord> steps = run.steps;
            if (last) {
                steps.resize(steps.size() / 2);
                cut_run = id;
            }
            db->insertSteps(id, steps);
            db->insertEvals(id, last ? std::vector<run::EvalRecord>{} : run.evals);
            db->finishRun(id, last ? run::RunStatus::Interrupted : run::RunStatus::Finished,
                          last ? "killed" : "");
        }
        ASSERT_EQ(exp, 2);
    }
    const auto html = dir_ / "partial.html", json = dir_ / "partial.json";
    auto r = cli("--db " + db_ + " report 2 --html " + html.string() + " --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.out;
    const std::string named =
        "run " + std::to_string(cut_run) + " (amp-accum4, seed 2): interrupted";
    EXPECT_NE(r.out.find("warning: incomplete, left out: " + named), std::string::npos) << r.out;
    EXPECT_NE(slurp(html).find(named), std::string::npos);
    auto j = nlohmann::json::parse(slurp(json));
    ASSERT_EQ(j["incomplete_runs"].size(), 1u);
    EXPECT_EQ(j["summary"]["runs"].size(), 5u) << "the rest is still reported";
    EXPECT_EQ(j["verdicts"][2]["runs_used"], 1);
}

// `find-batch --experiment` searches that experiment's arms, records the searches
// under it, and its report then carries each arm's max batch and the ratio.
TEST(ReportCapacity, FindBatchUnderAnExperimentReachesTheReport) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    const fs::path dir =
        fs::temp_directory_path() / ("ampbench-report-capacity-" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string db = (dir / "runs.db").string();
    auto train = cli("--db " + db +
                     " run --preset smoke --steps 8 --warmup 1 --eval-batches 1 --threads 1 -q");
    ASSERT_EQ(train.code, 0) << train.out;

    auto missing = cli("--db " + db + " find-batch --experiment 7 -q");
    EXPECT_EQ(missing.code, 5) << missing.out;
    EXPECT_NE(missing.out.find("no experiment 7"), std::string::npos) << missing.out;
    auto both = cli("--db " + db + " find-batch --experiment 1 --preset smoke -q");
    EXPECT_EQ(both.code, 2) << both.out;

    // Upper bound 32 from 8: each arm fits 8, 16, 32 and stops at the bound.
    auto find = cli("--db " + db +
                    " find-batch --experiment 1 --start 8 --max-batch 32 --trial-steps 1 "
                    "--threads 1 -q");
    ASSERT_EQ(find.code, 0) << find.out;
    EXPECT_NE(find.out.find("under experiment 1"), std::string::npos) << find.out;
    {
        auto conn = store::Database::open(db, store::Database::Mode::ReadOnly);
        auto data = analysis::loadExperiment(*conn, 1);
        ASSERT_TRUE(data);
        ASSERT_EQ(data->batch_searches.size(), 3u);  // the smoke preset's three arms
        for (const auto& search : data->batch_searches) {
            EXPECT_EQ(search.experiment_id, 1);
            EXPECT_EQ(search.max_batch, 32) << search.arm;
            EXPECT_EQ(search.status, "finished") << search.arm;
        }
    }
    const auto json = dir / "r.json";
    auto report = cli("--db " + db + " report 1 --json " + json.string());
    ASSERT_EQ(report.code, 0) << report.out;
    auto j = nlohmann::json::parse(slurp(json));
    ASSERT_EQ(j["verdicts"].size(), 3u);
    for (const auto& v : j["verdicts"]) {
        EXPECT_EQ(v["gains"]["max_batch"], 32) << v.dump();
        EXPECT_EQ(v["gains"]["baseline_max_batch"], 32) << v.dump();
        EXPECT_DOUBLE_EQ(v["gains"]["max_batch_ratio"].get<double>(), 1.0) << v.dump();
    }
    fs::remove_all(dir);
}

// An advice's report carries its section: the recommendation, the table, the chart and
// the lines for a PyTorch loop in the HTML (and so the PDF), the advice in the JSON.
TEST(ReportAdvice, AnAdvicesReportCarriesItsSectionAndChart) {
    const fs::path dir =
        fs::temp_directory_path() / ("ampbench-report-advice-" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string db = (dir / "runs.db").string();
    auto advise = cli("--db " + db +
                      " advise --model mlp --width 8 --depth 1 --dataset synthetic-images "
                      "--micro-batch 4 --max-batch 16 --timed-steps 10 --check 1 --eval-batches 1 "
                      "--threads 1 -q");
    ASSERT_EQ(advise.code, 0) << advise.out;
    const auto html = dir / "r.html", json = dir / "r.json", pdf = dir / "r.pdf";
    auto report = cli("--db " + db + " report 1 --html " + html.string() + " --json " +
                      json.string() + " --pdf " + pdf.string());
    ASSERT_EQ(report.code, 0) << report.out;
    const std::string page = slurp(html);
    EXPECT_NE(page.find("Advice: which precision to train with"), std::string::npos);
    EXPECT_NE(page.find("<b>Recommendation:</b>"), std::string::npos);
    EXPECT_NE(page.find("alt=\"Throughput against memory\""), std::string::npos);
    EXPECT_NE(page.find("In your PyTorch loop:"), std::string::npos);
    EXPECT_GT(fs::file_size(pdf), 1000u);
    auto j = nlohmann::json::parse(slurp(json));
    ASSERT_TRUE(j.contains("advice")) << j.dump();
    EXPECT_EQ(j["advice"]["baseline"], "fp32");
    EXPECT_GE(j["advice"]["candidates"].size(), 4u);
    EXPECT_FALSE(j["advice"]["recommendation"]["sentence"].get<std::string>().empty());
    EXPECT_NE(page.find(html_escape(j["advice"]["recommendation"]["sentence"].get<std::string>())),
              std::string::npos);
    fs::remove_all(dir);
}

/// Bad input needs no training: an experiment with no runs is enough.
class ReportInputTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("ampbench-report-input-" + std::to_string(getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "runs.db").string();
        auto db = store::Database::open(db_);
        ASSERT_EQ(db->createExperiment("empty", "{}"), 1);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
    std::string db_;
};

TEST_F(ReportInputTest, UnknownExperimentExitsFive) {
    auto r = cli("--db " + db_ + " report 99 --json " + (dir_ / "x.json").string());
    EXPECT_EQ(r.code, 5) << r.out;
    EXPECT_NE(r.out.find("no experiment 99"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir_ / "x.json"));
}

TEST_F(ReportInputTest, UnwritableOutputExitsSix) {
    auto r = cli("--db " + db_ + " report 1 --html " + (dir_ / "no-such-dir" / "r.html").string());
    EXPECT_EQ(r.code, 6) << r.out;
    EXPECT_NE(r.out.find("does not exist"), std::string::npos) << r.out;
    auto d = cli("--db " + db_ + " report 1 --pdf " + dir_.string());
    EXPECT_EQ(d.code, 6) << d.out;
    EXPECT_NE(d.out.find("is a folder"), std::string::npos) << d.out;
}

// A report written over the database it reads would destroy every experiment.
TEST_F(ReportInputTest, ReportOverTheDatabaseIsRefusedAndTheDatabaseSurvives) {
    for (const std::string flag : {"--json", "--html", "--pdf", "--csv"}) {
        for (const std::string& target :
             {db_, (dir_ / "." / "runs.db").string(), db_ + "-wal", db_ + "-shm"}) {
            auto r = cli("--db " + db_ + " report 1 " + flag + " " + target);
            EXPECT_EQ(r.code, 6) << flag << " " << target << "\n" << r.out;
            EXPECT_NE(r.out.find("refusing to write"), std::string::npos) << r.out;
            EXPECT_EQ(r.out.find("wrote "), std::string::npos) << r.out;
        }
    }
    auto db = store::Database::open(db_, store::Database::Mode::ReadOnly);
    ASSERT_EQ(db->experiments().size(), 1u);
    EXPECT_EQ(db->experiments().front().name, "empty");
}

TEST_F(ReportInputTest, NoOutputIsAUsageError) {
    auto r = cli("--db " + db_ + " report 1");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("--html"), std::string::npos) << r.out;
}

TEST_F(ReportInputTest, MissingDatabaseExitsFour) {
    auto r = cli("--db " + (dir_ / "none.db").string() + " report 1 --json " +
                 (dir_ / "x.json").string());
    EXPECT_EQ(r.code, 4) << r.out;
}

TEST_F(ReportInputTest, ExperimentWithoutRunsStillReports) {
    const auto html = dir_ / "r.html", json = dir_ / "r.json";
    auto r = cli("--db " + db_ + " report 1 --html " + html.string() + " --json " + json.string());
    EXPECT_EQ(r.code, 0) << r.out;
    auto j = nlohmann::json::parse(slurp(json));
    EXPECT_TRUE(j["verdicts"].empty());
    EXPECT_GT(fs::file_size(html), 1000u);
}
