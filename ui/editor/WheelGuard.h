#pragma once
// The mouse wheel over a form scrolls the form: a spin box or combo box takes the
// wheel only once it has focus (a click or Tab), so scrolling past CPU threads no
// longer turns it to -9.
#include <QObject>

namespace ampbench::ui {

/// Watches every widget of the application: each spin box and combo box gets
/// Qt::StrongFocus when it is polished (the wheel gives it no focus), and a wheel event
/// over one without focus goes to the widget under it (a scroll area scrolls).
class WheelGuard : public QObject {
  public:
    /// Installs the one guard on the application; later calls do nothing.
    static void install();

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    using QObject::QObject;
};

}  // namespace ampbench::ui
