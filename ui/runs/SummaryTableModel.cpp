#include "ui/runs/SummaryTableModel.h"

#include <cmath>

#include "core/analysis/Format.h"

namespace ampbench::ui {
namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

/// NaN sorts last in both directions would need a proxy; as -inf it sorts first ascending.
QVariant number(double v) {
    return std::isfinite(v) ? QVariant(v) : QVariant(-INFINITY);
}

}  // namespace

SummaryTableModel::SummaryTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void SummaryTableModel::setArms(std::vector<analysis::ArmSummary> arms, QList<QColor> colors) {
    beginResetModel();
    arms_ = std::move(arms);
    colors_ = std::move(colors);
    endResetModel();
}

int SummaryTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(arms_.size());
}

int SummaryTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SummaryTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const auto& a = arms_[static_cast<size_t>(index.row())];
    const int c = index.column();
    if (role == Qt::DecorationRole && c == Arm && index.row() < colors_.size()) {
        return colors_[index.row()];
    }
    if (role == Qt::TextAlignmentRole && c != Arm) {
        return int(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == SortRole) {
        switch (c) {
            case Arm:
                return q(a.arm);
            case Runs:
                return a.runs;
            case MedianStep:
            case StepSpread:
                return number(a.median_step_ms);
            case SamplesPerS:
                return number(a.samples_per_s);
            case Speedup:
                return number(a.speedup);
            case PeakMemory:
                return static_cast<qlonglong>(a.peak_mem);
            case MemoryRatio:
                return number(a.memory_ratio);
            case ValAccuracy:
                return number(a.val_accuracy);
            case Skipped:
                return static_cast<qlonglong>(a.skipped);
        }
        return {};
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (c) {
        case Arm:
            return q(a.arm);
        case Runs:
            return a.finished == a.runs ? QString::number(a.runs)
                                        : QStringLiteral("%1/%2").arg(a.finished).arg(a.runs);
        case MedianStep:
            return q(analysis::formatMs(a.median_step_ms));
        case StepSpread:
            return std::isfinite(a.p10_step_ms) && std::isfinite(a.p90_step_ms)
                       ? q(analysis::formatMs(a.p10_step_ms) + "\u2013" +
                           analysis::formatMs(a.p90_step_ms))
                       : QStringLiteral("\u2013");
        case SamplesPerS:
            return q(analysis::formatNumber(a.samples_per_s, 0));
        case Speedup:
            return q(analysis::formatRatio(a.speedup));
        case PeakMemory:
            return q(analysis::formatBytes(a.peak_mem));
        case MemoryRatio:  // NaN (no finished run, no memory recorded): "–", never 0×
            return q(analysis::formatRatio(a.memory_ratio));
        case ValAccuracy: {
            std::string acc = analysis::formatPercent(a.val_accuracy, 2);
            if (std::isfinite(a.val_accuracy_sd)) {
                acc += " \u00b1" + analysis::formatNumber(a.val_accuracy_sd * 100.0, 2);
            }
            return q(acc);
        }
        case Skipped:  // no finished run: no figure, as in every other column
            return a.finished > 0 ? QVariant(static_cast<qlonglong>(a.skipped))
                                  : QVariant(QStringLiteral("\u2013"));
    }
    return {};
}

QVariant SummaryTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) {
        return {};
    }
    static const QStringList titles = {
        tr("Arm"),      tr("Runs"),        tr("Median step"), tr("p10\u2013p90"), tr("Samples/s"),
        tr("Speed-up"), tr("Peak memory"), tr("Memory"),      tr("Val accuracy"), tr("Skipped")};
    static const QStringList tips = {
        tr("Arm (experiment/arm when runs come from several experiments)"),
        tr("Finished runs (the figures and the verdict come from these) / runs"),
        tr("Median over the arm's runs of each run's median step time (warm-up excluded)"),
        tr("10th to 90th percentile of step time"),
        tr("Training samples per second over timed steps"),
        tr("Samples/s against the baseline arm"),
        tr("The most the run's tensors held (CUDA: the allocator's figure); runs recorded "
           "before that, and training scripts on the CPU: their process's resident set"),
        tr("Peak memory against the baseline arm"),
        tr("Final validation accuracy, mean \u00b1 sd over seeds"),
        tr("Optimizer steps skipped for inf/NaN gradients")};
    if (role == Qt::DisplayRole && section < titles.size()) {
        return titles[section];
    }
    if (role == Qt::ToolTipRole && section < tips.size()) {
        return tips[section];
    }
    return {};
}

}  // namespace ampbench::ui
