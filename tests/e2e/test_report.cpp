// End to end: a tiny finished experiment trained by ampbench-cli, then
// `ampbench-cli report`, and every output checked against the database.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <qcustomplot.h>
#include <QApplication>
#include <QByteArray>
#include <QImage>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "Shell.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/Format.h"
#include "core/config/DataPaths.h"
#include "core/store/Database.h"
#include "ui/report/JudgementPlots.h"
#include "ui/report/ReportHtml.h"
#include "ui/report/ReportPlots.h"
#include "ui/report/ReportWriter.h"
#include "ui/runs/VerdictPanel.h"

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

namespace {

std::unique_ptr<QApplication>& qtApp() {
    static std::unique_ptr<QApplication> app;
    return app;
}

/// One QApplication for the in-process tests (QCustomPlot and widgets need it), made on
/// first use and destroyed after the last test: destroying it from exit handlers crashes.
void ensureApp() {
    if (!qtApp()) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
        static int argc = 1;
        static char name[] = "test_report";
        static char* argv[] = {name, nullptr};
        qtApp() = std::make_unique<QApplication>(argc, argv);
    }
}

class QtAppEnvironment : public ::testing::Environment {
  public:
    void TearDown() override { qtApp().reset(); }
};
const auto* const kQtAppEnvironment = ::testing::AddGlobalTestEnvironment(new QtAppEnvironment);

/// An fp32 baseline and an fp16 arm whose scaler skipped steps (one with an inf loss),
/// as a CUDA run records them; no training needed.
analysis::ExperimentData fp16Experiment() {
    analysis::ExperimentData d;
    d.experiment.id = 1;
    d.experiment.name = "fp16 synthetic";
    d.experiment.spec_json = R"({"name":"fp16 synthetic","micro_batch":32})";
    int64_t id = 1;
    for (const char* arm : {"fp32", "amp-fp16"}) {
        for (uint64_t seed : {1, 2, 3}) {
            analysis::RunData r;
            r.row.id = id++;
            r.row.arm = arm;
            r.row.seed = seed;
            r.row.status = run::RunStatus::Finished;
            r.row.spec_json =
                std::string(R"({"name":")") + arm + R"(","precision":")" +
                (std::string(arm) == "fp32" ? "fp32" : "amp-fp16") +
                R"(","accumulation":1,"lr_rule":"linear","lr":0.1,"effective_batch":32})";
            r.row.env_json = R"({"device":"cuda:0","device_name":"NVIDIA H200","hostname":"h"})";
            double scale = std::string(arm) == "fp32" ? 1.0 : 65536.0;
            for (int64_t i = 1; i <= 300; ++i) {
                run::StepRecord st;
                st.step = i;
                st.samples = i * 32;
                st.loss = 2.3 * std::exp(-static_cast<double>(i) / 80.0) + 0.2 + 0.01 * seed;
                st.loss_scale = scale;
                st.step_ms =
                    std::string(arm) == "fp32" ? 10.0 + 0.01 * (i % 7) : 5.0 + 0.01 * (i % 5);
                st.timed = i > 5;
                st.mem_peak = (std::string(arm) == "fp32" ? 800 : 500) << 20;
                if (scale > 1 && (i <= 3 || i == 150 + static_cast<int64_t>(seed))) {
                    st.skipped = true;
                    st.loss = i == 151 ? std::numeric_limits<double>::infinity() : st.loss;
                    scale /= 2;
                    r.events.push_back({i, run::EventKind::SkippedStep, "skipped", scale});
                } else if (scale > 1 && i % 50 == 0) {
                    scale *= 2;
                }
                r.steps.push_back(st);
            }
            r.evals.push_back({300, 300 * 32, 0.4, 0.9 + 0.001 * seed, 1.0});
            d.runs.push_back(std::move(r));
        }
    }
    return d;
}

}  // namespace

/// Pages of a PDF: its "/Type /Page" objects (not "/Pages").
int pageCount(const QByteArray& pdf) {
    int pages = 0;
    for (qsizetype at = pdf.indexOf("/Type /Page"); at >= 0;
         at = pdf.indexOf("/Type /Page", at + 1)) {
        pages += pdf.mid(at + 11, 1) != "s" ? 1 : 0;
    }
    return pages;
}

TEST(ReportRendering, Fp16RunsWithSkippedStepsAndAnInfiniteLoss) {
    ensureApp();
    report::ReportContent c;
    c.data = fp16Experiment();
    c.analysis = analysis::analyzeExperiment(c.data);
    ASSERT_EQ(c.analysis.verdicts.size(), 2u);
    const auto& fp16 = c.analysis.verdicts[1];
    EXPECT_EQ(fp16.health.skipped, 12);
    EXPECT_EQ(fp16.health.early_skipped, 9);
    EXPECT_EQ(config::toString(fp16.facts.precision), "amp-fp16");
    EXPECT_NEAR(fp16.gains.speedup, 2.0, 0.05);
    EXPECT_EQ(c.analysis.memory_label, "peak allocated");
    c.plots = report::renderPlots(c);
    ASSERT_EQ(c.plots.size(), 6u);  // the baseline's two seeds give the deviation plot its band
    EXPECT_EQ(c.plots[1].id, "deviation");
    for (const auto& p : c.plots) {
        EXPECT_FALSE(p.image.isNull()) << p.id.toStdString();
    }
    EXPECT_NE(c.plots.back().caption.toStdString().find("red crosses"), std::string::npos);
    const QByteArray pdf = report::renderPdf(c);
    EXPECT_TRUE(pdf.startsWith("%PDF")) << "a PDF";
    EXPECT_GT(pdf.size(), 20000);
    // The GUI writes its PDF on a worker thread; the plots must keep their shape there
    // (they were stretched about 2.6x and the PDF ran to half again as many pages).
    QByteArray background;
    std::thread worker([&] { background = report::renderPdf(c); });
    worker.join();
    EXPECT_EQ(pageCount(background), pageCount(pdf));
    EXPECT_GT(pageCount(pdf), 0);
    const std::string html = report::reportHtml(c, report::ImageMode::Embedded);
    EXPECT_NE(html.find("12 skipped steps"), std::string::npos);
    if (const char* dump = std::getenv("AMPBENCH_REPORT_DUMP")) {  // for looking at it by eye
        std::ofstream(std::string(dump) + ".pdf", std::ios::binary) << pdf.toStdString();
        std::ofstream(std::string(dump) + ".html") << html;
    }
}

// Without loss scaling the scale is 1 throughout: the report says so in a line
// instead of spending a page on a flat plot.
TEST(ReportRendering, AFlatLossScaleIsALineNotAPage) {
    ensureApp();
    report::ReportContent c;
    c.data = fp16Experiment();
    for (auto& r : c.data.runs) {
        for (auto& s : r.steps) {
            s.loss_scale = 1;
            s.skipped = false;
        }
    }
    c.analysis = analysis::analyzeExperiment(c.data);
    c.plots = report::renderPlots(c);
    ASSERT_FALSE(c.plots.empty());
    const auto& scale = c.plots.back();
    EXPECT_EQ(scale.id, "loss-scale");
    EXPECT_TRUE(scale.image.isNull());
    EXPECT_NE(scale.caption.toStdString().find("constant at 1"), std::string::npos);
    const std::string html = report::reportHtml(c, report::ImageMode::Embedded);
    EXPECT_NE(html.find("Loss scale: constant at 1 in every run"), std::string::npos);
    size_t images = 0;
    for (size_t at = html.find("<img"); at != std::string::npos; at = html.find("<img", at + 1))
        ++images;
    EXPECT_EQ(images, c.plots.size() - 1);  // every plot but the flat one
    EXPECT_TRUE(report::renderPdf(c).startsWith("%PDF"));
}

namespace {

/// The smoke preset's shape on the CPU: fp32, amp and amp-accum4 (bf16, no loss
/// scaler), two seeds each, evaluated once at the end; no training needed.
analysis::ExperimentData cpuSmokeExperiment() {
    analysis::ExperimentData d;
    d.experiment.id = 1;
    d.experiment.name = "fashion-mnist-smoke";
    d.experiment.spec_json = R"({"name":"fashion-mnist-smoke","micro_batch":8})";
    int64_t id = 1;
    int index = 0;
    for (const char* arm : {"fp32", "amp", "amp-accum4"}) {
        const int k = std::string(arm) == "amp-accum4" ? 4 : 1;
        for (uint64_t seed : {1, 2}) {
            analysis::RunData r;
            r.row.id = id++;
            r.row.arm = arm;
            r.row.arm_index = index;
            r.row.seed = seed;
            r.row.status = run::RunStatus::Finished;
            r.row.spec_json =
                std::string(R"({"name":")") + arm + R"(","precision":")" +
                (index == 0 ? "fp32" : "amp-bf16") + R"(","accumulation":)" + std::to_string(k) +
                R"(,"lr_rule":"linear","lr":0.05,"effective_batch":)" + std::to_string(8 * k) + "}";
            r.row.env_json = R"({"device":"cpu","device_name":"cpu","hostname":"h"})";
            for (int64_t i = 1; i <= 200 / k; ++i) {
                run::StepRecord st;
                st.step = i;
                st.samples = i * 8 * k;
                st.loss = 2.3 * std::exp(-static_cast<double>(st.samples) / 900.0) + 1.2 +
                          0.02 * static_cast<double>(seed) + 0.05 * std::sin(0.7 * i);
                st.loss_scale = 1;
                st.step_ms = (index == 0 ? 80.0 : 70.0) * k + 3.0 * (i % 5);
                st.timed = i > 5;
                st.mem_peak = st.mem_allocated = int64_t{30 + 10 * index} << 20;
                r.steps.push_back(st);
            }
            r.evals.push_back({200 / k, 1600, 1.3, 0.52 + 0.01 * seed, 1.0});
            d.runs.push_back(std::move(r));
        }
        ++index;
    }
    return d;
}

/// How far down each page of `pdf` something is drawn above its footer, as a share of
/// the page's height (poppler's pdftoppm draws the pages; empty when it cannot).
std::vector<double> pageFill(const QByteArray& pdf, const fs::path& dir) {
    const fs::path file = dir / "fill.pdf";
    std::ofstream(file, std::ios::binary) << pdf.toStdString();
    std::vector<double> fill;
    if (shell("pdftoppm -r 24 -gray -png " + file.string() + " " + (dir / "page").string()).code !=
        0) {
        return fill;
    }
    for (int page = 1;; ++page) {
        QImage image;
        for (const char* digits : {"%d", "%02d", "%03d"}) {
            char name[32];
            std::snprintf(name, sizeof name, digits, page);
            if (image.load(QString::fromStdString(
                    (dir / ("page-" + std::string(name) + ".png")).string()))) {
                break;
            }
        }
        if (image.isNull()) {
            return fill;
        }
        // The footer's line is the page's last 6 %.
        const int body = image.height() * 94 / 100;
        int lowest = 0;
        for (int y = 0; y < body; ++y) {
            for (int x = 0; x < image.width(); ++x) {
                if (qGray(image.pixel(x, y)) < 200) {
                    lowest = y;
                    break;
                }
            }
        }
        fill.push_back(static_cast<double>(lowest) / image.height());
    }
}

}  // namespace

// No page of the PDF holds a line and nothing else: the loss scale's one-line note
// spilled onto a page of its own (page 5 of 8) before the Runs section's page break.
TEST(ReportRendering, NoPageOfThePdfHoldsALineAlone) {
    ensureApp();
    report::ReportContent c;
    c.data = cpuSmokeExperiment();
    c.analysis = analysis::analyzeExperiment(c.data);
    c.plots = report::renderPlots(c);
    ASSERT_TRUE(c.plots.back().image.isNull()) << "the flat loss scale is a line of text";
    const fs::path dir = fs::temp_directory_path() / ("ampbench-fill-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::vector<double> fill = pageFill(report::renderPdf(c), dir);
    fs::remove_all(dir);
    ASSERT_GE(fill.size(), 3u) << "pdftoppm (poppler-utils) draws the pages";
    for (size_t page = 0; page + 1 < fill.size(); ++page) {
        EXPECT_GT(fill[page], 0.25)
            << "page " << page + 1 << " of " << fill.size() << " is drawn only to "
            << fill[page] * 100 << "% of its height";
    }
}

// An fp8 arm whose casts were recorded gets its scale history in the numerics section
// (HTML and PDF); an arm whose numerics hold no cast gets none.
TEST(ReportRendering, AnFp8ArmWithCastsHasItsScaleHistoryAndOthersNone) {
    ensureApp();
    report::ReportContent c;
    c.data = fp16Experiment();
    for (auto& r : c.data.runs) {
        if (r.row.arm == "amp-fp16") {
            r.row.arm = "fp8";
            const std::string from = R"("precision":"amp-fp16")";
            r.row.spec_json.replace(r.row.spec_json.find(from), from.size(),
                                    R"("precision":"fp8")");
        }
    }
    auto numerics = [](int64_t step, const std::string& name, run::NumericsKind kind, double scale,
                       double saturated) {
        run::NumericsRecord n;
        n.step = step;
        n.kind = kind;
        n.name = name;
        n.format = kind == run::NumericsKind::Cast ? "e4m3" : "fp16";
        n.scale = scale;
        n.saturated = saturated;
        n.absmax = 100;
        n.headroom_log2 = 2;
        n.numel = 64;
        n.dtype = "float32";
        return n;
    };
    analysis::RunData& fp32 = c.data.runs[0];
    analysis::RunData& fp8 = c.data.runs[3];
    ASSERT_EQ(fp8.row.arm, "fp8");
    for (int64_t step = 50; step <= 300; step += 50) {
        fp32.numerics.push_back(numerics(step, "head.weight", run::NumericsKind::Grad, 1, 0));
        for (const char* role : {"input", "weight", "grad_output"}) {
            fp8.numerics.push_back(numerics(
                step, std::string("blocks.0.fc:") + role, run::NumericsKind::Cast,
                std::exp2(step / 50.0), step == 300 && role == std::string("input") ? 0.02 : 0));
        }
    }
    c.analysis = analysis::analyzeExperiment(c.data);
    c.plots = report::renderPlots(c);
    const QString id = report::scalesPlotId(fp8.row.id);
    const report::PlotImage* scales = nullptr;
    for (const auto& p : c.plots) {
        EXPECT_NE(p.id, report::scalesPlotId(fp32.row.id)) << "fp32 recorded no cast";
        if (p.id == id) {
            scales = &p;
        }
    }
    ASSERT_TRUE(scales) << "the fp8 arm's scale history is rendered";
    EXPECT_FALSE(scales->image.isNull());
    const std::string caption = scales->caption.toStdString();
    EXPECT_NE(caption.find("3 cast tensors (1 input, 1 weight, 1 grad_output) at 6 steps"),
              std::string::npos)
        << caption;
    EXPECT_NE(caption.find("1 saturated: blocks.0.fc:input (e4m3, worst 2.00%, 1 step, first "
                           "at step 300)"),
              std::string::npos)
        << caption;
    const std::string html = report::reportHtml(c, report::ImageMode::Embedded);
    const size_t fp32_section = html.find("<h3>fp32, seed 1");
    const size_t fp8_section = html.find("<h3>fp8, seed 1");
    const size_t history = html.find("<h4>FP8 scale history</h4>");
    ASSERT_NE(fp32_section, std::string::npos);
    ASSERT_NE(fp8_section, std::string::npos);
    ASSERT_NE(history, std::string::npos);
    EXPECT_GT(history, fp8_section) << "the figure sits with the fp8 run's tables";
    EXPECT_EQ(html.find("<h4>FP8 scale history</h4>", history + 1), std::string::npos)
        << "one figure, for the one run with casts";
    EXPECT_NE(html.find("alt=\"fp8, seed 1: FP8 per-tensor scales\""), std::string::npos);
    EXPECT_TRUE(report::renderPdf(c).startsWith("%PDF"));
    if (const char* dump = std::getenv("AMPBENCH_SCALES_DUMP")) {  // for looking at it by eye
        scales->image.save(QString::fromUtf8(dump));
    }

    // Without casts: the numerics section, no scale history.
    fp8.numerics.clear();
    c.plots = report::renderPlots(c);
    for (const auto& p : c.plots) {
        EXPECT_FALSE(p.id.endsWith("-scales")) << p.id.toStdString();
    }
    const std::string plain = report::reportHtml(c, report::ImageMode::Embedded);
    EXPECT_NE(plain.find("<h2>Per-layer numerics</h2>"), std::string::npos);
    EXPECT_EQ(plain.find("FP8 scale history"), std::string::npos);
}

TEST(VerdictPanel, ShowsEveryArmWithItsVerdict) {
    ensureApp();
    analysis::ExperimentAnalysis a;
    a.baseline = "fp32";
    analysis::ArmVerdict base, amp;
    base.arm = "fp32";
    base.verdict = analysis::Verdict::Baseline;
    amp.arm = "amp";
    amp.verdict = analysis::Verdict::WithinNoise;
    using K = analysis::FindingKey;
    amp.summary = {
        analysis::FindingCode::WithinSeedNoise, {{K::Tail, 0.8}}, {{K::Baseline, "fp32"}}};
    amp.reasons = {{analysis::FindingCode::TrendAgreement, {{K::R, 0.98}}, {}}};
    amp.next_checks = {{analysis::FindingCode::InputBound, {{K::WaitShare, 0.4}}, {}}};
    a.verdicts = {base, amp};
    a.incomplete.push_back({7, "amp", 2, run::RunStatus::Interrupted, 20, 48});
    ui::VerdictPanel panel;
    panel.setAnalysis(a);
    const std::string shown = panel.html().toStdString();
    for (const char* text : {"fp32", "baseline", "within noise", "trend agreement r = 0.98",
                             "by about as much as fp32's own seeds do", "Input-bound",
                             "run 7 (amp, seed 2): interrupted at step 20 of 48"}) {
        EXPECT_NE(shown.find(text), std::string::npos) << text;
    }
    panel.clear("Pick runs of one experiment");
    EXPECT_NE(panel.html().toStdString().find("Pick runs"), std::string::npos);
}

// A short run evaluated twice: the validation plot shows both evaluations on an axis
// of samples a run can have, not a sliver around the last one (3071.96-3072.02).
TEST(ReportRendering, AValidationPlotOfTwoEvaluationsShowsBothOnASensibleRange) {
    ensureApp();
    for (const bool flat : {false, true}) {
        auto d = fp16Experiment();
        for (auto& r : d.runs) {
            const double acc = flat ? 0.5 : 0.8 + 0.001 * static_cast<double>(r.row.seed);
            r.evals = {{150, 150 * 32, 0.6, flat ? 0.5 : acc - 0.1, 1.0},
                       {300, 300 * 32, 0.4, acc, 2.0}};
        }
        const auto a = analysis::analyzeExperiment(d);
        ASSERT_EQ(a.validation_metric, "val_accuracy");
        QCustomPlot plot;
        ASSERT_TRUE(report::drawValidation(plot, a, {}));
        const QCPRange x = plot.xAxis->range(), y = plot.yAxis->range();
        EXPECT_GE(x.lower, 0.0) << flat;
        EXPECT_TRUE(x.contains(150 * 32) && x.contains(300 * 32))
            << flat << ": " << x.lower << " to " << x.upper;
        EXPECT_GT(y.size(), 0.5) << flat << ": " << y.lower << " to " << y.upper;
        EXPECT_TRUE(y.contains(flat ? 50.0 : 80.2)) << y.lower << " to " << y.upper;
    }
}
