#include "core/config/SpecJson.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/config/JsonText.h"

namespace ampbench::config {

namespace {

using nlohmann::json;

/// JSON text of a value for an error message; long values are shortened.
std::string dumpValue(const json& value) {
    std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
    constexpr size_t kMax = 120;
    if (text.size() > kMax) {
        text = text.substr(0, kMax - 3) + "...";
    }
    return text;
}

std::string joinPath(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
}

/// Reads fields into plain structs, recording one FieldError per bad field and
/// leaving the target untouched for that field.
class Reader {
  public:
    using Field = std::function<void(const json&, const std::string&)>;
    using Fields = std::map<std::string, Field>;

    explicit Reader(std::vector<FieldError>& errors) : errors_(errors) {}

    void fail(const std::string& path, const json& value, const std::string& message) {
        errors_.push_back(FieldError{path, dumpValue(value), message});
    }

    /// Dispatches every key of `object` to its field reader; unknown keys are errors.
    void readObject(const json& object, const std::string& path, const Fields& fields) {
        if (!object.is_object()) {
            fail(path, object, "expected an object");
            return;
        }
        for (auto it = object.begin(); it != object.end(); ++it) {
            const std::string fieldPath = joinPath(path, it.key());
            const auto field = fields.find(it.key());
            if (field == fields.end()) {
                fail(fieldPath, it.value(), "unknown field");
            } else {
                field->second(it.value(), fieldPath);
            }
        }
    }

    Field string(std::string& out) {
        return [this, &out](const json& v, const std::string& path) {
            if (v.is_string()) {
                out = v.get<std::string>();
            } else {
                fail(path, v, "expected a string");
            }
        };
    }

    Field boolean(bool& out) {
        return [this, &out](const json& v, const std::string& path) {
            if (v.is_boolean()) {
                out = v.get<bool>();
            } else {
                fail(path, v, "expected true or false");
            }
        };
    }

    Field number(double& out) {
        return [this, &out](const json& v, const std::string& path) {
            if (v.is_number()) {
                out = v.get<double>();
            } else {
                fail(path, v, "expected a number");
            }
        };
    }

    template <class Int>
    Field integer(Int& out) {
        return [this, &out](const json& v, const std::string& path) {
            std::string message;
            if (toInteger(v, out, message)) {
                return;
            }
            fail(path, v, message);
        };
    }

    template <class Enum>
    Field enumeration(Enum& out, std::optional<Enum> (*parse)(const std::string&),
                      const char* allowed) {
        return [this, &out, parse, allowed](const json& v, const std::string& path) {
            const std::optional<Enum> parsed =
                v.is_string() ? parse(v.get<std::string>()) : std::nullopt;
            if (parsed) {
                out = *parsed;
            } else {
                fail(path, v, std::string("expected one of ") + allowed);
            }
        };
    }

    /// An array of integers; bad elements are reported by index and left out.
    template <class Int>
    Field integerArray(std::vector<Int>& out) {
        return [this, &out](const json& v, const std::string& path) {
            if (!v.is_array()) {
                fail(path, v, "expected an array of integers");
                return;
            }
            std::vector<Int> values;
            for (size_t i = 0; i < v.size(); ++i) {
                Int value{};
                std::string message;
                if (toInteger(v[i], value, message)) {
                    values.push_back(value);
                } else {
                    fail(path + "[" + std::to_string(i) + "]", v[i], message);
                }
            }
            out = std::move(values);
        };
    }

  private:
    template <class Int>
    static bool toInteger(const json& v, Int& out, std::string& message) {
        using Limits = std::numeric_limits<Int>;
        const std::string range = "expected an integer between " + std::to_string(Limits::min()) +
                                  " and " + std::to_string(Limits::max());
        if (v.is_number_unsigned()) {
            const auto u = v.get<uint64_t>();
            if (u > static_cast<uint64_t>(Limits::max())) {
                message = range;
                return false;
            }
            out = static_cast<Int>(u);
            return true;
        }
        if (v.is_number_integer()) {
            const auto i = v.get<int64_t>();
            if (i < 0 && !Limits::is_signed) {
                message = "expected a non-negative integer";
                return false;
            }
            if (Limits::is_signed && (i < static_cast<int64_t>(Limits::min()) ||
                                      i > static_cast<int64_t>(Limits::max()))) {
                message = range;
                return false;
            }
            out = static_cast<Int>(i);
            return true;
        }
        if (v.is_number_float()) {
            const double d = v.get<double>();
            if (!std::isfinite(d) || d != std::floor(d)) {
                message = "expected an integer";
                return false;
            }
            // Limits::max() + 1 is a power of two, exact as a double.
            const double upper = 2.0 * static_cast<double>(Limits::max() / 2 + 1);
            if (d < static_cast<double>(Limits::min()) || d >= upper) {
                message = Limits::is_signed || d >= 0 ? range : "expected a non-negative integer";
                return false;
            }
            out = static_cast<Int>(d);
            return true;
        }
        message = "expected an integer";
        return false;
    }

    std::vector<FieldError>& errors_;
};

constexpr const char* kPrecisions = "\"fp32\", \"amp\", \"amp-fp16\", \"amp-bf16\"";
constexpr const char* kLrRules = "\"linear\", \"sqrt\", \"none\"";
constexpr const char* kOptimizers = "\"sgd\", \"adamw\"";
constexpr const char* kDevices = "\"auto\", \"cpu\", \"cuda\"";

template <class J>
J write(const ScalerSpec& s) {
    return J{{"init_scale", s.init_scale},
             {"growth_factor", s.growth_factor},
             {"backoff_factor", s.backoff_factor},
             {"growth_interval", s.growth_interval}};
}

template <class J>
J write(const ModelSpec& m) {
    return J{{"name", m.name},      {"width", m.width},           {"depth", m.depth},
             {"blocks", m.blocks},  {"bottleneck", m.bottleneck}, {"heads", m.heads},
             {"dropout", m.dropout}};
}

template <class J>
J write(const DataSpec& d) {
    return J{{"name", d.name},         {"dir", d.dir},         {"val_fraction", d.val_fraction},
             {"channels", d.channels}, {"height", d.height},   {"width", d.width},
             {"classes", d.classes},   {"seq_len", d.seq_len}, {"vocab", d.vocab},
             {"prefetch", d.prefetch}};
}

template <class J>
J write(const OptimizerSpec& o) {
    return J{{"kind", toString(o.kind)},
             {"lr", o.lr},
             {"momentum", o.momentum},
             {"weight_decay", o.weight_decay},
             {"beta1", o.beta1},
             {"beta2", o.beta2},
             {"eps", o.eps}};
}

void readScaler(Reader& r, const json& j, const std::string& path, ScalerSpec& s) {
    r.readObject(j, path,
                 {{"init_scale", r.number(s.init_scale)},
                  {"growth_factor", r.number(s.growth_factor)},
                  {"backoff_factor", r.number(s.backoff_factor)},
                  {"growth_interval", r.integer(s.growth_interval)}});
}

void readModel(Reader& r, const json& j, const std::string& path, ModelSpec& m) {
    r.readObject(j, path,
                 {{"name", r.string(m.name)},
                  {"width", r.integer(m.width)},
                  {"depth", r.integer(m.depth)},
                  {"blocks", r.integerArray(m.blocks)},
                  {"bottleneck", r.boolean(m.bottleneck)},
                  {"heads", r.integer(m.heads)},
                  {"dropout", r.number(m.dropout)}});
}

void readData(Reader& r, const json& j, const std::string& path, DataSpec& d) {
    r.readObject(j, path,
                 {{"name", r.string(d.name)},
                  {"dir", r.string(d.dir)},
                  {"val_fraction", r.number(d.val_fraction)},
                  {"channels", r.integer(d.channels)},
                  {"height", r.integer(d.height)},
                  {"width", r.integer(d.width)},
                  {"classes", r.integer(d.classes)},
                  {"seq_len", r.integer(d.seq_len)},
                  {"vocab", r.integer(d.vocab)},
                  {"prefetch", r.integer(d.prefetch)}});
}

void readOptimizer(Reader& r, const json& j, const std::string& path, OptimizerSpec& o) {
    r.readObject(j, path,
                 {{"kind", r.enumeration(o.kind, &optimizerFromString, kOptimizers)},
                  {"lr", r.number(o.lr)},
                  {"momentum", r.number(o.momentum)},
                  {"weight_decay", r.number(o.weight_decay)},
                  {"beta1", r.number(o.beta1)},
                  {"beta2", r.number(o.beta2)},
                  {"eps", r.number(o.eps)}});
}

void readArm(Reader& r, const json& j, const std::string& path, ArmSpec& a) {
    r.readObject(
        j, path,
        {{"name", r.string(a.name)},
         {"precision", r.enumeration(a.precision, &precisionFromString, kPrecisions)},
         {"accumulation", r.integer(a.accumulation)},
         {"lr_rule", r.enumeration(a.lr_rule, &lrRuleFromString, kLrRules)},
         {"scaler", [&](const json& v, const std::string& p) { readScaler(r, v, p, a.scaler); }},
         {"grad_clip", r.number(a.grad_clip)},
         {"tf32", r.boolean(a.tf32)},
         {"channels_last", r.boolean(a.channels_last)},
         {"checkpointing", r.boolean(a.checkpointing)},
         {"cuda_graph", r.boolean(a.cuda_graph)},
         {"repeats", r.integer(a.repeats)}});
}

void readArms(Reader& r, const json& j, const std::string& path, std::vector<ArmSpec>& arms) {
    if (!j.is_array()) {
        r.fail(path, j, "expected an array of arm objects");
        return;
    }
    std::vector<ArmSpec> result;
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string armPath = path + "[" + std::to_string(i) + "]";
        if (!j[i].is_object()) {
            r.fail(armPath, j[i], "expected an object");
            continue;
        }
        ArmSpec arm;
        readArm(r, j[i], armPath, arm);
        result.push_back(std::move(arm));
    }
    arms = std::move(result);
}

template <class J>
J writeArm(const ArmSpec& arm) {
    return J{{"name", arm.name},
             {"precision", toString(arm.precision)},
             {"accumulation", arm.accumulation},
             {"lr_rule", toString(arm.lr_rule)},
             {"scaler", write<J>(arm.scaler)},
             {"grad_clip", arm.grad_clip},
             {"tf32", arm.tf32},
             {"channels_last", arm.channels_last},
             {"checkpointing", arm.checkpointing},
             {"cuda_graph", arm.cuda_graph},
             {"repeats", arm.repeats}};
}

template <class J>
J writeSpec(const ExperimentSpec& spec) {
    J arms = J::array();
    for (const ArmSpec& arm : spec.arms) {
        arms.push_back(writeArm<J>(arm));
    }
    return J{{"name", spec.name},
             {"model", write<J>(spec.model)},
             {"data", write<J>(spec.data)},
             {"optimizer", write<J>(spec.optimizer)},
             {"micro_batch", spec.micro_batch},
             {"steps", spec.steps},
             {"epochs", spec.epochs},
             {"warmup_steps", spec.warmup_steps},
             {"eval_interval", spec.eval_interval},
             {"eval_batches", spec.eval_batches},
             {"seeds", spec.seeds},
             {"device", toString(spec.device)},
             {"cpu_threads", spec.cpu_threads},
             {"cudnn_benchmark", spec.cudnn_benchmark},
             {"arms", std::move(arms)}};
}

}  // namespace

json toJson(const ArmSpec& arm) {
    return writeArm<json>(arm);
}

json toJson(const ExperimentSpec& spec) {
    return writeSpec<json>(spec);
}

ArmSpec armFromJson(const json& j, const std::string& path, std::vector<FieldError>& errors) {
    Reader reader(errors);
    ArmSpec arm;
    if (!j.is_object()) {
        reader.fail(path, j, "expected an object");
        return arm;
    }
    readArm(reader, j, path, arm);
    return arm;
}

ExperimentSpec specFromJson(const json& j, std::vector<FieldError>& errors) {
    ExperimentSpec spec;
    Reader r(errors);
    if (!j.is_object()) {
        r.fail("(file)", j, "expected a JSON object at the top level");
        return spec;
    }
    auto nested = [&r](auto read, auto& target) {
        return [&r, read, &target](const json& v, const std::string& p) { read(r, v, p, target); };
    };
    r.readObject(j, "",
                 {{"name", r.string(spec.name)},
                  {"model", nested(&readModel, spec.model)},
                  {"data", nested(&readData, spec.data)},
                  {"optimizer", nested(&readOptimizer, spec.optimizer)},
                  {"micro_batch", r.integer(spec.micro_batch)},
                  {"steps", r.integer(spec.steps)},
                  {"epochs", r.integer(spec.epochs)},
                  {"warmup_steps", r.integer(spec.warmup_steps)},
                  {"eval_interval", r.integer(spec.eval_interval)},
                  {"eval_batches", r.integer(spec.eval_batches)},
                  {"seeds", r.integerArray(spec.seeds)},
                  {"device", r.enumeration(spec.device, &deviceFromString, kDevices)},
                  {"cpu_threads", r.integer(spec.cpu_threads)},
                  {"cudnn_benchmark", r.boolean(spec.cudnn_benchmark)},
                  {"arms", nested(&readArms, spec.arms)}});
    return spec;
}

std::string specToJsonText(const ExperimentSpec& spec) {
    // Declaration order reads better in a hand-edited file than json's sorted keys.
    return writeSpec<nlohmann::ordered_json>(spec).dump(2, ' ', false,
                                                        json::error_handler_t::replace) +
           "\n";
}

ExperimentSpec specFromJsonText(const std::string& text, std::vector<FieldError>& errors) {
    FieldError error;
    std::optional<json> parsed = parseJsonText(text, error);
    if (!parsed) {
        errors.push_back(std::move(error));
        return ExperimentSpec{};
    }
    return specFromJson(*parsed, errors);
}

}  // namespace ampbench::config
