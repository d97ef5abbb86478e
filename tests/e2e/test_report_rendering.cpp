// In process: the report's plots and pages drawn from recorded figures (no training),
// and the verdict panel; the QApplication they need is made once for the binary.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QApplication>
#include <QByteArray>
#include <QImage>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
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
    if (test::shell("pdftoppm -r 24 -gray -png " + file.string() + " " + (dir / "page").string())
            .code != 0) {
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
