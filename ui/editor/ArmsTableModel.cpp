#include "ui/editor/ArmsTableModel.h"
#include "ui/editor/NumberText.h"

#include <QBrush>
#include <QColor>
#include <QLocale>
#include <algorithm>

#include "core/config/PlannedArm.h"
#include "core/config/PrecisionFormats.h"
#include "core/config/SpecFields.h"
#include "ui/editor/FieldMarks.h"

namespace ampbench::ui {
namespace {

using config::ArmSpec;
using config::FieldValue;
using config::ValueKind;

/// The columns are the arm's flattened field table, in order.
const config::FlatField<ArmSpec>* columnField(int column) {
    const auto& fields = config::flatFields<ArmSpec>();
    return column >= 0 && column < static_cast<int>(fields.size())
               ? &fields[static_cast<size_t>(column)]
               : nullptr;
}

bool isBoolColumn(int c) {
    const auto* f = columnField(c);
    return f && f->kind == ValueKind::Bool;
}

/// The loss scaler's settings ("scaler.init_scale", ...).
bool isScalerColumn(int c) {
    const auto* f = columnField(c);
    return f && f->path.rfind("scaler.", 0) == 0;
}

/// A setting only some precision formats use (fp8's "fp8_recipe", ...) where the arm
/// on `a` is not one of them.
bool isOtherFormatsColumn(int c, const ArmSpec& a) {
    const auto* f = columnField(c);
    return f && config::fieldIsOtherFormats(f->path, a.precision);
}

bool isLossScalingColumn(int c) {
    const auto* f = columnField(c);
    return f && f->path == "loss_scaling";
}

}  // namespace

ArmsTableModel::ArmsTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int ArmsTableModel::columns() {
    return static_cast<int>(config::flatFields<ArmSpec>().size());
}

QString ArmsTableModel::fieldOf(int column) {
    const auto* f = columnField(column);
    return f ? QString::fromStdString(f->path) : QString();
}

int ArmsTableModel::columnOf(const QString& field) {
    for (int c = 0; c < columns(); ++c) {
        if (fieldOf(c) == field) {
            return c;
        }
    }
    return -1;
}

QStringList ArmsTableModel::choicesOf(int column) {
    const auto* f = columnField(column);
    QStringList out;
    if (f && f->kind == ValueKind::Choice) {
        for (const std::string& c : f->choices) {
            out << QString::fromStdString(c);
        }
    }
    return out;
}

void ArmsTableModel::setArms(const std::vector<ArmSpec>& arms) {
    beginResetModel();
    arms_ = arms;
    errors_.clear();
    endResetModel();
}

QString ArmsTableModel::uniqueName(const QString& base) const {
    auto taken = [this](const QString& n) {
        for (const auto& a : arms_) {
            if (QString::fromStdString(a.name) == n) {
                return true;
            }
        }
        return false;
    };
    if (!taken(base)) {
        return base;
    }
    for (int i = 2;; ++i) {
        const QString n = QStringLiteral("%1-%2").arg(base).arg(i);
        if (!taken(n)) {
            return n;
        }
    }
}

void ArmsTableModel::addArm() {
    ArmSpec a;
    a.name = uniqueName("arm").toStdString();
    const int row = static_cast<int>(arms_.size());
    beginInsertRows({}, row, row);
    arms_.push_back(a);
    endInsertRows();
    Q_EMIT edited("arms");
}

void ArmsTableModel::removeArm(int row) {
    if (row < 0 || row >= static_cast<int>(arms_.size())) {
        return;
    }
    beginRemoveRows({}, row, row);
    arms_.erase(arms_.begin() + row);
    endRemoveRows();
    Q_EMIT edited("arms");
}

void ArmsTableModel::duplicateArm(int row) {
    if (row < 0 || row >= static_cast<int>(arms_.size())) {
        return;
    }
    ArmSpec a = arms_[static_cast<size_t>(row)];
    a.name = uniqueName(QString::fromStdString(a.name) + "-copy").toStdString();
    beginInsertRows({}, row + 1, row + 1);
    arms_.insert(arms_.begin() + row + 1, a);
    endInsertRows();
    Q_EMIT edited("arms");
}

std::vector<config::FieldError> ArmsTableModel::setErrors(
    const std::vector<config::FieldError>& errors) {
    QHash<QPair<int, int>, QStringList> next;
    std::vector<config::FieldError> rest;
    for (const auto& e : errors) {
        const auto where = config::armFieldPath(e.field);
        const int column = where ? columnOf(QString::fromStdString(where->field)) : -1;
        const int row = where ? static_cast<int>(where->arm) : -1;
        if (column < 0 || row >= rowCount()) {
            rest.push_back(e);
            continue;
        }
        next[{row, column}] << QString::fromStdString(config::describe(e, arms_, true));
    }
    if (next != errors_) {
        errors_ = std::move(next);
        if (rowCount() > 0) {
            Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columns() - 1),
                               {Qt::BackgroundRole, Qt::ToolTipRole});
        }
    }
    return rest;
}

QStringList ArmsTableModel::cellErrors(int row, int column) const {
    return errors_.value({row, column});
}

void ArmsTableModel::setAmpIsFp16(bool fp16) {
    if (fp16 == ampIsFp16_) {
        return;
    }
    ampIsFp16_ = fp16;
    if (rowCount() > 0) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columns() - 1));
    }
}

QString ArmsTableModel::unusedReason(int row, int column) const {
    if (row >= 0 && row < rowCount()) {
        const ArmSpec& a = arms_[static_cast<size_t>(row)];
        if (isOtherFormatsColumn(column, a)) {
            return tr("Not used: this arm runs %1 (the setting is for %2 arms)")
                .arg(QString::fromStdString(config::toString(a.precision)),
                     QString::fromUtf8(config::formatOwningField(columnField(column)->path)->name));
        }
        if (columnField(column) && columnField(column)->path == "fp8_history" &&
            a.fp8_recipe != config::Fp8Recipe::Delayed) {
            return tr("Not used: current scaling keeps no history");
        }
    }
    const bool scaler = isScalerColumn(column);
    if ((!scaler && !isLossScalingColumn(column)) || row < 0 || row >= rowCount()) {
        return {};
    }
    // As the trainer decides: only fp16 autocast with loss scaling on has a scaler.
    const ArmSpec& a = arms_[static_cast<size_t>(row)];
    const config::Precision runs = config::resolvePrecision(a.precision, ampIsFp16_);
    if (!config::formatOf(runs).loss_scaler) {
        const QString how = a.precision == config::Precision::Amp
                                ? tr("amp, bf16 on the CPU")
                                : QString::fromStdString(config::toString(runs));
        return tr("Not used: this arm runs %1, without a loss scaler (only amp-fp16 scales the "
                  "loss)")
            .arg(how);
    }
    if (scaler && !a.loss_scaling) {
        return tr("Not used: loss scaling is off for this arm");
    }
    return {};
}

int ArmsTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(arms_.size());
}

int ArmsTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : columns();
}

QVariant ArmsTableModel::data(const QModelIndex& index, int role) const {
    const auto* f = columnField(index.column());
    if (!index.isValid() || index.row() >= rowCount() || !f) {
        return {};
    }
    const ArmSpec& a = arms_[static_cast<size_t>(index.row())];
    const int c = index.column();
    if (role == Qt::BackgroundRole) {
        return errors_.contains({index.row(), c}) ? QVariant(QBrush(QColor(255, 205, 205)))
                                                  : QVariant();
    }
    if (role == Qt::ToolTipRole) {
        const QStringList errors = errors_.value({index.row(), c});
        return errors.isEmpty() ? unusedReason(index.row(), c) : errors.join('\n');
    }
    const FieldValue value = f->get(a);
    if (role == Qt::CheckStateRole && f->kind == ValueKind::Bool) {
        return std::get<bool>(value) ? Qt::Checked : Qt::Unchecked;
    }
    if (role != Qt::DisplayRole && role != Qt::EditRole) {
        return {};
    }
    switch (f->kind) {
        case ValueKind::Text:
        case ValueKind::Choice:
            return QString::fromStdString(std::get<std::string>(value));
        case ValueKind::Int:
            return static_cast<qlonglong>(std::get<int64_t>(value));
        case ValueKind::Double: {
            const double v = std::get<double>(value);
            if (role == Qt::DisplayRole && v == 0 && f->info->zero_text) {
                return QString::fromUtf8(f->info->zero_text);
            }
            return editableNumber(v);
        }
        case ValueKind::Bool:
        case ValueKind::IntList:
        case ValueKind::DoubleList:
            return {};
    }
    return {};
}

bool ArmsTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    const auto* f = columnField(index.column());
    if (!index.isValid() || index.row() >= rowCount() || !f) {
        return false;
    }
    ArmSpec& a = arms_[static_cast<size_t>(index.row())];
    const int c = index.column();
    bool ok = true;
    if (role == Qt::CheckStateRole && f->kind == ValueKind::Bool) {
        f->set(a, FieldValue(value.toInt() == Qt::Checked));
    } else if (role == Qt::EditRole) {
        const QString text = value.toString().trimmed();
        switch (f->kind) {
            case ValueKind::Text:
                f->set(a, FieldValue(text.toStdString()));
                break;
            case ValueKind::Choice:
                ok = f->choices.end() !=
                     std::find(f->choices.begin(), f->choices.end(), text.toStdString());
                if (ok) {
                    f->set(a, FieldValue(text.toStdString()));
                }
                break;
            case ValueKind::Int: {
                const qlonglong v = text.toLongLong(&ok);
                if (ok) {
                    f->set(a, FieldValue(static_cast<int64_t>(v)));
                }
                break;
            }
            case ValueKind::Double: {
                const auto v = parseNumberText(text, /*offMeansZero=*/f->info->zero_text);
                ok = v.has_value();
                if (ok) {
                    f->set(a, FieldValue(*v));
                }
                break;
            }
            case ValueKind::Bool:
            case ValueKind::IntList:
            case ValueKind::DoubleList:
                ok = false;
                break;
        }
    } else {
        return false;
    }
    if (!ok) {
        return false;  // the editor keeps the old value; nothing to validate
    }
    Q_EMIT dataChanged(index, index);
    Q_EMIT edited(QStringLiteral("arms[%1].%2").arg(index.row()).arg(fieldOf(c)));
    return true;
}

QVariant ArmsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Vertical) {
        return role == Qt::DisplayRole ? QVariant(section + 1) : QVariant();
    }
    const auto* f = columnField(section);
    if (!f) {
        return {};
    }
    if (role == Qt::DisplayRole) {
        return QString::fromUtf8(f->info->column ? f->info->column : f->info->label);
    }
    if (role == Qt::ToolTipRole) {
        const QString help = QString::fromUtf8(f->info->help);
        return std::string(f->info->key) == "ranks" && !ranksNote_.isEmpty()
                   ? help + QStringLiteral("\n") + ranksNote_
                   : help;
    }
    return {};
}

Qt::ItemFlags ArmsTableModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) {
        return Qt::NoItemFlags;
    }
    if (!unusedReason(index.row(), index.column()).isEmpty() &&
        !errors_.contains({index.row(), index.column()})) {
        return Qt::ItemIsSelectable;  // greyed, not editable; the tooltip says why
    }
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    return isBoolColumn(index.column()) ? f | Qt::ItemIsUserCheckable : f | Qt::ItemIsEditable;
}

}  // namespace ampbench::ui
