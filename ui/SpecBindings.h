#pragma once
#include <QHash>
#include <QObject>
#include <QString>
#include <functional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/config/Validation.h"

class QFormLayout;
class QWidget;

namespace ampbench::ui {

/// Binds form widgets to fields of an ExperimentSpec, both ways. Each widget's
/// objectName is its field path ("model.width"), the path config::validate()
/// names, so errors find their widget. GUI thread only.
class SpecBindings : public QObject {
    Q_OBJECT
  public:
    using Spec = ampbench::config::ExperimentSpec;

    explicit SpecBindings(QObject* parent = nullptr);

    // Each adds a row to `form` whose widget shows field `field` through `get`.
    template <typename T>
    void addInt(QFormLayout* form, const QString& label, const std::string& field,
                std::function<T&(Spec&)> get, const QString& tip);
    void addDouble(QFormLayout* form, const QString& label, const std::string& field,
                   std::function<double&(Spec&)> get, const QString& tip);
    void addText(QFormLayout* form, const QString& label, const std::string& field,
                 std::function<std::string&(Spec&)> get, const QString& tip);
    void addBool(QFormLayout* form, const QString& label, const std::string& field,
                 std::function<bool&(Spec&)> get, const QString& tip);
    /// A fixed list of names; `get`/`set` convert the field to and from its name.
    void addChoice(QFormLayout* form, const QString& label, const std::string& field,
                   const QStringList& choices, std::function<std::string(const Spec&)> get,
                   std::function<void(Spec&, const std::string&)> set, const QString& tip);
    /// "1, 2, 3" for a list of non-negative integers.
    void addIntList(QFormLayout* form, const QString& label, const std::string& field,
                    std::function<std::vector<uint64_t>(const Spec&)> get,
                    std::function<void(Spec&, const std::vector<uint64_t>&)> set,
                    const QString& tip);

    /// Shows `spec` in every widget; emits nothing.
    void load(const Spec& spec);
    /// Writes every widget into `spec`. Text that does not parse (a number, a
    /// list) adds a FieldError and leaves its field as it was.
    void readInto(Spec& spec, std::vector<ampbench::config::FieldError>& errors) const;
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
        std::string field;
        QWidget* widget = nullptr;
        QString baseTip;  // the help text, kept under the error messages
        std::function<void(const ampbench::config::ExperimentSpec&)> load;
        /// Returns false (and leaves spec) when the text does not parse.
        std::function<bool(ampbench::config::ExperimentSpec&)> store;
        std::string parseMessage;
    };

    /// Adds the row, names the widget after the field, and emits edited(field)
    /// whenever `widget` sends `changed`.
    template <typename Widget, typename Signal>
    void addBinding(QFormLayout* form, const QString& label, Widget* widget, Signal changed,
                    Binding binding);

    std::vector<Binding> bindings_;
    QHash<QString, QWidget*> byField_;
};

}  // namespace ampbench::ui
