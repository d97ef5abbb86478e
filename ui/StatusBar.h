#pragma once
// The window's status bar: a message too long for the room left of the permanent
// widgets ends in "…" a gap before them, where QStatusBar cut it at their edge, so an
// error ran into the database's name.
#include <QStatusBar>

namespace ampbench::ui {

/// QStatusBar with its temporary message elided to the room it has. GUI thread only.
class StatusBar : public QStatusBar {
    Q_OBJECT
  public:
    /// Pixels kept clear between the message and the first permanent widget.
    static constexpr int kGap = 16;
    using QStatusBar::QStatusBar;
    /// The message as drawn now (elided); empty when none.
    QString shownMessage() const;

  protected:
    void paintEvent(QPaintEvent* event) override;

  private:
    /// Where the message goes: from the left edge to a gap before the permanent widgets.
    QRect messageRoom() const;
};

}  // namespace ampbench::ui
