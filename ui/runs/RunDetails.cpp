#include "ui/runs/RunDetails.h"

#include <QDateTime>
#include <QHeaderView>
#include <QTableWidget>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/analysis/Format.h"
#include "core/analysis/RankSpread.h"
#include "core/analysis/Summary.h"
#include "core/probe/Environment.h"
#include "core/run/FusedGroup.h"
#include "core/store/Database.h"

namespace ampbench::ui {
namespace {

/// Marks a section heading's item (its colours follow the palette).
constexpr int kSectionRole = Qt::UserRole + 1;

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QString localTime(const std::string& iso) {
    if (iso.empty()) {
        return QObject::tr("\u2013");
    }
    const QDateTime t = QDateTime::fromString(q(iso), Qt::ISODate);
    return t.isValid() ? t.toLocalTime().toString("yyyy-MM-dd HH:mm:ss") : q(iso);
}

QString joined(const std::vector<std::string>& tags) {
    return tags.empty() ? QObject::tr("(none)") : q(store::Database::joinTags(tags));
}

DetailRow section(const QString& title) {
    return {title, QString(), true};
}

QString jsonValue(const std::string& key, const nlohmann::json& v) {
    if (v.is_string()) {
        return q(v.get<std::string>());
    }
    if (v.is_boolean()) {
        return v.get<bool>() ? QObject::tr("yes") : QObject::tr("no");
    }
    if (v.is_number_integer() && key.find("memory") != std::string::npos) {
        return q(analysis::formatBytes(v.get<int64_t>()));
    }
    if (v.is_null()) {
        return QObject::tr("\u2013");
    }
    return q(v.dump());
}

void flatten(const std::string& prefix, const nlohmann::json& v, QList<DetailRow>& out) {
    if (v.is_object() && !v.empty()) {
        for (auto it = v.begin(); it != v.end(); ++it) {
            flatten(prefix.empty() ? it.key() : prefix + "." + it.key(), it.value(), out);
        }
        return;
    }
    if (v.is_array() && !v.empty() && !v.front().is_primitive()) {
        for (size_t i = 0; i < v.size(); ++i) {
            const auto& e = v[i];
            const std::string name = e.is_object() && e.contains("name") && e["name"].is_string()
                                         ? e["name"].get<std::string>()
                                         : std::to_string(i);
            flatten(prefix + "[" + name + "]", e, out);
        }
        return;
    }
    const std::string key =
        prefix.substr(prefix.rfind('.') == std::string::npos ? 0 : prefix.rfind('.') + 1);
    out.append({q(prefix), jsonValue(key, v)});
}

}  // namespace

QList<DetailRow> flattenJson(const std::string& json) {
    QList<DetailRow> out;
    const auto doc = nlohmann::json::parse(json, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        if (!json.empty()) {
            out.append({QObject::tr("(as stored)"), q(json)});
        }
        return out;
    }
    flatten({}, doc, out);
    return out;
}

QList<DetailRow> runDetails(const store::Database& db, const store::RunRow& r) {
    using analysis::formatBytes;
    using analysis::formatMs;
    using analysis::formatNumber;
    using analysis::formatPercent;
    const auto steps = db.steps(r.id);
    const auto evals = db.evals(r.id);
    const analysis::RunSummary s =
        analysis::summarizeRun(r, steps, evals, run::fusedGroupSize(db.events(r.id)));

    QList<DetailRow> rows;
    rows.append(section(QObject::tr("Run")));
    rows.append({QObject::tr("Run"), QStringLiteral("#%1").arg(r.id)});
    rows.append({QObject::tr("Experiment"),
                 QStringLiteral("%1 (#%2)").arg(q(r.experiment_name)).arg(r.experiment_id)});
    rows.append({QObject::tr("Arm"), q(r.arm)});
    rows.append({QObject::tr("Seed"), QString::number(r.seed)});
    rows.append({QObject::tr("Label"), r.label.empty() ? QObject::tr("(none)") : q(r.label)});
    rows.append({QObject::tr("Tags"), joined(r.tags)});
    QString status = q(run::toString(r.status));
    if (r.failure != run::FailureKind::None) {
        status += QStringLiteral(" (%1)").arg(q(run::toString(r.failure)));
    }
    if (!r.error.empty()) {
        status += QStringLiteral(": ") + q(r.error);
    }
    rows.append({QObject::tr("Status"), status});
    if (r.inTrash()) {
        rows.append({QObject::tr("In the trash"),
                     r.trashed_at.empty() ? QObject::tr("with its experiment")
                                          : QObject::tr("since %1").arg(localTime(r.trashed_at))});
    }
    rows.append({QObject::tr("Started"), localTime(r.started_at)});
    rows.append({QObject::tr("Ended"), localTime(r.ended_at)});
    rows.append({QObject::tr("Steps"), QObject::tr("%1 of %2 (%3 timed)")
                                           .arg(r.last_step)
                                           .arg(r.planned_steps)
                                           .arg(s.timed_steps)});
    rows.append({QObject::tr("Samples seen"), QString::number(s.samples)});
    if (const auto ranks = analysis::rankStepTimes(db.events(r.id)); !ranks.empty()) {
        QStringList each;
        for (size_t i = 0; i < ranks.ranks.size(); ++i) {
            each << QObject::tr("rank %1 %2")
                        .arg(ranks.ranks[i])
                        .arg(q(formatMs(ranks.median_ms[i])));
        }
        rows.append({QObject::tr("Step time by rank"),
                     QObject::tr("%1 (slowest %2 above the fastest; the curves are rank 0's)")
                         .arg(each.join(QStringLiteral(" \u00b7 ")))
                         .arg(q(formatPercent(ranks.spread())))});
    }
    if (r.rerun_of > 0) {
        rows.append({QObject::tr("Rerun of"), QObject::tr("run #%1").arg(r.rerun_of)});
    }

    rows.append({QObject::tr("Notes"), r.notes.empty() ? QObject::tr("(none)") : q(r.notes)});

    rows.append(section(QObject::tr("Figures")));
    rows.append({QObject::tr("Median step time"),
                 QObject::tr("%1 (p10 %2, p90 %3)")
                     .arg(q(formatMs(s.median_step_ms)), q(formatMs(s.p10_step_ms)),
                          q(formatMs(s.p90_step_ms)))});
    rows.append({QObject::tr("Throughput"),
                 QObject::tr("%1 samples/s").arg(q(formatNumber(s.samples_per_s, 0)))});
    rows.append({QObject::tr("Data wait"),
                 QObject::tr("%1 of step time").arg(q(formatPercent(s.data_wait_share)))});
    rows.append({QObject::tr("Peak memory"), q(formatBytes(s.peak_mem))});
    rows.append(
        {QObject::tr("Final training loss"), QObject::tr("%1 (mean of the last 10% of steps)")
                                                 .arg(q(formatNumber(s.final_train_loss, 4)))});
    rows.append({QObject::tr("Final validation loss"), q(formatNumber(s.final_val_loss, 4))});
    rows.append({QObject::tr("Final validation accuracy"),
                 std::isnan(s.final_val_accuracy)
                     ? QObject::tr("\u2013 (not evaluated)")
                     : QStringLiteral("%1 (%2)").arg(q(formatNumber(s.final_val_accuracy, 4)),
                                                     q(formatPercent(s.final_val_accuracy, 2)))});
    rows.append({QObject::tr("Skipped steps"), QString::number(s.skipped)});
    rows.append({QObject::tr("Minimum loss scale"), q(formatNumber(s.min_loss_scale, 0))});
    rows.append({QObject::tr("Wall time"), q(analysis::formatDuration(s.wall_s))});

    rows.append(section(QObject::tr("Arm as planned")));
    rows.append(flattenJson(r.spec_json));

    rows.append(section(QObject::tr("Environment")));
    if (r.env_json.empty()) {
        rows.append({QObject::tr("Summary"), QObject::tr("(not recorded: never started)")});
    } else {
        rows.append(
            {QObject::tr("Summary"), q(probe::describe(probe::environmentFromJson(r.env_json)))});
        rows.append(flattenJson(r.env_json));
    }
    return rows;
}

QList<DetailRow> experimentDetails(const store::Database& db, const store::ExperimentRow& e,
                                   const QString& status) {
    QList<DetailRow> rows;
    rows.append(section(QObject::tr("Experiment")));
    rows.append({QObject::tr("Experiment"), QStringLiteral("#%1").arg(e.id)});
    rows.append({QObject::tr("Name"), q(e.name)});
    rows.append({QObject::tr("Created"), localTime(e.created_at)});
    rows.append({QObject::tr("Status"), status.isEmpty() ? QObject::tr("(no runs)") : status});
    rows.append({QObject::tr("Runs"), QString::number(e.run_count)});
    rows.append({QObject::tr("Tags"), joined(e.tags)});
    if (!e.trashed_at.empty()) {
        rows.append(
            {QObject::tr("In the trash"), QObject::tr("since %1").arg(localTime(e.trashed_at))});
    }

    rows.append({QObject::tr("Notes"), e.notes.empty() ? QObject::tr("(none)") : q(e.notes)});

    const auto arms = analysis::summarizeArms(analysis::summarizeExperimentRuns(db, e.id));
    if (!arms.empty()) {
        rows.append(section(QObject::tr("Arms (against %1)").arg(q(arms.front().arm))));
        for (const auto& a : arms) {
            QString value = QObject::tr("%n run(s), ", nullptr, a.runs) +
                            QObject::tr("median step %1, %2 samples/s, peak %3")
                                .arg(q(analysis::formatMs(a.median_step_ms)),
                                     q(analysis::formatNumber(a.samples_per_s, 0)),
                                     q(analysis::formatBytes(a.peak_mem)));
            if (!std::isnan(a.val_accuracy)) {
                value += QObject::tr(", validation accuracy %1")
                             .arg(q(analysis::formatPercent(a.val_accuracy, 2)));
            }
            value += QObject::tr(", speed-up %1, memory %2")
                         .arg(q(analysis::formatRatio(a.speedup)),
                              q(analysis::formatRatio(a.memory_ratio)));
            rows.append({q(a.arm), value});
        }
    }

    rows.append(section(QObject::tr("Spec")));
    rows.append(flattenJson(e.spec_json));
    return rows;
}

void fillDetails(QTableWidget& table, const QList<DetailRow>& rows) {
    table.clearSpans();
    table.setRowCount(static_cast<int>(rows.size()));
    QFont bold = table.font();
    bold.setBold(true);
    for (int i = 0; i < rows.size(); ++i) {
        const DetailRow& d = rows[i];
        auto* field = new QTableWidgetItem(d.field);
        auto* value = new QTableWidgetItem(d.value);
        field->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        value->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        if (d.section) {
            field->setFont(bold);
            field->setData(kSectionRole, true);
            table.setSpan(i, 0, 1, 2);
        } else if (d.value.size() > 60 || d.value.contains('\n')) {
            value->setToolTip(d.value);
        }
        table.setItem(i, 0, field);
        table.setItem(i, 1, value);
    }
    paintSections(table);
    table.resizeRowsToContents();
}

void paintSections(QTableWidget& table) {
    for (int i = 0; i < table.rowCount(); ++i) {
        if (QTableWidgetItem* field = table.item(i, 0);
            field && field->data(kSectionRole).toBool()) {
            field->setBackground(table.palette().alternateBase());
            field->setForeground(table.palette().text());
        }
    }
}

}  // namespace ampbench::ui
