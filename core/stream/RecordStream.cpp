#include "core/stream/RecordStream.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/config/BuildInfo.h"
#include "core/config/JsonText.h"
#include "core/config/Validation.h"
#include "core/run/NumberFormat.h"
#include "core/run/RecordFields.h"
#include "core/run/RecordJson.h"

namespace ampbench::stream {
namespace {

using nlohmann::json;

/// Records are flat but for the header's environment and a numerics record's rows:
/// deeper is not a record.
constexpr std::size_t kMaxDepth = 8;

json number(double v) {
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "Infinity" : "-Infinity";
    return v;
}

/// Reads the fields of one JSON object, naming the record and field in every error.
class Fields {
  public:
    /// `where`: the part of the record these fields are in ("rows[2]"); empty: the record.
    Fields(const json& object, const char* type, int64_t line, std::string where = {})
        : o_(object), type_(type), line_(line), where_(std::move(where)) {}

    [[noreturn]] void wrong(const std::string& problem) const {
        throw StreamError(
            line_,
            std::string(type_) + " record: " + (where_.empty() ? problem : where_ + ": " + problem),
            type_);
    }

    const json& at(const char* key) const {
        const auto it = o_.find(key);
        if (it == o_.end())
            wrong(std::string("\"") + key + "\" is missing");
        return *it;
    }

    int64_t i64(const char* key) const {
        const json& v = at(key);
        if (v.is_number_integer()) {
            if (v.is_number_unsigned() &&
                v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                wrong(std::string("\"") + key + "\" is too large");
            return v.get<int64_t>();
        }
        wrong(std::string("\"") + key + "\" must be a whole number, not " + v.dump());
    }

    double real(const char* key) const {
        const json& v = at(key);
        if (v.is_number())
            return v.get<double>();
        if (v.is_null())
            return std::numeric_limits<double>::quiet_NaN();
        if (v.is_string()) {
            const auto& s = v.get_ref<const std::string&>();
            if (s == "NaN")
                return std::numeric_limits<double>::quiet_NaN();
            if (s == "Infinity")
                return std::numeric_limits<double>::infinity();
            if (s == "-Infinity")
                return -std::numeric_limits<double>::infinity();
        }
        wrong(std::string("\"") + key + "\" must be a number, \"NaN\", \"Infinity\" or " +
              "\"-Infinity\", not " + v.dump());
    }

    bool flag(const char* key) const {
        const json& v = at(key);
        if (v.is_boolean())
            return v.get<bool>();
        wrong(std::string("\"") + key + "\" must be true or false, not " + v.dump());
    }

    std::string text(const char* key) const {
        const json& v = at(key);
        if (v.is_string())
            return v.get<std::string>();
        wrong(std::string("\"") + key + "\" must be a string, not " + v.dump());
    }

    bool has(const char* key) const { return o_.contains(key); }

    /// A text the reader is allowed to miss (older writers); empty then.
    std::string optionalText(const char* key) const {
        return o_.contains(key) ? text(key) : std::string();
    }

    int64_t positive(const char* key) const {
        const int64_t v = i64(key);
        if (v < 1)
            wrong(std::string("\"") + key + "\" must be 1 or more, not " + std::to_string(v));
        return v;
    }

    /// A whole number from `lo` to `hi`; beyond them it would not fit where it is stored.
    int64_t ranged(const char* key, int64_t lo, int64_t hi) const {
        const json& v = at(key);
        if (v.is_number_integer()) {
            const bool above = v.is_number_unsigned()
                                   ? v.get<uint64_t>() > static_cast<uint64_t>(hi)
                                   : v.get<int64_t>() > hi;
            if (!above && (v.is_number_unsigned() || v.get<int64_t>() >= lo))
                return v.get<int64_t>();
        }
        wrong(std::string("\"") + key + "\" must be a whole number from " + std::to_string(lo) +
              " to " + std::to_string(hi) + ", not " + v.dump());
    }

    /// A name under the rules for names typed here.
    std::string name(const char* key) const {
        std::string v = text(key);
        if (const std::string problem = nameProblem(v); !problem.empty())
            wrong(std::string("\"") + key + "\" " + problem);
        return v;
    }

    run::RunStatus status(const char* key) const {
        const std::string s = text(key);
        try {
            return run::runStatusFromString(s);
        } catch (const std::invalid_argument&) {
            wrong("unknown status \"" + s + "\"");
        }
    }

    run::FailureKind failure(const char* key) const {
        const std::string s = text(key);
        const run::FailureKind kind = run::failureKindFromString(s);
        if (kind == run::FailureKind::None && !s.empty())
            wrong("unknown failure kind \"" + s + "\"");
        return kind;
    }

    const char* type() const { return type_; }
    int64_t line() const { return line_; }

  private:
    const json& o_;
    const char* type_;
    int64_t line_;
    std::string where_;
};

/// A numerics record's rows carry every field but the step, which is the record's.
const std::vector<run::RecordField<run::NumericsRecord>>& numericsRowFields() {
    static const auto fields = [] {
        std::vector<run::RecordField<run::NumericsRecord>> out;
        for (const auto& f : run::numericsFields()) {
            if (std::string(f.name) != "step")
                out.push_back(f);
        }
        return out;
    }();
    return fields;
}

/// The type a row record names: "step", "eval" or "event".
template <class R>
constexpr const char* rowType() {
    if constexpr (std::is_same_v<R, run::StepRecord>) {
        return "step";
    } else if constexpr (std::is_same_v<R, run::EvalRecord>) {
        return "eval";
    } else {
        static_assert(std::is_same_v<R, run::EventRecord>);
        return "event";
    }
}

/// {"type", "run", "seq", then every field of the record}.
json rowJson(const RowRecord& r) {
    return std::visit(
        [&](const auto& record) {
            using R = std::decay_t<decltype(record)>;
            json j = run::fieldsJson(run::recordFields<R>(), record, number);
            j["type"] = rowType<R>();
            j["run"] = r.run;
            j["seq"] = r.row.seq;
            return j;
        },
        r.row.record);
}

json numericsJson(const NumericsGroup& g) {
    json rows = json::array();
    for (const run::NumericsRecord& r : g.rows)
        rows.push_back(run::fieldsJson(numericsRowFields(), r, number));
    return {{"type", "numerics"}, {"run", g.run}, {"step", g.step}, {"rows", std::move(rows)}};
}

struct Encoder {
    json operator()(const Header& h) const {
        json env = json::object();
        if (!h.environment_json.empty()) {
            env = json::parse(h.environment_json, nullptr, false);
            if (env.is_discarded())
                env = h.environment_json;  // kept as text rather than lost
        }
        json j = {{"type", "header"},
                  {"stream_version", h.stream_version},
                  {"ampbench_version", h.ampbench_version},
                  {"ampbench_commit", h.ampbench_commit}};
        if (!h.database_id.empty())
            j["database_id"] = h.database_id;
        j["environment"] = std::move(env);
        return j;
    }
    json operator()(const store::ExperimentRow& e) const {
        return {{"type", "experiment"},
                {"id", e.id},
                {"name", e.name},
                {"spec_json", e.spec_json},
                {"created_at", e.created_at}};
    }
    json operator()(const store::RunRow& r) const {
        return {{"type", "run"},
                {"id", r.id},
                {"experiment_id", r.experiment_id},
                {"arm", r.arm},
                {"arm_index", r.arm_index},
                {"seed", r.seed},
                {"spec_json", r.spec_json},
                {"env_json", r.env_json},
                {"planned_steps", r.planned_steps},
                {"inputs_json", r.inputs_json},
                {"status", run::toString(r.status)},
                {"failure", run::toString(r.failure)},
                {"error", r.error},
                {"started_at", r.started_at},
                {"ended_at", r.ended_at}};
    }
    json operator()(const RowRecord& r) const { return rowJson(r); }
    json operator()(const StatusRecord& s) const {
        return {{"type", "status"},
                {"run", s.run},
                {"status", run::toString(s.status)},
                {"failure", run::toString(s.failure)},
                {"error", s.error},
                {"last_seq", s.last_seq}};
    }
    json operator()(const NumericsGroup& g) const { return numericsJson(g); }
};

Record decodeHeader(const json& j, const Fields& f) {
    Header h;
    const json& v = f.at("stream_version");
    if (!v.is_number_integer())
        f.wrong("\"stream_version\" must be a whole number, not " + v.dump());
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        f.wrong("the stream is version " + v.dump() + " and this build reads version " +
                std::to_string(kStreamVersion) + " only");
    }
    h.stream_version = v.get<int64_t>();  // judged by the reader, never narrowed
    h.ampbench_version = f.optionalText("ampbench_version");
    h.ampbench_commit = f.optionalText("ampbench_commit");
    h.database_id = f.optionalText("database_id");
    const bool id_ok = h.database_id.size() <= kMaxDatabaseIdLength &&
                       std::all_of(h.database_id.begin(), h.database_id.end(), [](char c) {
                           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                                  (c >= 'A' && c <= 'Z') || c == '-';
                       });
    if (!id_ok) {
        f.wrong("\"database_id\" must be at most " + std::to_string(kMaxDatabaseIdLength) +
                " letters, digits or -");
    }
    if (const auto it = j.find("environment"); it != j.end())
        h.environment_json = it->is_string() ? it->get<std::string>() : it->dump();
    return h;
}

/// A record whose every field is read from its key, as its type asks. A field a later
/// schema added (RecordField::since) may be missing, as from writers before it: the
/// record keeps its default then.
template <class R>
R fieldsOf(const Fields& f, const std::vector<run::RecordField<R>>& fields) {
    R record;
    run::visitFields(fields, record, [&](const auto& field, auto& value) {
        if (field.since > 0 && !f.has(field.name))
            return;
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, double>) {
            value = f.real(field.name);
        } else if constexpr (std::is_same_v<T, bool>) {
            value = f.flag(field.name);
        } else if constexpr (std::is_same_v<T, std::string>) {
            value = f.text(field.name);
        } else if constexpr (std::is_enum_v<T>) {
            const std::string text = f.text(field.name);
            try {
                value = run::EnumText<T>::parse(text);
            } catch (const std::invalid_argument&) {
                f.wrong(std::string("unknown ") + run::EnumText<T>::what + " \"" + text + "\"");
            }
        } else {
            static_assert(std::is_same_v<T, int64_t>);
            value = f.i64(field.name);
        }
    });
    return record;
}

Record decodeRow(const std::string& type, const Fields& f) {
    RowRecord r;
    r.run = f.positive("run");
    r.row.seq = f.positive("seq");
    if (type == "step") {
        r.row.record = fieldsOf(f, run::stepFields());
    } else if (type == "eval") {
        r.row.record = fieldsOf(f, run::evalFields());
    } else {
        r.row.record = fieldsOf(f, run::eventFields());
    }
    return r;
}

// Beyond their types, a row's format must be one this build knows, saturated a share
// and scale a positive finite factor (checked only where the writer sent them).
Record decodeNumerics(const Fields& f) {
    NumericsGroup g;
    g.run = f.positive("run");
    g.step = f.positive("step");
    const json& rows = f.at("rows");
    if (!rows.is_array())
        f.wrong("\"rows\" must be a list, not " + rows.dump());
    g.rows.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        const std::string where = "rows[" + std::to_string(i) + "]";
        if (!rows[i].is_object())
            f.wrong(where + " must be an object, not " + rows[i].dump());
        const Fields r(rows[i], f.type(), f.line(), where);
        run::NumericsRecord n = fieldsOf(r, numericsRowFields());
        n.step = g.step;
        if (r.has("format") && !run::numberFormatNamed(n.format))
            r.wrong("unknown number format \"" + n.format +
                    "\" (known: " + run::numberFormatNames() + ")");
        if (r.has("saturated") && !(n.saturated >= 0.0 && n.saturated <= 1.0))
            r.wrong("\"saturated\" is a share of the values, from 0 to 1, not " +
                    r.at("saturated").dump());
        if (r.has("scale") && (!(n.scale > 0.0) || !std::isfinite(n.scale)))
            r.wrong("\"scale\" must be a positive finite number, not " + r.at("scale").dump());
        g.rows.push_back(std::move(n));
    }
    return g;
}

}  // namespace

std::string encode(const Record& record) {
    // Invalid UTF-8 in a message (a path from the file system) is replaced rather
    // than ending the stream.
    return std::visit(Encoder{}, record).dump(-1, ' ', false, json::error_handler_t::replace);
}

Record decode(const std::string& line, int64_t line_number) {
    config::FieldError error;
    const auto parsed = config::parseJsonText(line, error, kMaxDepth);
    if (!parsed) {
        throw StreamError(line_number, error.field == "(file)" ? error.message
                                                               : error.field + " " + error.message);
    }
    const json& j = *parsed;
    if (!j.is_object())
        throw StreamError(line_number, "not a JSON object");
    const auto type_it = j.find("type");
    if (type_it == j.end() || !type_it->is_string())
        throw StreamError(line_number, "no \"type\" naming the record");
    const std::string& type = type_it->get_ref<const std::string&>();
    const Fields f(j, type.c_str(), line_number);
    if (type == "step" || type == "eval" || type == "event")
        return decodeRow(type, f);
    if (type == "header")
        return decodeHeader(j, f);
    if (type == "experiment") {
        store::ExperimentRow e;
        e.id = f.positive("id");
        e.name = f.name("name");
        e.spec_json = f.text("spec_json");
        e.created_at = f.optionalText("created_at");
        return e;
    }
    if (type == "run") {
        store::RunRow r;
        r.id = f.positive("id");
        r.experiment_id = f.positive("experiment_id");
        r.arm = f.name("arm");
        r.arm_index = static_cast<int>(f.ranged("arm_index", 0, std::numeric_limits<int>::max()));
        r.seed = static_cast<uint64_t>(
            f.ranged("seed", 0, static_cast<int64_t>(std::numeric_limits<int64_t>::max())));
        r.spec_json = f.text("spec_json");
        r.env_json = f.text("env_json");
        r.planned_steps = f.i64("planned_steps");
        r.inputs_json = f.text("inputs_json");
        r.status = f.status("status");
        r.failure = f.failure("failure");
        r.error = f.text("error");
        r.started_at = f.optionalText("started_at");
        r.ended_at = f.optionalText("ended_at");
        return r;
    }
    if (type == "status") {
        StatusRecord s;
        s.run = f.positive("run");
        s.status = f.status("status");
        s.failure = f.failure("failure");
        s.error = f.text("error");
        s.last_seq = f.ranged("last_seq", 0, std::numeric_limits<int64_t>::max());
        return s;
    }
    if (type == "numerics")
        return decodeNumerics(f);
    throw StreamError(line_number, "unknown record type \"" + type + "\"");
}

std::vector<NumericsGroup> numericsGroups(int64_t run, std::vector<run::NumericsRecord> rows) {
    std::stable_sort(
        rows.begin(), rows.end(),
        [](const run::NumericsRecord& a, const run::NumericsRecord& b) { return a.step < b.step; });
    std::vector<NumericsGroup> groups;
    for (run::NumericsRecord& r : rows) {
        if (groups.empty() || groups.back().step != r.step)
            groups.push_back({run, r.step, {}});
        groups.back().rows.push_back(std::move(r));
    }
    return groups;
}

Header makeHeader(const std::string& environment_json, const std::string& database_id) {
    Header h;
    h.ampbench_version = config::buildVersion();
    h.ampbench_commit = config::buildCommit();
    h.database_id = database_id;
    h.environment_json = environment_json;
    return h;
}

static_assert(kMaxNameLength == config::kMaxExperimentNameLength,
              "names from a stream follow the rules for names typed here");

std::string nameProblem(const std::string& name) {
    if (name.size() > kMaxNameLength) {
        return "must be at most " + std::to_string(kMaxNameLength) + " bytes long (it is " +
               std::to_string(name.size()) + ")";
    }
    const bool control = std::any_of(name.begin(), name.end(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return c < 0x20 || c == 0x7F;
    });
    if (control)
        return "must not contain control characters (line breaks, escapes)";
    return {};
}

}  // namespace ampbench::stream
