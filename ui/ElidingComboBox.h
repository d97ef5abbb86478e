#pragma once
// A combo box whose current text ends in an ellipsis where the box is narrower than
// it, instead of being cut mid-letter by the box's edge.
#include <QComboBox>

namespace ampbench::ui {

/// Draws the current item's text elided to the edit field; the list shows items whole.
class ElidingComboBox : public QComboBox {
    Q_OBJECT
  public:
    using QComboBox::QComboBox;
    /// The current text as the box draws it now.
    QString shownText() const;

  protected:
    void paintEvent(QPaintEvent* event) override;
};

}  // namespace ampbench::ui
