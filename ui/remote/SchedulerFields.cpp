#include "ui/remote/SchedulerFields.h"

#include <QFormLayout>
#include <QLineEdit>
#include <QSpinBox>

#include "core/launch/Scheduler.h"

namespace ampbench::ui {

SchedulerFields::SchedulerFields(QWidget* parent) : QStackedWidget(parent) {
    addWidget(new QWidget);  // no scheduler: no fields
    for (const launch::Scheduler* s : launch::schedulers()) {
        const launch::SchedulerInfo& info = s->info();
        auto* page = new QWidget;
        auto* form = new QFormLayout(page);
        form->setContentsMargins(0, 0, 0, 0);
        for (const auto& option : info.options) {
            Field f;
            f.key = QString::fromStdString(launch::settingsKey(info, option));
            f.min = option.min;
            const QString hint = QString::fromStdString(option.placeholder);
            if (option.kind == launch::OptionKind::Count) {
                auto* spin = new QSpinBox;
                spin->setRange(option.min, option.max);
                spin->setSpecialValueText(hint);
                connect(spin, &QSpinBox::valueChanged, this, [this] { Q_EMIT edited(); });
                f.widget = spin;
            } else {
                auto* line = new QLineEdit;
                line->setPlaceholderText(hint);
                connect(line, &QLineEdit::textEdited, this, [this] { Q_EMIT edited(); });
                f.widget = line;
            }
            f.widget->setObjectName(f.key);
            f.widget->setToolTip(QString::fromStdString(option.help));
            form->addRow(QString::fromStdString(option.label), f.widget);
            fields_ << f;
        }
        pages_[QString::fromStdString(info.name)] = addWidget(page);
    }
}

void SchedulerFields::showHost(const RemoteHost& host) {
    for (const Field& f : fields_) {
        const QString text = host.schedulerOptions.value(f.key);
        if (auto* spin = qobject_cast<QSpinBox*>(f.widget)) {
            spin->setValue(text.trimmed().isEmpty() ? f.min : text.trimmed().toInt());
        } else if (auto* line = qobject_cast<QLineEdit*>(f.widget)) {
            line->setText(text);
        }
    }
    showScheduler(host.scheduler);
}

void SchedulerFields::showScheduler(const QString& scheduler) {
    setCurrentIndex(pages_.value(scheduler, 0));
}

void SchedulerFields::store(RemoteHost& host) const {
    for (const Field& f : fields_) {
        QString text;
        if (auto* spin = qobject_cast<QSpinBox*>(f.widget)) {
            text = spin->value() > f.min ? QString::number(spin->value()) : QString();
        } else if (auto* line = qobject_cast<QLineEdit*>(f.widget)) {
            text = line->text().trimmed();
        }
        if (text.isEmpty()) {
            host.schedulerOptions.remove(f.key);
        } else {
            host.schedulerOptions[f.key] = text;
        }
    }
}

QWidget* SchedulerFields::field(const QString& key) const {
    for (const Field& f : fields_) {
        if (f.key == key) {
            return f.widget;
        }
    }
    return nullptr;
}

}  // namespace ampbench::ui
