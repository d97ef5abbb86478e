#include "ui/editor/SpecForm.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHash>
#include <QVBoxLayout>

#include "ui/editor/SpecBindings.h"

namespace ampbench::ui {
namespace {

QFormLayout* group(QVBoxLayout* column, const QString& title) {
    auto* box = new QGroupBox(title);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    column->addWidget(box);
    return form;
}

/// The editor group of a flattened field: a section's title ("Model") for
/// "model.width", the field's own group for a top-level one.
QString groupOf(const config::FlatField<config::ExperimentSpec>& f) {
    const auto dot = f.path.find('.');
    if (dot == std::string::npos) {
        return QString::fromUtf8(f.info->group ? f.info->group : "Experiment");
    }
    const std::string section = f.path.substr(0, dot);
    for (const auto& top : config::fieldsOf<config::ExperimentSpec>()) {
        if (section == top.key) {
            return QString::fromUtf8(top.label);
        }
    }
    return QString::fromStdString(section);
}

}  // namespace

SpecForm::SpecForm(QWidget* parent) : QWidget(parent), bindings_(new SpecBindings(this)) {
    auto* columns = new QHBoxLayout(this);
    columns->setContentsMargins(0, 0, 0, 0);
    auto* left = new QVBoxLayout;
    auto* middle = new QVBoxLayout;
    auto* right = new QVBoxLayout;
    columns->addLayout(left, 1);
    columns->addLayout(middle, 1);
    columns->addLayout(right, 1);
    // Where each group goes; the groups and their fields come from the field table.
    const QHash<QString, QVBoxLayout*> placement = {{"Experiment", left},
                                                    {"Schedule", left},
                                                    {"Model", middle},
                                                    {"Optimizer", middle},
                                                    {"Data", right}};
    QHash<QString, QFormLayout*> forms;
    for (const auto& field : config::flatFields<config::ExperimentSpec>()) {
        const QString name = groupOf(field);
        QFormLayout*& form = forms[name];
        if (!form) {
            form = group(placement.value(name, right), name);
        }
        bindings_->addField(form, field);
    }
    right->addStretch(1);
    left->addStretch(1);
    middle->addStretch(1);
    columns_ = columns;
    middle_ = middle;
    right_ = right;
    if (QFormLayout* data = forms.value("Data")) {
        dataBox_ = data->parentWidget();
    }
    wide_width_ = sizeHint().width();
    connect(bindings_, &SpecBindings::edited, this, [this](const QString& field) {
        updateEnabled();
        Q_EMIT edited(field);
    });
    updateEnabled();
}

void SpecForm::setSpec(const Spec& spec) {
    shown_ = spec;
    bindings_->load(spec);
    updateEnabled();
}

void SpecForm::readInto(Spec& spec, std::vector<config::FieldError>& errors) const {
    bindings_->readInto(spec, errors);
}

void SpecForm::setCompact(bool compact) {
    if (compact == compact_ || !dataBox_) {
        return;
    }
    compact_ = compact;
    if (compact) {
        right_->removeWidget(dataBox_);
        middle_->insertWidget(middle_->count() - 1, dataBox_);  // above the stretch
        columns_->setStretch(2, 0);  // the empty third column takes no width
    } else {
        middle_->removeWidget(dataBox_);
        right_->insertWidget(0, dataBox_);
        columns_->setStretch(2, 1);
    }
}

QWidget* SpecForm::widgetFor(const std::string& field) const {
    return bindings_->widgetFor(field);
}

std::vector<config::FieldError> SpecForm::markErrors(
    const std::vector<config::FieldError>& errors) {
    return bindings_->markErrors(errors);
}

void SpecForm::updateEnabled() {
    Spec spec = shown_;
    std::vector<config::FieldError> ignored;
    bindings_->readInto(spec, ignored);
    bindings_->enableFor(spec);
}

}  // namespace ampbench::ui
