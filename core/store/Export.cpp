#include "core/store/Export.h"

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

#include "core/run/RecordFields.h"
#include "core/run/RecordJson.h"
#include "core/store/NumericsStore.h"
#include "core/store/OutputFile.h"

namespace ampbench::store {
namespace {

using nlohmann::json;

/// Quotes a CSV field when it holds a comma, quote or line break (RFC 4180); a
/// text that a spreadsheet would run as a formula is made inert first.
std::string csvField(const std::string& raw) {
    const std::string text = spreadsheetSafe(raw);
    if (text.find_first_of(",\"\r\n") == std::string::npos)
        return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

/// Shortest text that reads back as the same double; nan/inf spelled out.
std::string number(double v) {
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
}

std::string number(int64_t v) {
    return std::to_string(v);
}

/// One line of the CSV: each cell through csvField, so no cell reaches a spreadsheet
/// as a formula whichever column it is in.
std::string csvRow(std::initializer_list<std::string> cells) {
    std::string out;
    bool first = true;
    for (const std::string& cell : cells) {
        out += (first ? "" : ",") + csvField(cell);
        first = false;
    }
    return out + "\n";
}

RunRow requireRun(const Database& db, int64_t run_id) {
    auto run = db.run(run_id);
    if (!run) {
        throw StoreError(StoreError::Kind::NotFound,
                         db.path() + " has no run " + std::to_string(run_id) + " to export");
    }
    return *run;
}

/// Keeps JSON text as a nested object; anything unparsable stays a string.
json embedded(const std::string& text) {
    if (text.empty())
        return json::object();
    json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
    return parsed.is_discarded() ? json(text) : parsed;
}

/// nlohmann writes NaN and inf as null; keep them distinguishable.
json real(double v) {
    if (std::isfinite(v))
        return v;
    return number(v);
}

}  // namespace

int64_t exportCsv(const Database& db, const std::vector<int64_t>& run_ids, std::ostream& out) {
    out << csvRow(
        {"run_id", "experiment", "arm", "seed", "table", "step", "samples", "metric", "value"});
    int64_t lines = 0;
    for (int64_t id : run_ids) {
        const RunRow run = requireRun(db, id);
        // Every cell, numbers too ("-inf" is no number to a spreadsheet), is one csvField.
        auto line = [&](const char* table, int64_t step, const std::string& samples,
                        const std::string& metric, const std::string& value) {
            out << csvRow({number(run.id), run.experiment_name, run.arm, std::to_string(run.seed),
                           table, number(step), samples, metric, value});
            ++lines;
        };
        // A line per metric field of each step and evaluation (run/RecordFields.h).
        auto metrics = [&](const char* table, int64_t step, const std::string& samples,
                           const std::string& metric_prefix, const auto& fields,
                           const auto& record) {
            run::visitFields(fields, record, [&](const auto& f, const auto& value) {
                if (!f.metric) {
                    return;
                }
                using T = std::decay_t<decltype(value)>;
                const std::string metric = metric_prefix + f.name;
                if constexpr (std::is_same_v<T, bool>) {
                    line(table, step, samples, metric, value ? "1" : "0");
                } else if constexpr (std::is_same_v<T, std::string>) {
                    line(table, step, samples, metric, value);
                } else if constexpr (std::is_enum_v<T>) {
                    line(table, step, samples, metric, run::EnumText<T>::text(value));
                } else {
                    line(table, step, samples, metric, number(value));
                }
            });
        };
        for (const auto& s : db.steps(id))
            metrics("step", s.step, number(s.samples), "", run::stepFields(), s);
        for (const auto& e : db.evals(id))
            metrics("eval", e.step, number(e.samples), "", run::evalFields(), e);
        // An event is one line: its kind is the metric, its value the value. Events carry
        // no sample count; the column stays empty.
        for (const auto& ev : db.events(id))
            line("event", ev.step, "", run::toString(ev.kind), number(ev.value));
        // Per-layer numerics: metric "KIND:NAME:FIELD", e.g. "grad:head.weight:absmax";
        // the format the row is against is the value of its "format" line ("e4m3").
        for (const auto& r : NumericsStore(db).rows(id)) {
            const std::string m = std::string(run::toString(r.kind)) + ":" + r.name + ":";
            metrics("numerics", r.step, "", m, run::numericsFields(), r);
        }
    }
    return lines;
}

void exportJson(const Database& db, const std::vector<int64_t>& run_ids, std::ostream& out) {
    json runs = json::array();
    for (int64_t id : run_ids) {
        const RunRow run = requireRun(db, id);
        json steps = json::array();
        for (const auto& s : db.steps(id))
            steps.push_back(run::fieldsJson(run::stepFields(), s, real));
        json evals = json::array();
        for (const auto& e : db.evals(id))
            evals.push_back(run::fieldsJson(run::evalFields(), e, real));
        json events = json::array();
        for (const auto& ev : db.events(id))
            events.push_back(run::fieldsJson(run::eventFields(), ev, real));
        json numerics = json::array();
        for (const auto& r : NumericsStore(db).rows(id))
            numerics.push_back(run::fieldsJson(run::numericsFields(), r, real));
        runs.push_back({{"id", run.id},
                        {"experiment_id", run.experiment_id},
                        {"experiment", run.experiment_name},
                        {"arm", run.arm},
                        {"arm_index", run.arm_index},
                        {"seed", run.seed},
                        {"status", run::toString(run.status)},
                        {"error", run.error},
                        {"notes", run.notes},
                        {"started_at", run.started_at},
                        {"ended_at", run.ended_at},
                        {"planned_steps", run.planned_steps},
                        {"last_step", run.last_step},
                        {"spec", embedded(run.spec_json)},
                        {"env", embedded(run.env_json)},
                        {"steps", std::move(steps)},
                        {"evals", std::move(evals)},
                        {"events", std::move(events)}});
        if (!numerics.empty()) {
            runs.back()["numerics"] = std::move(numerics);  // runs with numerics_every only
        }
    }
    json doc = {{"format", "ampbench-runs"}, {"version", 1}, {"runs", std::move(runs)}};
    // Invalid UTF-8 in user text is replaced rather than aborting the export.
    out << doc.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
}

}  // namespace ampbench::store
