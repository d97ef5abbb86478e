// The report's sections on what ran: arm specs against the baseline, shared
// settings, environment, and the command that reproduces the experiment.
#include <QByteArray>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/analysis/Format.h"
#include "core/config/SpecJson.h"
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
    std::string out =
        "<h2>Reproduce</h2>\n<p>Save the spec below as <code>spec.json</code> and "
        "run</p>\n<pre>ampbench-cli run --config spec.json</pre>\n";
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
