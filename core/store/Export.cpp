#include "core/store/Export.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

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
    out << "run_id,experiment,arm,seed,table,step,samples,metric,value\n";
    int64_t lines = 0;
    for (int64_t id : run_ids) {
        const RunRow run = requireRun(db, id);
        const std::string prefix = std::to_string(run.id) + "," + csvField(run.experiment_name) +
                                   "," + csvField(run.arm) + "," + std::to_string(run.seed) + ",";
        auto line = [&](const char* table, int64_t step, const std::string& samples,
                        const std::string& metric, const std::string& value) {
            out << prefix << table << ',' << step << ',' << samples << ',' << csvField(metric)
                << ',' << value << '\n';
            ++lines;
        };
        for (const auto& s : db.steps(id)) {
            const std::string n = number(s.samples);
            line("step", s.step, n, "loss", number(s.loss));
            line("step", s.step, n, "lr", number(s.lr));
            line("step", s.step, n, "loss_scale", number(s.loss_scale));
            line("step", s.step, n, "skipped", s.skipped ? "1" : "0");
            line("step", s.step, n, "grad_norm", number(s.grad_norm));
            line("step", s.step, n, "step_ms", number(s.step_ms));
            line("step", s.step, n, "data_wait_ms", number(s.data_wait_ms));
            line("step", s.step, n, "mem_allocated", number(s.mem_allocated));
            line("step", s.step, n, "mem_reserved", number(s.mem_reserved));
            line("step", s.step, n, "mem_peak", number(s.mem_peak));
            line("step", s.step, n, "wall_s", number(s.wall_s));
        }
        for (const auto& e : db.evals(id)) {
            const std::string n = number(e.samples);
            line("eval", e.step, n, "val_loss", number(e.val_loss));
            line("eval", e.step, n, "val_accuracy", number(e.val_accuracy));
        }
        // Events carry no sample count; the column stays empty.
        for (const auto& ev : db.events(id))
            line("event", ev.step, "", run::toString(ev.kind), number(ev.value));
        // Per-layer numerics: metric "KIND:NAME:FIELD", e.g. "grad:head.weight:absmax".
        for (const auto& r : NumericsStore(db).rows(id)) {
            const std::string m = std::string(run::toString(r.kind)) + ":" + r.name + ":";
            line("numerics", r.step, "", m + "absmax", number(r.absmax));
            line("numerics", r.step, "", m + "underflow_subnormal", number(r.underflow_subnormal));
            line("numerics", r.step, "", m + "underflow_normal", number(r.underflow_normal));
            line("numerics", r.step, "", m + "headroom_log2", number(r.headroom_log2));
            line("numerics", r.step, "", m + "nonfinite", number(r.nonfinite));
            line("numerics", r.step, "", m + "numel", number(r.numel));
            line("numerics", r.step, "", m + "loss_scale", number(r.loss_scale));
        }
    }
    return lines;
}

void exportJson(const Database& db, const std::vector<int64_t>& run_ids, std::ostream& out) {
    json runs = json::array();
    for (int64_t id : run_ids) {
        const RunRow run = requireRun(db, id);
        json steps = json::array();
        for (const auto& s : db.steps(id)) {
            steps.push_back({{"step", s.step},
                             {"samples", s.samples},
                             {"loss", real(s.loss)},
                             {"lr", real(s.lr)},
                             {"loss_scale", real(s.loss_scale)},
                             {"skipped", s.skipped},
                             {"grad_norm", real(s.grad_norm)},
                             {"step_ms", real(s.step_ms)},
                             {"data_wait_ms", real(s.data_wait_ms)},
                             {"timed", s.timed},
                             {"mem_allocated", s.mem_allocated},
                             {"mem_reserved", s.mem_reserved},
                             {"mem_peak", s.mem_peak},
                             {"wall_s", real(s.wall_s)}});
        }
        json evals = json::array();
        for (const auto& e : db.evals(id)) {
            evals.push_back({{"step", e.step},
                             {"samples", e.samples},
                             {"val_loss", real(e.val_loss)},
                             {"val_accuracy", real(e.val_accuracy)},
                             {"wall_s", real(e.wall_s)}});
        }
        json events = json::array();
        for (const auto& ev : db.events(id)) {
            events.push_back({{"step", ev.step},
                              {"kind", run::toString(ev.kind)},
                              {"message", ev.message},
                              {"value", real(ev.value)}});
        }
        json numerics = json::array();
        for (const auto& r : NumericsStore(db).rows(id)) {
            numerics.push_back({{"step", r.step},
                                {"kind", run::toString(r.kind)},
                                {"name", r.name},
                                {"absmax", real(r.absmax)},
                                {"underflow_subnormal", real(r.underflow_subnormal)},
                                {"underflow_normal", real(r.underflow_normal)},
                                {"headroom_log2", real(r.headroom_log2)},
                                {"nonfinite", r.nonfinite},
                                {"numel", r.numel},
                                {"loss_scale", real(r.loss_scale)},
                                {"dtype", r.dtype}});
        }
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
