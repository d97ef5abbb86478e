// The report's advice section: what analysis/Advice.h read from an advice's experiment,
// in the words AdviceText.cpp writes for the CLI too, with the chart ReportPlots drew.
#include "core/analysis/Advice.h"
#include "ui/report/HtmlText.h"
#include "ui/report/ReportHtml.h"
#include "ui/report/ReportPlots.h"

namespace ampbench::report {

std::string adviceHtml(const ReportContent& c, ImageMode mode) {
    if (!c.advice) {
        return {};
    }
    const analysis::Advice& a = *c.advice;
    using html::escape;
    std::string out = "<h2>Advice: which precision to train with</h2>\n";
    out += "<p><b>Recommendation:</b> " + escape(analysis::recommendationText(a)) + "</p>\n";
    std::vector<std::vector<html::Cell>> rows;
    for (const auto& cells : analysis::adviceCells(a)) {
        rows.push_back(html::cells(cells));
    }
    out += html::table(
        analysis::adviceHeader(a), rows,
        {analysis::kAdviceNumericColumns.begin(), analysis::kAdviceNumericColumns.end()});
    std::string reasons;
    for (const auto& r : a.rows) {
        if (const std::string why = analysis::reasonText(r, a.baseline); !why.empty()) {
            reasons +=
                "<li>" + escape(r.f.arm + ", " + analysis::statusText(r) + ": " + why) + "</li>\n";
        }
    }
    for (const auto& line : a.not_for_model) {
        reasons += "<li>" + escape("not for this model, " + line) + "</li>\n";
    }
    if (!reasons.empty()) {
        out += "<ul class=\"facts\">\n" + reasons + "</ul>\n";
    }
    out +=
        "<p class=\"meta\">Samples/s and memory come from each candidate's pass alone (warm-up "
        "excluded); \"step of " +
        std::to_string(a.user_batch) +
        "\" is one optimizer step of your batch at that rate; quality is the verdict of the "
        "candidate's runs against " +
        escape(a.baseline) +
        "'s seed band, and a candidate is ruled out where it diverged, skipped more than 5% of "
        "its steps after calibrating its loss scale, or ended beyond the band.</p>\n";
    for (const auto& p : c.plots) {
        if (p.id == kAdvicePlotId) {
            out += imageHtml(p, mode);
        }
    }
    const auto lines = analysis::pytorchLines(a, c.data.spec);
    if (!lines.empty()) {
        std::string code;
        for (const auto& l : lines) {
            code += l + "\n";
        }
        out += "<p>In your PyTorch loop:</p>\n<pre>" + escape(code) + "</pre>\n";
    }
    return out;
}

}  // namespace ampbench::report
