#pragma once
// The verdicts of one experiment as a read-only panel: a table of arms with their
// verdict, then each arm's reasons and the next things to check, and beside it the
// two plots the verdict reads (each arm's distance from the baseline in band units,
// the validation metric as mean ± 2σ with the tolerance). The same text and drawing
// the reports carry (ui/report/ReportHtml.h, JudgementPlots.h), so the GUI and the
// files agree.
#include <QWidget>

#include <vector>

#include "core/analysis/ExperimentAnalysis.h"
#include "ui/report/JudgementPlots.h"

class QCustomPlot;
class QTabWidget;
class QTextBrowser;

namespace ampbench::ui {

/// A widget: GUI thread only. Compute the analysis anywhere (it is pure), show it here.
class VerdictPanel : public QWidget {
  public:
    explicit VerdictPanel(QWidget* parent = nullptr);
    /// `running`: the evaluations of runs still training, drawn live on the Validation
    /// tab beside the finished runs' bands (the verdict itself judges finished runs).
    void setAnalysis(const analysis::ExperimentAnalysis& analysis,
                     const std::vector<report::RunningEvaluations>& running = {});
    /// Shows a placeholder (e.g. "Pick runs of one experiment to see its verdict").
    void clear(const QString& message = {});
    /// The HTML on show (for tests).
    QString html() const;
    /// The text on show, without markup (for tests).
    QString plainText() const;

    QTabWidget* tabs() const { return tabs_; }
    QCustomPlot* deviationPlot() const { return deviation_; }
    QCustomPlot* validationPlot() const { return validation_; }

  protected:
    /// A new palette (dark or light) shows the text and the plots again in its colours.
    void changeEvent(QEvent* event) override;

  private:
    /// Shows `body_` with the table headers and grey notes in the palette's colours.
    void showBody();
    QString body_;
    // Owned by this widget through the tabs.
    QTabWidget* tabs_ = nullptr;
    QTextBrowser* text_ = nullptr;
    QCustomPlot* deviation_ = nullptr;
    QCustomPlot* validation_ = nullptr;
};

}  // namespace ampbench::ui
