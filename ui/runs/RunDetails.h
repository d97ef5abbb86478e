#pragma once
#include <QList>
#include <QString>

class QTableWidget;

namespace ampbench::store {
class Database;
struct ExperimentRow;
struct RunRow;
}  // namespace ampbench::store

namespace ampbench::ui {

/// One line of the History view's details table: a named fact and its value, or
/// (section) a heading over the lines below it.
struct DetailRow {
    QString field;
    QString value;
    bool section = false;
};

/// What is recorded about a run, readable: who it is (arm, seed, label, tags, trash),
/// how it went (status, times, steps), its figures (analysis::summarizeRun, with
/// core's formatting), its notes, the arm as planned and the environment it ran in.
/// Reads the run's steps and evaluations. Throws store::StoreError from the reader.
QList<DetailRow> runDetails(const store::Database& db, const store::RunRow& run);

/// An experiment's facts, each arm's figures (analysis::summarizeArms), its notes
/// and its spec field by field. `status` is the word the history shows for it.
QList<DetailRow> experimentDetails(const store::Database& db, const store::ExperimentRow& e,
                                   const QString& status);

/// "a.b.c: value" lines of a JSON object, nested objects and arrays flattened (an
/// array element named by its "name" field where it has one); `json` not an object:
/// one line with the text as it is.
QList<DetailRow> flattenJson(const std::string& json);

/// Shows `rows` in a two-column table (sections span both columns, in bold, on the
/// palette's alternate base).
void fillDetails(QTableWidget& table, const QList<DetailRow>& rows);
/// Gives the section headings of a filled table the table's palette as it is now: a
/// switch to dark colours left them on the light palette's band, under white text.
void paintSections(QTableWidget& table);

}  // namespace ampbench::ui
