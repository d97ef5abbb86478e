#pragma once
// The verdicts of one experiment as a read-only panel: a table of arms with their
// verdict, then each arm's reasons and the next things to check. The same text
// the reports carry (ui/report/ReportHtml.h), so the GUI and the files agree.
#include <QWidget>

#include "core/analysis/ExperimentAnalysis.h"

class QTextBrowser;

namespace ampbench::ui {

/// A widget: GUI thread only. Compute the analysis anywhere (it is pure), show it here.
class VerdictPanel : public QWidget {
  public:
    explicit VerdictPanel(QWidget* parent = nullptr);
    void setAnalysis(const analysis::ExperimentAnalysis& analysis);
    /// Shows a placeholder (e.g. "Pick runs of one experiment to see its verdict").
    void clear(const QString& message = {});
    /// The HTML on show (for tests).
    QString html() const;
    /// The text on show, without markup (for tests).
    QString plainText() const;

  private:
    QTextBrowser* text_ = nullptr;  // owned by this widget
};

}  // namespace ampbench::ui
