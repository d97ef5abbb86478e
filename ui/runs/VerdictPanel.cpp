#include "ui/runs/VerdictPanel.h"

#include <QTextBrowser>
#include <QVBoxLayout>

#include "ui/report/HtmlText.h"
#include "ui/report/ReportHtml.h"

namespace ampbench::ui {

namespace html = report::html;
using report::verdictHtml;

VerdictPanel::VerdictPanel(QWidget* parent) : QWidget(parent), text_(new QTextBrowser(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(text_);
    text_->setOpenLinks(false);
    text_->setReadOnly(true);
    clear();
}

void VerdictPanel::setAnalysis(const analysis::ExperimentAnalysis& analysis) {
    std::string body = "<p><b>" + html::escape(analysis.name) + "</b> (experiment " +
                       std::to_string(analysis.experiment_id) + ") \u00b7 each arm against <b>" +
                       html::escape(analysis.baseline) + "</b></p>";
    if (!analysis.incomplete.empty()) {
        body += "<p><b>Incomplete runs, left out:</b> ";
        for (size_t i = 0; i < analysis.incomplete.size(); ++i) {
            body += (i ? "; " : "") + analysis.incomplete[i].describe();
        }
        body += "</p>";
    }
    body += verdictHtml(analysis);
    for (const auto& w : analysis.warnings) {
        body += "<p><i>Note: " + html::escape(w) + "</i></p>";
    }
    text_->setHtml(QString::fromStdString(body));
}

void VerdictPanel::clear(const QString& message) {
    text_->setHtml(
        "<p style=\"color:#666666\">" +
        (message.isEmpty() ? QString("No experiment selected.") : message.toHtmlEscaped()) +
        "</p>");
}

QString VerdictPanel::html() const {
    return text_->toHtml();
}

QString VerdictPanel::plainText() const {
    return text_->toPlainText();
}

}  // namespace ampbench::ui
