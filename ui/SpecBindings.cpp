#include "ui/SpecBindings.h"
#include "ui/NumberText.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <limits>

#include "ui/FieldMarks.h"

namespace ampbench::ui {
namespace {

// Wide on purpose: config::validate() owns the ranges and explains them; the
// widgets only keep values representable.
constexpr int kIntMin = -1000000000;
constexpr int kIntMax = std::numeric_limits<int>::max();

}  // namespace

SpecBindings::SpecBindings(QObject* parent) : QObject(parent) {}

template <typename Widget, typename Signal>
void SpecBindings::addBinding(QFormLayout* form, const QString& label, Widget* widget,
                              Signal changed, Binding binding) {
    binding.widget = widget;
    connect(widget, changed, this,
            [this, field = binding.field] { Q_EMIT edited(QString::fromStdString(field)); });
    binding.widget->setObjectName(QString::fromStdString(binding.field));
    binding.widget->setToolTip(binding.baseTip);
    binding.baseTip = binding.widget->toolTip();
    byField_.insert(QString::fromStdString(binding.field), binding.widget);
    form->addRow(label, binding.widget);
    bindings_.push_back(std::move(binding));
}

template <typename T>
void SpecBindings::addInt(QFormLayout* form, const QString& label, const std::string& field,
                          std::function<T&(Spec&)> get, const QString& tip) {
    auto* w = new QSpinBox;
    w->setRange(kIntMin, kIntMax);
    w->setAccelerated(true);
    Binding b;
    b.field = field;
    b.baseTip = tip;
    b.load = [w, get](const Spec& s) {
        w->setValue(static_cast<int>(get(const_cast<Spec&>(s))));  // read only
    };
    b.store = [w, get](Spec& s) {
        get(s) = static_cast<T>(w->value());
        return true;
    };
    addBinding(form, label, w, &QSpinBox::valueChanged, std::move(b));
}

void SpecBindings::addDouble(QFormLayout* form, const QString& label, const std::string& field,
                             std::function<double&(Spec&)> get, const QString& tip) {
    auto* w = new QLineEdit;
    Binding b;
    b.field = field;
    b.baseTip = tip;
    b.parseMessage = "must be a number";
    b.load = [w, get](const Spec& s) {
        w->setText(editableNumber(get(const_cast<Spec&>(s))));  // read only
    };
    b.store = [w, get](Spec& s) {
        const auto v = parseNumberText(w->text());
        if (v) {
            get(s) = *v;
        }
        return v.has_value();
    };
    addBinding(form, label, w, &QLineEdit::textEdited, std::move(b));
}

void SpecBindings::addText(QFormLayout* form, const QString& label, const std::string& field,
                           std::function<std::string&(Spec&)> get, const QString& tip) {
    auto* w = new QLineEdit;
    Binding b;
    b.field = field;
    b.baseTip = tip;
    b.load = [w, get](const Spec& s) {
        w->setText(QString::fromStdString(get(const_cast<Spec&>(s))));  // read only
    };
    b.store = [w, get](Spec& s) {
        get(s) = w->text().toStdString();
        return true;
    };
    addBinding(form, label, w, &QLineEdit::textEdited, std::move(b));
}

void SpecBindings::addBool(QFormLayout* form, const QString& label, const std::string& field,
                           std::function<bool&(Spec&)> get, const QString& tip) {
    auto* w = new QCheckBox;
    Binding b;
    b.field = field;
    b.baseTip = tip;
    b.load = [w, get](const Spec& s) {
        w->setChecked(get(const_cast<Spec&>(s)));  // read only
    };
    b.store = [w, get](Spec& s) {
        get(s) = w->isChecked();
        return true;
    };
    addBinding(form, label, w, &QCheckBox::toggled, std::move(b));
}

void SpecBindings::addChoice(QFormLayout* form, const QString& label, const std::string& field,
                             const QStringList& choices,
                             std::function<std::string(const Spec&)> get,
                             std::function<void(Spec&, const std::string&)> set,
                             const QString& tip) {
    auto* w = new QComboBox;
    w->addItems(choices);
    Binding b;
    b.field = field;
    b.baseTip = tip;
    b.load = [w, get](const Spec& s) {
        const QString v = QString::fromStdString(get(s));
        if (w->findText(v) < 0) {
            w->addItem(v);  // an unknown name from a file: shown, and validation says why
        }
        w->setCurrentText(v);
    };
    b.store = [w, set](Spec& s) {
        set(s, w->currentText().toStdString());
        return true;
    };
    addBinding(form, label, w, &QComboBox::currentTextChanged, std::move(b));
}

void SpecBindings::addIntList(QFormLayout* form, const QString& label, const std::string& field,
                              std::function<std::vector<uint64_t>(const Spec&)> get,
                              std::function<void(Spec&, const std::vector<uint64_t>&)> set,
                              const QString& tip) {
    auto* w = new QLineEdit;
    Binding b;
    b.field = field;
    b.baseTip = tip;
    b.parseMessage = "must be a list of non-negative integers, e.g. 1, 2, 3";
    b.load = [w, get](const Spec& s) {
        QStringList parts;
        for (uint64_t v : get(s)) {
            parts << QString::number(v);
        }
        w->setText(parts.join(", "));
    };
    b.store = [w, set](Spec& s) {
        std::vector<uint64_t> values;
        static const QRegularExpression separators(QStringLiteral("[,;\\s]+"));
        for (const QString& part : w->text().split(separators, Qt::SkipEmptyParts)) {
            bool ok = false;
            const qulonglong v = part.toULongLong(&ok);
            if (!ok) {
                return false;
            }
            values.push_back(v);
        }
        set(s, values);
        return true;
    };
    addBinding(form, label, w, &QLineEdit::textEdited, std::move(b));
}

template void SpecBindings::addInt<int>(QFormLayout*, const QString&, const std::string&,
                                        std::function<int&(Spec&)>, const QString&);
template void SpecBindings::addInt<int64_t>(QFormLayout*, const QString&, const std::string&,
                                            std::function<int64_t&(Spec&)>, const QString&);

void SpecBindings::load(const Spec& spec) {
    for (const Binding& b : bindings_) {
        const QSignalBlocker block(b.widget);
        b.load(spec);
    }
}

void SpecBindings::readInto(Spec& spec, std::vector<config::FieldError>& errors) const {
    for (const Binding& b : bindings_) {
        if (!b.store(spec)) {
            QString text;
            if (auto* edit = qobject_cast<QLineEdit*>(b.widget)) {
                text = edit->text();
            }
            errors.push_back({b.field, "\"" + text.toStdString() + "\"", b.parseMessage});
        }
    }
}

QWidget* SpecBindings::widgetFor(const std::string& field) const {
    QString key = QString::fromStdString(field);
    const int bracket = key.indexOf('[');
    if (bracket > 0) {
        key.truncate(bracket);  // "seeds[1]" is shown by the seeds field
    }
    return byField_.value(key);
}

std::vector<config::FieldError> SpecBindings::markErrors(
    const std::vector<config::FieldError>& errors) {
    QHash<QWidget*, QStringList> messages;
    std::vector<config::FieldError> rest;
    for (const auto& e : errors) {
        if (QWidget* w = widgetFor(e.field)) {
            messages[w] << QString::fromStdString(e.toString());
        } else {
            rest.push_back(e);
        }
    }
    for (const Binding& b : bindings_) {
        const QStringList m = messages.value(b.widget);
        setFieldMark(b.widget, m, b.baseTip);
    }
    return rest;
}

}  // namespace ampbench::ui
