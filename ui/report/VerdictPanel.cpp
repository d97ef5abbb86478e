#include "ui/report/VerdictPanel.h"

#include <QTextBrowser>
#include <QVBoxLayout>

#include "ui/report/ReportHtml.h"

namespace ampbench::report {

VerdictPanel::VerdictPanel(QWidget* parent) : QWidget(parent), text_(new QTextBrowser(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(text_);
    text_->setOpenLinks(false);
    text_->setReadOnly(true);
    clear();
}

void VerdictPanel::setAnalysis(const analysis::ExperimentAnalysis& analysis) {
    std::string body;
    if (!analysis.incomplete.empty()) {
        body += "<p><b>Incomplete runs, left out:</b> ";
        for (size_t i = 0; i < analysis.incomplete.size(); ++i) {
            body += (i ? "; " : "") + analysis.incomplete[i].describe();
        }
        body += "</p>";
    }
    body += verdictHtml(analysis);
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

}  // namespace ampbench::report
