#include "ui/editor/SpecBindings.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolButton>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/editor/FieldMarks.h"
#include "ui/editor/NumberText.h"

namespace ampbench::ui {
namespace {

using config::FieldValue;
using config::ValueKind;

// Wide on purpose: config::validate() owns the ranges and explains them; the
// widgets only keep values representable.
constexpr int kIntMin = -1000000000;
constexpr int kIntMax = std::numeric_limits<int>::max();

/// A whole-number field's box: it holds any number (a loaded spec's bad value shows,
/// and the problems name it), but its arrows, keys and wheel stop at the field's
/// bounds (CPU threads at 0, never -9).
class FieldSpinBox : public QSpinBox {
  public:
    explicit FieldSpinBox(const config::Bounds& b)
        : lo_(!std::isfinite(b.lo) ? kIntMin
              : b.lo_closed        ? static_cast<int>(std::ceil(b.lo))
                                   : static_cast<int>(std::floor(b.lo)) + 1),
          hi_(!std::isfinite(b.hi) || b.hi >= kIntMax ? kIntMax
              : b.hi_closed                           ? static_cast<int>(std::floor(b.hi))
                                                      : static_cast<int>(std::ceil(b.hi)) - 1) {
        setRange(kIntMin, kIntMax);
    }

    void stepBy(int steps) override {
        const long long to = static_cast<long long>(value()) + static_cast<long long>(steps);
        // Toward the bounds always; past them never.
        const long long floor = std::min<long long>(value(), lo_);
        const long long ceiling = std::max<long long>(value(), hi_);
        setValue(static_cast<int>(std::clamp(to, floor, ceiling)));
        selectAll();
    }

  protected:
    StepEnabled stepEnabled() const override {
        StepEnabled e = QSpinBox::stepEnabled();
        if (value() <= lo_) {
            e &= ~StepDownEnabled;
        }
        if (value() >= hi_) {
            e &= ~StepUpEnabled;
        }
        return e;
    }

  private:
    int lo_;
    int hi_;
};

/// "file:<filter>", "folder" or "file-or-folder:<filter>" (see FieldInfo::browse).
struct Browse {
    bool file = false, folder = false;
    QString filter;
};
Browse parseBrowse(const char* what) {
    Browse b;
    const QString text = QString::fromUtf8(what);
    const QString kind = text.section(':', 0, 0);
    b.filter = text.section(':', 1);
    b.file = kind == QLatin1String("file") || kind == QLatin1String("file-or-folder");
    b.folder = kind == QLatin1String("folder") || kind == QLatin1String("file-or-folder");
    return b;
}

/// The line edit with a button per way to browse; a pick replaces the text and
/// counts as an edit.
QWidget* withBrowseButtons(QLineEdit* edit, const Browse& how, const QString& label,
                           const std::function<void()>& changed) {
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(edit, 1);
    auto add = [&](const QString& text, bool folder) {
        auto* button = new QToolButton;
        button->setText(text);
        button->setObjectName(edit->objectName() + (folder ? ".folder" : ".file"));
        button->setToolTip(folder ? QObject::tr("Choose a folder") : QObject::tr("Choose a file"));
        layout->addWidget(button);
        QObject::connect(button, &QToolButton::clicked, edit, [=] {
            const QString start = edit->text();
            const QString picked =
                folder ? QFileDialog::getExistingDirectory(edit, label, start)
                       : QFileDialog::getOpenFileName(edit, label, start, how.filter);
            if (!picked.isEmpty()) {
                edit->setText(picked);
                changed();
            }
        });
    };
    if (how.file) {
        add(how.folder ? QObject::tr("File…") : QStringLiteral("…"), false);
    }
    if (how.folder) {
        add(how.file ? QObject::tr("Folder…") : QStringLiteral("…"), true);
    }
    return row;
}

}  // namespace

SpecBindings::SpecBindings(QObject* parent) : QObject(parent) {}

template <class T>
void SpecBindings::bindList(Binding& b, QLineEdit* w, const Field* f, QString (*format)(T),
                            std::optional<T> (*parse)(const QString&)) {
    b.load = [w, f, format](const Spec& s) {
        QStringList parts;
        const FieldValue value = f->get(s);  // outlives the loop below
        for (T v : std::get<std::vector<T>>(value)) {
            parts << format(v);
        }
        w->setText(parts.join(", "));
    };
    b.store = [w, f, parse](Spec& s) {
        std::vector<T> values;
        static const QRegularExpression separators(QStringLiteral("[,;\\s]+"));
        for (const QString& part : w->text().split(separators, Qt::SkipEmptyParts)) {
            const std::optional<T> v = parse(part);
            if (!v) {
                return false;
            }
            values.push_back(*v);
        }
        f->set(s, FieldValue(values));
        return true;
    };
}

void SpecBindings::addField(QFormLayout* form, const Field& field) {
    Binding b;
    b.field = &field;
    b.baseTip = QString::fromUtf8(field.info->help);
    const Field* f = &field;
    auto changed = [this, path = field.path] { Q_EMIT edited(QString::fromStdString(path)); };
    switch (field.kind) {
        case ValueKind::Int: {
            auto* w = new FieldSpinBox(field.info->bounds);
            w->setAccelerated(true);
            b.widget = w;
            b.load = [w, f](const Spec& s) {
                w->setValue(static_cast<int>(std::get<int64_t>(f->get(s))));
            };
            b.store = [w, f](Spec& s) {
                f->set(s, FieldValue(static_cast<int64_t>(w->value())));
                return true;
            };
            connect(w, &QSpinBox::valueChanged, this, changed);
            break;
        }
        case ValueKind::Double: {
            auto* w = new QLineEdit;
            b.widget = w;
            b.parseMessage = "must be a number";
            b.load = [w, f](const Spec& s) {
                w->setText(editableNumber(std::get<double>(f->get(s))));
            };
            b.store = [w, f](Spec& s) {
                const auto v = parseNumberText(w->text());
                if (v) {
                    f->set(s, FieldValue(*v));
                }
                return v.has_value();
            };
            connect(w, &QLineEdit::textEdited, this, changed);
            break;
        }
        case ValueKind::Text: {
            auto* w = new QLineEdit;
            b.widget = w;
            b.load = [w, f](const Spec& s) {
                w->setText(QString::fromStdString(std::get<std::string>(f->get(s))));
            };
            b.store = [w, f](Spec& s) {
                f->set(s, FieldValue(w->text().toStdString()));
                return true;
            };
            connect(w, &QLineEdit::textEdited, this, changed);
            break;
        }
        case ValueKind::Bool: {
            auto* w = new QCheckBox;
            b.widget = w;
            b.load = [w, f](const Spec& s) { w->setChecked(std::get<bool>(f->get(s))); };
            b.store = [w, f](Spec& s) {
                f->set(s, FieldValue(w->isChecked()));
                return true;
            };
            connect(w, &QCheckBox::toggled, this, changed);
            break;
        }
        case ValueKind::Choice: {
            auto* w = new QComboBox;
            for (const std::string& c : field.choices) {
                w->addItem(QString::fromStdString(c));
            }
            b.widget = w;
            b.load = [w, f](const Spec& s) {
                const QString v = QString::fromStdString(std::get<std::string>(f->get(s)));
                if (w->findText(v) < 0) {
                    w->addItem(v);  // an unknown name from a file: shown, and validation says why
                }
                w->setCurrentText(v);
            };
            b.store = [w, f](Spec& s) {
                f->set(s, FieldValue(w->currentText().toStdString()));
                return true;
            };
            connect(w, &QComboBox::currentTextChanged, this, changed);
            break;
        }
        case ValueKind::DoubleList: {
            auto* w = new QLineEdit;
            b.widget = w;
            b.parseMessage = "must be a list of numbers, e.g. 0.485, 0.456, 0.406";
            bindList<double>(
                b, w, f, [](double v) { return editableNumber(v); },
                [](const QString& part) { return parseNumberText(part); });
            connect(w, &QLineEdit::textEdited, this, changed);
            break;
        }
        case ValueKind::IntList: {
            auto* w = new QLineEdit;
            b.widget = w;
            b.parseMessage = "must be a list of non-negative integers, e.g. 1, 2, 3";
            bindList<uint64_t>(
                b, w, f, [](uint64_t v) { return QString::number(v); },
                [](const QString& part) -> std::optional<uint64_t> {
                    bool ok = false;
                    const qulonglong v = part.toULongLong(&ok);
                    return ok ? std::optional<uint64_t>(v) : std::nullopt;
                });
            connect(w, &QLineEdit::textEdited, this, changed);
            break;
        }
    }
    b.widget->setObjectName(QString::fromStdString(field.path));
    b.widget->setToolTip(b.baseTip);
    byField_.insert(QString::fromStdString(field.path), b.widget);
    b.row = b.widget;
    if (auto* edit = qobject_cast<QLineEdit*>(b.widget); edit && field.info->browse) {
        b.row = withBrowseButtons(edit, parseBrowse(field.info->browse),
                                  QString::fromUtf8(field.info->label), changed);
    }
    b.form = form;
    form->addRow(QString::fromUtf8(field.info->label), b.row);
    bindings_.push_back(std::move(b));
}

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
            errors.push_back({b.field->path, "\"" + text.toStdString() + "\"", b.parseMessage});
        }
    }
}

void SpecBindings::enableFor(const Spec& spec) {
    for (const Binding& b : bindings_) {
        const auto* info = b.field->info;
        const auto used = info->used ? info->used : info->applies;
        // A field that cannot apply is hidden (a model file for a built-in model); one
        // that applies but is not used now is greyed (SGD's momentum under AdamW).
        b.form->setRowVisible(b.row, !info->applies || info->applies(spec));
        b.row->setEnabled(!used || used(spec));
        b.widget->setEnabled(!used || used(spec));
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
            messages[w] << QString::fromStdString(config::describe(e, {}, /*labels=*/true));
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
