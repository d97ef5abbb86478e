#include "ui/ArmsTableModel.h"
#include "ui/NumberText.h"

#include <QBrush>
#include <QColor>
#include <QLocale>
#include <QRegularExpression>

#include "ui/FieldMarks.h"

namespace ampbench::ui {
namespace {

using config::ArmSpec;

bool isBoolColumn(int c) {
    return c == ArmsTableModel::Tf32 || c == ArmsTableModel::ChannelsLast ||
           c == ArmsTableModel::Checkpointing || c == ArmsTableModel::CudaGraph;
}

bool& boolField(ArmSpec& a, int c) {
    switch (c) {
        case ArmsTableModel::Tf32:
            return a.tf32;
        case ArmsTableModel::ChannelsLast:
            return a.channels_last;
        case ArmsTableModel::CudaGraph:
            return a.cuda_graph;
        default:
            return a.checkpointing;
    }
}

}  // namespace

ArmsTableModel::ArmsTableModel(QObject* parent) : QAbstractTableModel(parent) {}

QString ArmsTableModel::fieldOf(int column) {
    static const QStringList fields = {"name",
                                       "precision",
                                       "accumulation",
                                       "lr_rule",
                                       "grad_clip",
                                       "tf32",
                                       "channels_last",
                                       "checkpointing",
                                       "cuda_graph",
                                       "repeats",
                                       "scaler.init_scale",
                                       "scaler.growth_factor",
                                       "scaler.backoff_factor",
                                       "scaler.growth_interval"};
    return column >= 0 && column < fields.size() ? fields[column] : QString();
}

QStringList ArmsTableModel::choicesOf(int column) {
    if (column == Precision) {
        return {"fp32", "amp", "amp-fp16", "amp-bf16"};
    }
    if (column == LrRule) {
        return {"linear", "sqrt", "none"};
    }
    return {};
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
    static const QRegularExpression armField(QStringLiteral("^arms\\[(\\d+)\\]\\.(.+)$"));
    QHash<QPair<int, int>, QStringList> next;
    std::vector<config::FieldError> rest;
    for (const auto& e : errors) {
        const auto m = armField.match(QString::fromStdString(e.field));
        int column = -1;
        if (m.hasMatch()) {
            for (int c = 0; c < ColumnCount; ++c) {
                if (fieldOf(c) == m.captured(2)) {
                    column = c;
                }
            }
        }
        const int row = m.hasMatch() ? m.captured(1).toInt() : -1;
        if (column < 0 || row >= rowCount()) {
            rest.push_back(e);
            continue;
        }
        next[{row, column}] << QString::fromStdString(e.toString());
    }
    if (next != errors_) {
        errors_ = std::move(next);
        if (rowCount() > 0) {
            Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1),
                               {Qt::BackgroundRole, Qt::ToolTipRole});
        }
    }
    return rest;
}

QStringList ArmsTableModel::cellErrors(int row, int column) const {
    return errors_.value({row, column});
}

int ArmsTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(arms_.size());
}

int ArmsTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ArmsTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const ArmSpec& a = arms_[static_cast<size_t>(index.row())];
    const int c = index.column();
    if (role == Qt::BackgroundRole) {
        return errors_.contains({index.row(), c}) ? QVariant(QBrush(QColor(255, 205, 205)))
                                                  : QVariant();
    }
    if (role == Qt::ToolTipRole) {
        return errors_.value({index.row(), c}).join('\n');
    }
    if (role == Qt::CheckStateRole && isBoolColumn(c)) {
        ArmSpec copy = a;
        return boolField(copy, c) ? Qt::Checked : Qt::Unchecked;
    }
    if (role != Qt::DisplayRole && role != Qt::EditRole) {
        return {};
    }
    switch (c) {
        case Name:
            return QString::fromStdString(a.name);
        case Precision:
            return QString::fromStdString(config::toString(a.precision));
        case Accumulation:
            return a.accumulation;
        case LrRule:
            return QString::fromStdString(config::toString(a.lr_rule));
        case GradClip:
            return role == Qt::DisplayRole && a.grad_clip == 0 ? QString("off")
                                                               : editableNumber(a.grad_clip);
        case Repeats:
            return a.repeats;
        case ScalerInit:
            return editableNumber(a.scaler.init_scale);
        case ScalerGrowth:
            return editableNumber(a.scaler.growth_factor);
        case ScalerBackoff:
            return editableNumber(a.scaler.backoff_factor);
        case ScalerInterval:
            return a.scaler.growth_interval;
        default:
            return {};
    }
}

bool ArmsTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || index.row() >= rowCount()) {
        return false;
    }
    ArmSpec& a = arms_[static_cast<size_t>(index.row())];
    const int c = index.column();
    bool ok = true;
    if (role == Qt::CheckStateRole && isBoolColumn(c)) {
        boolField(a, c) = value.toInt() == Qt::Checked;
    } else if (role == Qt::EditRole) {
        const QString text = value.toString().trimmed();
        switch (c) {
            case Name:
                a.name = text.toStdString();
                break;
            case Precision: {
                const auto p = config::precisionFromString(text.toStdString());
                ok = p.has_value();
                a.precision = p.value_or(a.precision);
                break;
            }
            case LrRule: {
                const auto r = config::lrRuleFromString(text.toStdString());
                ok = r.has_value();
                a.lr_rule = r.value_or(a.lr_rule);
                break;
            }
            case Accumulation:
            case Repeats:
            case ScalerInterval: {
                const int v = text.toInt(&ok);
                if (ok) {
                    (c == Accumulation ? a.accumulation
                     : c == Repeats    ? a.repeats
                                       : a.scaler.growth_interval) = v;
                }
                break;
            }
            default: {
                const auto v = parseNumberText(text, /*offMeansZero=*/c == GradClip);
                ok = v.has_value();
                if (ok) {
                    (c == GradClip       ? a.grad_clip
                     : c == ScalerInit   ? a.scaler.init_scale
                     : c == ScalerGrowth ? a.scaler.growth_factor
                                         : a.scaler.backoff_factor) = *v;
                }
            }
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
    static const QStringList titles = {
        tr("Name"),        tr("Precision"), tr("Accum. K"), tr("LR rule"),    tr("Grad clip"),
        tr("TF32"),        tr("Ch. last"),  tr("Checkpt."), tr("CUDA graph"), tr("Repeats"),
        tr("Scaler init"), tr("Growth"),    tr("Backoff"),  tr("Interval")};
    static const QStringList tips = {
        tr("Unique within the experiment"),
        tr("fp32; amp = fp16 + loss scaling on CUDA, bf16 on CPU"),
        tr("Micro-batches per optimizer step (effective batch = micro-batch \u00d7 K)"),
        tr("How the learning rate follows the effective batch"),
        tr("Max global gradient L2 norm after unscaling; 0 = off"),
        tr("Allow TF32 matmuls (fp32 arms on CUDA)"),
        tr("NHWC memory format (cnn, resnet)"),
        tr("Recompute activations in backward (resnet, transformer)"),
        tr("Capture the whole step in a CUDA graph (K = 1, CUDA)"),
        tr("Seeds for this arm; 0 = the experiment's seeds"),
        tr("Loss scaler: initial scale (fp16)"),
        tr("Loss scaler: growth factor"),
        tr("Loss scaler: backoff factor"),
        tr("Loss scaler: steps without overflow before growing")};
    if (role == Qt::DisplayRole && section < titles.size()) {
        return titles[section];
    }
    if (role == Qt::ToolTipRole && section < tips.size()) {
        return tips[section];
    }
    return {};
}

Qt::ItemFlags ArmsTableModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) {
        return Qt::NoItemFlags;
    }
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    return isBoolColumn(index.column()) ? f | Qt::ItemIsUserCheckable : f | Qt::ItemIsEditable;
}

}  // namespace ampbench::ui
