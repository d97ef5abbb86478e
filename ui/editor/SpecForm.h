#pragma once
#include <QString>
#include <QWidget>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/config/Validation.h"

class QHBoxLayout;
class QVBoxLayout;

namespace ampbench::ui {

class SpecBindings;

/// Every field of an ExperimentSpec except the arms, as form widgets grouped by
/// topic, made from the spec's field table (config/SpecFields.h). Each widget's objectName is its
/// field path ("model.width"), the same path config::validate() names, so errors can be shown on
/// the widget.
class SpecForm : public QWidget {
    Q_OBJECT
  public:
    explicit SpecForm(QWidget* parent = nullptr);

    /// Shows `spec` (its arms are ignored). Emits nothing.
    void setSpec(const ampbench::config::ExperimentSpec& spec);
    /// Writes the widgets into `spec` (arms untouched). A widget whose text does
    /// not parse (a number, a list of seeds) adds a FieldError and leaves its field.
    void readInto(ampbench::config::ExperimentSpec& spec,
                  std::vector<ampbench::config::FieldError>& errors) const;
    /// Marks the widgets named by `errors` (red border, messages as tooltip) and
    /// clears the others. Returns the errors no widget here shows.
    std::vector<ampbench::config::FieldError> markErrors(
        const std::vector<ampbench::config::FieldError>& errors);
    /// The widget for a field path such as "seeds[1]" or "model.width"; null if none.
    QWidget* widgetFor(const std::string& field) const;
    /// Two columns instead of three (the Data group goes under Optimizer), for a
    /// narrow window: a laptop's 1280 pixels do not hold the three side by side.
    void setCompact(bool compact);
    bool compact() const { return compact_; }
    /// The width the three columns need.
    int wideWidth() const { return wide_width_; }

  Q_SIGNALS:
    /// The user changed the widget of `field`.
    void edited(const QString& field);

  private:
    using Spec = ampbench::config::ExperimentSpec;
    void updateEnabled();  // fields that do not apply to the chosen model, data or optimizer

    SpecBindings* bindings_;  // child QObject
    QWidget* dataBox_ = nullptr;
    QHBoxLayout* columns_ = nullptr;
    QVBoxLayout* middle_ = nullptr;
    QVBoxLayout* right_ = nullptr;
    bool compact_ = false;
    int wide_width_ = 0;
    Spec shown_;  // the last spec shown: the arms and fields no widget edits
};

}  // namespace ampbench::ui
