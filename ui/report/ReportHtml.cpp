#include "ui/report/ReportHtml.h"

#include <QBuffer>
#include <cmath>
#include <cstdio>

#include "core/analysis/Format.h"
#include "core/analysis/IslandCost.h"
#include "core/analysis/LayerNumerics.h"
#include "core/run/NumberFormat.h"
#include "ui/report/HtmlText.h"
#include "ui/report/ReportPlots.h"

namespace ampbench::report {
namespace {

using analysis::formatBytes;
using analysis::formatMs;
using analysis::formatNumber;
using analysis::formatPercent;
using analysis::formatRatio;
using html::escape;

/// Browsers read the <style> block; QTextDocument honours the element and class rules
/// it knows and the table attributes set in html::table.
constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", "Segoe UI", Arial, sans-serif; font-size: 10pt; color: #222222;
       max-width: 980px; margin: 1.2em auto; padding: 0 1em; }
h1 { font-size: 17pt; margin-bottom: 2px; }
h2 { font-size: 13pt; margin-top: 18px; border-bottom: 1px solid #cccccc; color: #1d3557; }
h3 { font-size: 11pt; margin-top: 12px; margin-bottom: 2px; }
table.grid { border-collapse: collapse; margin-top: 4px; margin-bottom: 4px; }
table.grid th, table.grid td { border: 1px solid #c8c8c8; padding: 3px 6px; font-size: 9pt; }
table.grid th { background: #eef1f5; text-align: left; }
.meta { color: #555555; font-size: 9pt; }
.notice { background-color: #fff4e5; color: #5a3600; padding: 6px; }
.caption { color: #555555; font-size: 8.5pt; margin-top: 0; }
.facts { color: #444444; font-size: 9pt; }
pre { background-color: #f4f6f8; padding: 6px; font-size: 8pt; white-space: pre-wrap; }
img { max-width: 100%; }
)";

/// Width of a plot in the PDF, in CSS pixels (1/96 in): A4 less the margins is about 7 in.
constexpr int kPdfImageWidth = 650;

/// A page is narrower than a browser window: smaller table text.
constexpr const char* kPrintStyle = R"(
body { margin: 0; padding: 0; }
table.grid th, table.grid td { font-size: 7pt; }
pre { font-size: 7pt; }
)";

std::string dataUri(const QByteArray& png) {
    return "data:image/png;base64," + png.toBase64().toStdString();
}

std::string header(const ReportContent& c) {
    const auto& a = c.analysis;
    const auto& e = c.data.experiment;
    std::string out = "<h1>AMP Workbench report: " + escape(a.name) + "</h1>\n";
    out += "<p class=\"meta\">experiment " + std::to_string(a.experiment_id) +
           " \xC2\xB7 created " + escape(e.created_at) + " \xC2\xB7 " +
           std::to_string(c.data.runs.size()) + " runs \xC2\xB7 " + "device " +
           escape(a.device.empty() ? "unknown" : a.device) + " \xC2\xB7 baseline <b>" +
           escape(a.baseline) + "</b>";
    if (!c.database_path.empty()) {
        out += " \xC2\xB7 database " + escape(c.database_path);
    }
    if (!c.generated_at.empty()) {
        out += " \xC2\xB7 generated " + escape(c.generated_at);
    }
    out += "</p>\n";
    out += "<p class=\"meta\">trained: " + escape(config::describeWorkload(c.data.spec)) + "</p>\n";
    if (!e.notes.empty()) {
        out += "<p>" + escape(e.notes) + "</p>\n";
    }
    if (!a.incomplete.empty() || !a.warnings.empty()) {
        out +=
            "<table class=\"notice\" width=\"100%\" cellpadding=\"6\"><tr><td "
            "bgcolor=\"#fff4e5\">";
        if (!a.incomplete.empty()) {
            out += "<b>Incomplete runs, left out of this report:</b><br>";
            for (const auto& r : a.incomplete) {
                out += escape(r.describe()) + "<br>";
            }
        }
        for (const auto& w : a.warnings) {
            out += "<b>Note:</b> " + escape(w) + "<br>";
        }
        out += "</td></tr></table>\n";
    }
    if (!a.reproducibility.empty()) {
        out += "<p class=\"meta\">Reproducibility: " + escape(a.reproducibility) + ".</p>\n";
    }
    return out;
}

/// "32.3–46.2 ms", or "950 ms–1.20 s" when the units differ.
std::string msRange(double low, double high) {
    std::string lo = formatMs(low);
    const std::string hi = formatMs(high);
    const std::string unit = " ms";
    if (lo.size() > unit.size() && lo.compare(lo.size() - unit.size(), unit.size(), unit) == 0 &&
        hi.size() > unit.size() && hi.compare(hi.size() - unit.size(), unit.size(), unit) == 0) {
        lo.resize(lo.size() - unit.size());
    }
    return lo + "\xE2\x80\x93" + hi;
}

std::string speedupText(const analysis::Gains& g) {
    std::string text = formatRatio(g.speedup);
    if (std::isfinite(g.speedup_ci.low) && std::isfinite(g.speedup_ci.high)) {
        text += " (" + formatNumber(g.speedup_ci.low, 2) + "\xE2\x80\x93" +
                formatNumber(g.speedup_ci.high, 2) + ")";
    }
    return text;
}

/// The memory ratio, marked where it compares whole processes' resident sets (the
/// verdict's reasons say what that means).
std::string memoryRatioText(const analysis::Gains& g) {
    const std::string ratio = formatRatio(g.memory_ratio);
    return g.process_memory && std::isfinite(g.memory_ratio) ? ratio + " (process RSS)" : ratio;
}

std::string factsText(const analysis::ArmVerdict& v) {
    const auto& f = v.facts;
    std::string text = config::toString(f.precision) + ", K = " + std::to_string(f.accumulation) +
                       ", effective batch " + std::to_string(f.effective_batch) + ", lr " +
                       formatNumber(f.lr, 4);
    if (f.accumulation > 1) {
        text += " (rule " + config::toString(f.lr_rule) + ")";
    }
    text += ", " + std::to_string(v.runs_used) + " run" + (v.runs_used == 1 ? "" : "s") + ", " +
            std::to_string(v.gains.optimizer_steps) + " optimizer steps per run";
    return text;
}

std::string summaryTable(const analysis::ExperimentAnalysis& a) {
    std::vector<std::vector<html::Cell>> rows;
    for (const auto& s : a.arms) {
        std::string acc = formatPercent(s.val_accuracy, 2);
        if (std::isfinite(s.val_accuracy_sd)) {
            acc += " \xC2\xB1" + formatNumber(s.val_accuracy_sd * 100.0, 2);
        }
        std::string runs = std::to_string(s.finished);
        if (s.finished != s.runs) {
            runs += "/" + std::to_string(s.runs);
        }
        rows.push_back(html::cells(
            {s.arm, runs, formatMs(s.median_step_ms), msRange(s.p10_step_ms, s.p90_step_ms),
             formatNumber(s.samples_per_s, 0), formatBytes(s.peak_mem), acc,
             std::to_string(s.skipped), formatRatio(s.speedup), formatRatio(s.memory_ratio)}));
    }
    return html::table({"arm", "runs", "median step", "p10\xE2\x80\x93p90", "samples/s",
                        a.memory_label, "val acc", "skipped", "speed-up", "memory"},
                       rows, {1, 2, 3, 4, 5, 6, 7, 8, 9}, true,
                       {11, 6, 9, 12, 10, 10, 12, 9, 11, 10});
}

std::string gainsTable(const analysis::ExperimentAnalysis& a) {
    bool searched = false;  // max-batch columns only when find-batch results exist
    for (const auto& v : a.verdicts) {
        searched = searched || v.gains.max_batch > 0;
    }
    std::vector<std::vector<html::Cell>> rows;
    for (const auto& v : a.verdicts) {
        const auto& g = v.gains;
        std::vector<std::string> cells{v.arm,
                                       formatNumber(g.ms_per_sample, 3) + " ms",
                                       speedupText(g),
                                       formatRatio(g.throughput_ratio),
                                       formatRatio(g.memory_ratio),
                                       formatPercent(v.health.data_wait_share)};
        if (searched) {
            cells.push_back(g.max_batch > 0 ? std::to_string(g.max_batch) : "\xE2\x80\x93");
            cells.push_back(formatRatio(g.max_batch_ratio));
        }
        rows.push_back(html::cells(cells));
    }
    std::vector<std::string> header{"arm",        "time per sample", "speed-up (95% CI)",
                                    "throughput", "memory",          "data wait"};
    if (searched) {
        header.push_back("max batch");
        header.push_back("max batch ratio");
    }
    return html::table(header, rows, {1, 2, 3, 4, 5, 6, 7});
}

std::string runsTable(const analysis::ExperimentAnalysis& a) {
    std::vector<std::vector<html::Cell>> rows;
    for (const auto& r : a.runs) {
        rows.push_back(html::cells(
            {std::to_string(r.run_id), r.arm, std::to_string(r.seed), run::toString(r.status),
             std::to_string(r.steps), formatMs(r.median_step_ms), formatNumber(r.samples_per_s, 0),
             formatPercent(r.final_val_accuracy, 2), formatNumber(r.final_train_loss, 4),
             std::to_string(r.skipped), analysis::formatDuration(r.wall_s)}));
    }
    return html::table({"run", "arm", "seed", "status", "steps", "median step", "samples/s",
                        "val acc", "train loss", "skipped", "wall"},
                       rows, {0, 2, 4, 5, 6, 7, 8, 9, 10}, true,
                       {5, 16, 6, 9, 7, 10, 10, 9, 11, 10, 7});
}

std::string plotsHtml(const ReportContent& c, ImageMode mode) {
    std::string out;
    for (const auto& p : c.plots) {
        // The numerics' go with their run's tables, the advice's with the advice.
        if (!p.id.startsWith("numerics-") && p.id != kAdvicePlotId) {
            out += imageHtml(p, mode);
        }
    }
    return out;
}

}  // namespace

/// One plot: the image (embedded, or a resource of the PDF) and its caption.
std::string imageHtml(const PlotImage& p, ImageMode mode) {
    if (p.image.isNull()) {  // a plot with nothing to show says so in its caption alone
        return "<p class=\"caption\">" + escape(p.caption.toStdString()) + "</p>\n";
    }
    const std::string src = mode == ImageMode::Embedded ? dataUri(pngBytes(p.image))
                                                        : plotResourceName(p.id).toStdString();
    // The width is in CSS pixels; the image carries more pixels for print.
    const int width = p.display_width > 0 ? p.display_width : p.image.width();
    // The title is drawn into the image. In the PDF the width must fit A4's text width.
    const int shown = mode == ImageMode::Embedded ? std::min(width, 900) : kPdfImageWidth;
    // The height is given too: Qt derives a missing height from the aspect ratio
    // on the GUI thread but takes the image's pixel height on any other thread,
    // which stretched every plot of a PDF written in the background.
    const int height = p.image.width() > 0
                           ? static_cast<int>(std::lround(static_cast<double>(shown) *
                                                          p.image.height() / p.image.width()))
                           : shown;
    return "<p><img src=\"" + src + "\" width=\"" + std::to_string(shown) + "\" height=\"" +
           std::to_string(height) + "\" alt=\"" + escape(p.title.toStdString()) + "\"></p>\n" +
           "<p class=\"caption\">" + escape(p.caption.toStdString()) + "</p>\n";
}

QString plotResourceName(const QString& id) {
    return "ampbench-plot:" + id;
}

QByteArray pngBytes(const QImage& image) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    return bytes;
}

std::string verdictTableHtml(const analysis::ExperimentAnalysis& a) {
    std::vector<std::vector<html::Cell>> rows;
    for (const auto& v : a.verdicts) {
        const std::string verdict = analysis::toString(v.verdict);
        rows.push_back({{escape(v.arm), {}, false},
                        {html::badge(verdict), "white-space:nowrap", false},
                        {escape(analysis::describe(v.summary)), {}, false},
                        {escape(speedupText(v.gains)), {}, false},
                        {escape(memoryRatioText(v.gains)), {}, false}});
    }
    return html::table({"arm", "verdict", "because", "speed-up (95% CI)", "memory"}, rows, {3, 4});
}

std::string verdictNarrowTableHtml(const analysis::ExperimentAnalysis& a) {
    // Each arm's "because" on a row of its own under its figures: beside them it got
    // what a narrow panel left (some 40 px) and broke words letter by letter. The
    // columns size to their content: no long text competes for the width now.
    struct Column {
        const char* name;
        bool right;
    };
    // The arm's name and its verdict share a cell, so they go on two lines (not
    // broken letters) where the panel is narrow.
    const Column columns[] = {
        {"arm \xC2\xB7 verdict", false}, {"speed-up (95% CI)", true}, {"memory", true}};
    std::string out = std::string(
                          "<table class=\"grid\" width=\"100%\" border=\"1\" cellspacing=\"0\" "
                          "cellpadding=\"3\" style=\"border-collapse:collapse; ") +
                      html::kTableBorder + "\">\n<thead><tr>";
    for (const Column& c : columns) {
        out += std::string("<th ") + html::kHeaderCell +
               (c.right ? " align=\"right\"" : " align=\"left\"") + ">" + escape(c.name) + "</th>";
    }
    out += "</tr></thead>\n";
    auto unbroken = [](std::string text) {
        // "1.22× (0.96–1.55)" breaks before its interval only: a word joiner after the
        // en dash, a no-break space in "499 MiB".
        const std::string dash = "\xE2\x80\x93";
        for (size_t at = text.find(dash); at != std::string::npos; at = text.find(dash, at)) {
            at += dash.size();
            text.insert(at, "&#8288;");
        }
        for (size_t at = text.find(' '); at != std::string::npos; at = text.find(' ', at + 1)) {
            if (text.compare(at + 1, 1, "(") != 0) {
                text.replace(at, 1, "&nbsp;");
            }
        }
        return text;
    };
    auto breakable = [](const std::string& arm) {
        // "amp-accum4-checkpointed" may go on two lines after a dash or underscore,
        // never inside a word (QTextDocument keeps such a name whole otherwise).
        std::string out;
        for (char c : arm) {
            out += c;
            if (c == '-' || c == '_') {
                out += "&#8203;";
            }
        }
        return out;
    };
    for (const auto& v : a.verdicts) {
        out += "<tr><td>" + breakable(escape(v.arm)) + " " +
               html::badge(analysis::toString(v.verdict)) + "</td><td align=\"right\">" +
               unbroken(escape(speedupText(v.gains))) + "</td><td align=\"right\">" +
               unbroken(escape(memoryRatioText(v.gains))) + "</td></tr>\n";
        out += "<tr><td colspan=\"3\">" + escape(analysis::describe(v.summary)) + "</td></tr>\n";
    }
    return out + "</table>\n";
}

std::string verdictDetailsHtml(const analysis::ExperimentAnalysis& a) {
    std::string out;
    for (const auto& v : a.verdicts) {
        out += "<h3>" + escape(v.arm) + " &nbsp;" + html::badge(analysis::toString(v.verdict)) +
               "</h3>\n";
        out += "<p class=\"facts\">" + escape(factsText(v)) + "</p>\n";
        out += "<p>" + escape(analysis::describe(v.summary)) + ".</p>\n";
        if (!v.reasons.empty()) {
            out += "<ul>";
            for (const auto& r : v.reasons) {
                out += "<li>" + escape(analysis::describe(r)) + "</li>";
            }
            out += "</ul>\n";
        }
        if (!v.next_checks.empty()) {
            out += "<p><b>Next to check</b></p><ul>";
            for (const auto& n : v.next_checks) {
                out += "<li>" + escape(analysis::describe(n)) + "</li>";
            }
            out += "</ul>\n";
        }
    }
    return out;
}

/// What each FP32 island arm costs against its plain AMP arm; nothing without islands.
static std::string islandsHtml(const ReportContent& c) {
    const auto costs = analysis::islandCosts(c.data.spec, c.analysis);
    if (costs.empty()) {
        return "";
    }
    std::vector<std::vector<html::Cell>> rows;
    for (const auto& i : costs) {
        rows.push_back(html::cells({i.arm, i.modules, i.plain.empty() ? "(no plain arm)" : i.plain,
                                    formatMs(i.median_step_ms), formatMs(i.plain_median_step_ms),
                                    formatRatio(i.step_ratio), formatBytes(i.peak_mem),
                                    formatRatio(i.memory_ratio)}));
    }
    return "<h2>FP32 islands</h2>\n<p class=\"meta\">Each arm with modules run in fp32 "
           "(autocast off) against the arm that differs from it only by them: time per "
           "sample and peak memory as ratios to that arm's.</p>\n" +
           html::table({"arm", "fp32 modules", "against", "median step", "against: median step",
                        "time/sample", "peak memory", "memory"},
                       rows, {3, 4, 5, 6, 7});
}

/// Each run's worst layers (per-layer numerics) and the heatmaps rendered for it, or
/// nothing when no run recorded them.
static std::string numericsHtml(const ReportContent& c, ImageMode mode) {
    const auto runs = analysis::experimentNumerics(c.data);
    if (runs.empty()) {
        return "";
    }
    std::string out =
        "<h2>Per-layer numerics</h2>\n<p class=\"meta\">Each tensor against the number "
        "format it is held in (the <i>format</i> column): gradients as the arm held them "
        "(unscaled \xC3\x97 the loss scale in use), module outputs in the dtype autocast "
        "gave them, and the tensors an FP8 layer casts at their scale. An fp32 arm is "
        "measured against fp16 as the reference: would its tensors fit in fp16? Given are "
        "the share of values under the format's smallest subnormal (flushed to zero) and "
        "smallest normal, the share past its largest value (saturated: clipped or "
        "overflowed), and the headroom to its largest value, log<sub>2</sub>(largest / "
        "abs-max).</p>\n";
    for (const auto& rn : runs) {
        auto label = [](const analysis::LayerNumerics& l) {
            return l.name + analysis::kindSuffix(l.kind);
        };
        auto largest = [](const std::string& format) {
            const auto f = run::numberFormatNamed(format);
            char buf[32];
            std::snprintf(buf, sizeof buf, "%g", f ? f->largest : 0.0);
            return f ? format + "'s largest, " + buf : format;
        };
        out += "<h3>" + escape(rn.arm) + ", seed " + std::to_string(rn.seed) + " (run " +
               std::to_string(rn.run_id) + "): " + std::to_string(rn.summary.layers.size()) +
               " tensors at " + std::to_string(rn.summary.steps.size()) + " steps</h3>\n";
        for (const auto metric :
             {analysis::NumericsMetric::UnderflowSubnormal, analysis::NumericsMetric::Headroom}) {
            const QString id = numericsPlotId(rn.run_id, metric);
            for (const auto& p : c.plots) {
                if (p.id == id) {
                    out += imageHtml(p, mode);
                }
            }
        }
        for (const auto& p : c.plots) {
            if (p.id == scalesPlotId(rn.run_id)) {
                out += "<h4>FP8 scale history</h4>\n" + imageHtml(p, mode);
            }
        }
        std::vector<std::vector<html::Cell>> under;
        for (const auto& l : analysis::worstUnderflow(rn.summary, 8)) {
            under.push_back(html::cells(
                {label(l), l.format, formatPercent(l.max_underflow_subnormal, 2),
                 formatPercent(l.mean_underflow_subnormal, 2),
                 formatPercent(l.max_underflow_normal, 2), formatPercent(l.max_saturated, 2)}));
        }
        if (!under.empty()) {
            out += html::table({"most underflow", "format", "< subnormal worst", "< subnormal mean",
                                "< normal worst", "saturated worst"},
                               under, {2, 3, 4, 5});
        }
        std::vector<std::vector<html::Cell>> head;
        for (const auto& l : analysis::leastHeadroom(rn.summary, 8)) {
            head.push_back(html::cells(
                {label(l), largest(l.format), analysis::formatHeadroom(l.min_headroom_log2),
                 std::to_string(l.min_headroom_step), formatPercent(l.max_saturated, 2),
                 std::to_string(l.nonfinite_steps)}));
        }
        out += html::table({"least headroom", "headroom to", "log2(largest/absmax)", "at step",
                            "saturated worst", "non-finite steps"},
                           head, {2, 3, 4, 5});
        std::vector<std::vector<html::Cell>> casts;
        for (const auto& l : analysis::castTensors(rn.summary)) {
            char scale[32], amax[32];
            std::snprintf(scale, sizeof scale, "%g", l.last_scale);
            std::snprintf(amax, sizeof amax, "%.4g", l.max_absmax);
            casts.push_back(
                html::cells({l.name, l.format, scale, amax, formatPercent(l.max_saturated, 2),
                             formatPercent(l.max_underflow_subnormal, 2),
                             formatPercent(l.max_underflow_normal, 2)}));
        }
        if (!casts.empty()) {
            out += html::table({"FP8 cast", "format", "scale", "abs-max scaled", "saturated worst",
                                "< subnormal worst", "< normal worst"},
                               casts, {2, 3, 4, 5, 6});
        }
    }
    return out;
}

std::string verdictHtml(const analysis::ExperimentAnalysis& a) {
    return verdictTableHtml(a) + verdictDetailsHtml(a);
}

std::string reportHtml(const ReportContent& c, ImageMode mode) {
    const auto& a = c.analysis;
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
                      escape("AMP Workbench report: " + a.name) + "</title>\n<style>" + kStyle +
                      (mode == ImageMode::Resource ? kPrintStyle : "") +
                      "</style></head>\n<body>\n";
    out += header(c);
    out += "<h2>Verdict</h2>\n";
    out += "<p class=\"meta\">Each arm against " + escape(a.baseline) +
           ": curves on a common axis of samples seen, judged in units of " + escape(a.baseline) +
           "'s seed-noise band (mean \xC2\xB1 2\xCF\x83); the final validation metric against the "
           "seed spread (Welch's t-test with two or more seeds per arm); trend agreement; skipped "
           "steps and loss-scale health; time spent waiting for data.</p>\n";
    out += verdictTableHtml(a);
    out += adviceHtml(c, mode);
    out += "<h2>Summary</h2>\n" + summaryTable(a);
    out += "<p class=\"meta\">Medians over timed steps (warm-up excluded); speed-up = " +
           escape(a.baseline) +
           "'s time per sample \xC3\xB7 the arm's (each run's median, mean over runs: the same "
           "figure as in the verdict); memory = peak \xC3\xB7 " +
           escape(a.baseline) + "'s.</p>\n";
    out += "<h2>Gains</h2>\n" + gainsTable(a);
    out += "<p class=\"meta\">Speed-up = " + escape(a.baseline) +
           "'s time per sample \xC3\xB7 the arm's (each run's median, mean over runs), with a "
           "95% interval across runs (Welch's t on the log time per sample) where both arms "
           "have two or more runs, else a bootstrap over the per-step times of one run (1000 "
           "resamples, fixed seed; run-to-run variation is not in it); throughput = samples/s "
           "\xC3\xB7 " +
           escape(a.baseline) +
           "'s; data wait = time waiting for the next batch \xC3\xB7 step "
           "time (over 20%: input-bound).</p>\n";
    out += "<h2>Why, arm by arm</h2>\n" + verdictDetailsHtml(a);
    out += islandsHtml(c);
    out += numericsHtml(c, mode);
    // On paper the plots and the run details each start a page: no heading left alone at a
    // page's foot (QTextDocument honours page-break-before, not page-break-after: avoid).
    const std::string new_page =
        mode == ImageMode::Resource ? " style=\"page-break-before: always\"" : "";
    out += "<h2" + new_page + ">Plots</h2>\n" + plotsHtml(c, mode);
    out += "<h2" + new_page + ">Runs</h2>\n" + runsTable(a);
    out += specSectionsHtml(c, mode);
    out += "</body></html>\n";
    return out;
}

}  // namespace ampbench::report
