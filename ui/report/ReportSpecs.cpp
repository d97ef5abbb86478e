// The report's sections on what ran: arm specs against the baseline, shared
// settings, environment, and the command that reproduces the experiment.
#include <QByteArray>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/analysis/Format.h"
#include "core/analysis/Reproduction.h"
#include "core/config/SpecJson.h"
#include "core/run/InputFiles.h"
#include "ui/report/HtmlText.h"
#include "ui/report/ReportHtml.h"

namespace ampbench::report {
namespace {

using html::escape;
using json = nlohmann::ordered_json;  // keeps the spec's field order
using Flat = std::vector<std::pair<std::string, std::string>>;

/// `empty` stands in for an empty string: "(default)" in a spec, "–" in an environment.
std::string valueText(const json& v, const char* empty) {
    if (v.is_string()) {
        const auto s = v.get<std::string>();
        return s.empty() ? empty : s;
    }
    return v.dump();
}

/// Nested objects become dotted keys ("scaler.init_scale"), in the JSON's order.
void flatten(const json& j, const std::string& prefix, Flat& out, const char* empty = "(default)") {
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it->is_object()) {
            flatten(*it, key, out, empty);
        } else {
            out.emplace_back(key, valueText(*it, empty));
        }
    }
}

/// Valid JSON, but one line per section and per arm: a spec fits on a page.
std::string compactSpec(const json& spec) {
    std::string out = "{\n";
    size_t i = 0;
    for (auto it = spec.begin(); it != spec.end(); ++it, ++i) {
        out += "  " + json(it.key()).dump() + ": ";
        if (it->is_array() && !it->empty() && it->front().is_object()) {
            out += "[\n";
            for (size_t k = 0; k < it->size(); ++k) {
                out += "    " + (*it)[k].dump() + (k + 1 < it->size() ? ",\n" : "\n");
            }
            out += "  ]";
        } else {
            out += it->dump();
        }
        out += i + 1 < spec.size() ? ",\n" : "\n";
    }
    return out + "}\n";
}

json parseObject(const std::string& text) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    return j.is_object() ? j : json::object();
}

std::string armSpecs(const ReportContent& c) {
    const auto& a = c.analysis;
    std::vector<std::string> arms;
    std::map<std::string, std::map<std::string, std::string>> values;
    std::vector<std::string> keys;
    std::set<std::string> seen_keys;
    for (const auto& v : a.verdicts) {
        arms.push_back(v.arm);
        for (const auto& r : c.data.runs) {
            if (r.row.arm != v.arm) {
                continue;
            }
            Flat flat;
            flatten(parseObject(r.row.spec_json), "", flat);
            flat.emplace_back("precision on this device", config::toString(v.facts.precision));
            for (const auto& [k, val] : flat) {
                if (k == "name") {
                    continue;
                }
                values[v.arm][k] = val;
                if (seen_keys.insert(k).second) {
                    keys.push_back(k);
                }
            }
            break;
        }
    }
    std::vector<std::vector<html::Cell>> rows;
    for (const auto& k : keys) {
        std::vector<html::Cell> row{{escape(k), {}, true}};
        const std::string base = values[a.baseline].count(k) ? values[a.baseline][k] : "";
        for (const auto& arm : arms) {
            const std::string val = values[arm].count(k) ? values[arm][k] : "";
            const bool differs = arm != a.baseline && val != base;
            row.push_back(
                {escape(val), differs ? "background-color:#ffe08a; font-weight:bold" : "", false});
        }
        rows.push_back(std::move(row));
    }
    std::vector<std::string> header{"field"};
    header.insert(header.end(), arms.begin(), arms.end());
    return "<h2>Arm specs</h2>\n<p class=\"meta\">Each arm as it ran (lr after its LR rule); "
           "highlighted cells differ from " +
           escape(a.baseline) + ".</p>\n" + html::table(header, rows);
}

std::string sharedSettings(const ReportContent& c) {
    json spec = parseObject(c.data.experiment.spec_json);
    spec.erase("arms");
    Flat flat;
    flatten(spec, "", flat);
    // Two fields per row: the list is long and each value short.
    const size_t half = (flat.size() + 1) / 2;
    std::vector<std::vector<html::Cell>> rows;
    for (size_t i = 0; i < half; ++i) {
        std::vector<html::Cell> row{{escape(flat[i].first), {}, true},
                                    {escape(flat[i].second), {}, false}};
        if (i + half < flat.size()) {
            row.push_back({escape(flat[i + half].first), {}, true});
            row.push_back({escape(flat[i + half].second), {}, false});
        }
        rows.push_back(std::move(row));
    }
    return "<h2>Shared settings</h2>\n" +
           html::table({"field", "value", "field", "value"}, rows, {}, false);
}

std::string environment(const ReportContent& c) {
    // One column per distinct environment (normally one), headed by the runs that used it.
    std::vector<std::string> envs;
    std::map<std::string, std::vector<int64_t>> runs_of;
    for (const auto& r : c.data.runs) {
        if (r.row.env_json.empty()) {
            continue;
        }
        if (!runs_of.count(r.row.env_json)) {
            envs.push_back(r.row.env_json);
        }
        runs_of[r.row.env_json].push_back(r.row.id);
    }
    if (envs.empty()) {
        return "<h2>Environment</h2>\n<p>No run recorded its environment (none started).</p>\n";
    }
    std::vector<std::string> header{"field"};
    std::vector<std::map<std::string, std::string>> columns;
    std::vector<std::string> keys;
    std::set<std::string> seen;
    for (const auto& e : envs) {
        const auto& ids = runs_of[e];
        header.push_back(
            envs.size() == 1
                ? "all runs"
                : "runs " + std::to_string(ids.front()) +
                      (ids.size() > 1 ? "\xE2\x80\xA6" + std::to_string(ids.back()) : ""));
        json j = parseObject(e);
        std::map<std::string, std::string> col;
        Flat flat;
        flatten(j, "", flat, "\xE2\x80\x93");
        for (auto& [k, v] : flat) {
            if (k == "device_memory" && j[k].is_number_integer()) {
                v = analysis::formatBytes(j[k].get<int64_t>());
            }
            col[k] = v;
            if (seen.insert(k).second) {
                keys.push_back(k);
            }
        }
        columns.push_back(std::move(col));
    }
    std::vector<std::vector<html::Cell>> rows;
    for (const auto& k : keys) {
        std::vector<html::Cell> row{{escape(k), {}, true}};
        for (const auto& col : columns) {
            row.push_back({escape(col.count(k) ? col.at(k) : ""), {}, false});
        }
        rows.push_back(std::move(row));
    }
    return "<h2>Environment</h2>\n" + html::table(header, rows, {}, envs.size() > 1);
}

std::string reproduce(const ReportContent& c, ImageMode mode) {
    // The stored spec as it ran (parsed and re-written, so it reads back with --config).
    const json spec = c.data.spec_ok ? json::parse(config::specToJsonText(c.data.spec))
                                     : parseObject(c.data.experiment.spec_json);
    const std::string spec_text = compactSpec(spec);
    std::string out = "<h2>Reproduce</h2>\n";
    // One run again, into the same database, compared with the run it repeats.
    const auto& runs = c.data.runs;
    const std::string path = c.data.database_path.empty() ? c.database_path : c.data.database_path;
    if (!runs.empty()) {
        out +=
            "<p>Train one run again, as a new run linked to it, and learn whether its "
            "curves are identical, within seed noise or different:</p>\n<pre>" +
            escape(analysis::rerunCommand(path, runs.front().row.id)) + "</pre>\n<p>";
        std::string ids;
        for (size_t i = 0; i < runs.size(); ++i) {
            ids += (i ? ", " : "") + std::to_string(runs[i].row.id) + " (" + runs[i].row.arm +
                   ", seed " + std::to_string(runs[i].row.seed) + ")";
        }
        out += "Any run of this experiment: " + escape(ids) + ". ";
        out += std::string(c.data.spec.deterministic
                               ? "It ran in deterministic mode: the same binary on the same "
                                 "device repeats every loss bit for bit."
                               : "It ran without deterministic mode: expect a rerun within "
                                 "noise, not bit for bit.") +
               " A rerun refuses to start when the files below or the environment above "
               "changed since, unless given <code>--force</code>.</p>\n";
        // The files the runs read, as recorded with the first run that has a record.
        for (const auto& r : runs) {
            const auto files = run::inputsFromJson(r.row.inputs_json);
            if (files.empty()) {
                continue;
            }
            std::vector<std::vector<html::Cell>> rows;
            for (const auto& f : files) {
                rows.push_back(html::cells(
                    {f.field, f.path, f.kind == "missing" ? "unreadable" : std::to_string(f.files),
                     analysis::formatBytes(f.bytes),
                     f.checksum + (f.method == "listing" ? " (names, sizes, times)" : "")}));
            }
            out += html::table({"field", "path", "files", "size", "CRC-32"}, rows, {2, 3}, true);
            break;
        }
    }
    if (!c.analysis.reruns.empty()) {
        std::vector<std::vector<html::Cell>> rows;
        for (const auto& r : c.analysis.reruns) {
            rows.push_back(
                html::cells({std::to_string(r.rerun), std::to_string(r.original_run), r.arm,
                             std::to_string(r.seed), analysis::toString(r.agreement), r.sentence}));
        }
        out += "<h3>Reruns</h3>\n" +
               html::table({"rerun", "of run", "arm", "seed", "result", "detail"}, rows, {0, 1, 3},
                           true);
    }
    out +=
        "<p>Or train the whole experiment anew: save the spec below as "
        "<code>spec.json</code> and run</p>\n<pre>ampbench-cli run --config spec.json</pre>\n";
    if (mode == ImageMode::Embedded) {
        const QByteArray b64 = QByteArray::fromStdString(spec_text).toBase64();
        out += "<p><a download=\"spec.json\" href=\"data:application/json;base64," +
               b64.toStdString() + "\">Download spec.json</a></p>\n";
    }
    out += "<pre>" + escape(spec_text) + "</pre>\n";
    return out;
}

}  // namespace

std::string specSectionsHtml(const ReportContent& content, ImageMode mode) {
    return armSpecs(content) + sharedSettings(content) + environment(content) +
           reproduce(content, mode);
}

}  // namespace ampbench::report
