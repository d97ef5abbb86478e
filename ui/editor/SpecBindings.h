#pragma once
#include <QHash>
#include <QObject>
#include <QString>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/config/SpecFields.h"
#include "core/config/Validation.h"

class QFormLayout;
class QLineEdit;
class QWidget;

namespace ampbench::ui {

/// Binds form widgets to fields of an ExperimentSpec, both ways, from the spec's
/// field table: the widget follows the field's kind (spin box, number, text, check
/// box, choice, list), its label and tooltip are the field's. Each widget's
/// objectName is its field path ("model.width"), the path config::validate()
/// names, so errors find their widget. GUI thread only.
class SpecBindings : public QObject {
    Q_OBJECT
  public:
    using Spec = ampbench::config::ExperimentSpec;
    using Field = ampbench::config::FlatField<Spec>;

    explicit SpecBindings(QObject* parent = nullptr);

    /// Adds a row to `form` for `field` (which must outlive this object: the
    /// table's fields do).
    void addField(QFormLayout* form, const Field& field);

    /// Shows `spec` in every widget; emits nothing.
    void load(const Spec& spec);
    /// Writes every widget into `spec`. Text that does not parse (a number, a
    /// list) adds a FieldError and leaves its field as it was.
    void readInto(Spec& spec, std::vector<ampbench::config::FieldError>& errors) const;
    /// Shows the rows of the fields that apply to `spec` (the table's conditions: a
    /// ResNet's blocks only for resnet, a model file only for torchscript) and
    /// enables those in use.
    void enableFor(const Spec& spec);
    /// The widget of a field path such as "seeds[1]" or "model.width"; null if none.
    QWidget* widgetFor(const std::string& field) const;
    /// Marks the widgets named by `errors` and clears the others; returns the
    /// errors no widget here shows.
    std::vector<ampbench::config::FieldError> markErrors(
        const std::vector<ampbench::config::FieldError>& errors);

  Q_SIGNALS:
    /// The user changed the widget of `field`.
    void edited(const QString& field);

  private:
    struct Binding {
        const Field* field = nullptr;
        QWidget* widget = nullptr;
        QWidget* row = nullptr;  // what the form shows: the widget, or it with browse buttons
        QFormLayout* form = nullptr;
        QString baseTip;  // the help text, kept under the error messages
        std::function<void(const Spec&)> load;
        /// Returns false (and leaves spec) when the text does not parse.
        std::function<bool(Spec&)> store;
        std::string parseMessage;
    };

    /// A list shown as "a, b, c": `format` writes a value, `parse` reads one
    /// (nullopt: the text does not parse).
    template <class T>
    static void bindList(Binding& b, QLineEdit* w, const Field* f, QString (*format)(T),
                         std::optional<T> (*parse)(const QString&));

    std::vector<Binding> bindings_;
    QHash<QString, QWidget*> byField_;
};

}  // namespace ampbench::ui
