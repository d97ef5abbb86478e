#include "core/config/SpecJson.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>
#include <variant>

#include "core/config/JsonText.h"
#include "core/config/SpecFields.h"

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

    /// A switch: true, false (what a spec said when it was a boolean) or "auto".
    Field toggle(Switch& out) {
        return [this, &out](const json& v, const std::string& path) {
            if (v.is_boolean()) {
                out = v.get<bool>() ? Switch::On : Switch::Off;
            } else if (auto parsed = v.is_string() ? enumFromString<Switch>(v.get<std::string>())
                                                   : std::nullopt) {
                out = *parsed;
            } else {
                fail(path, v, "expected true, false or \"auto\"");
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
    Field numberArray(std::vector<double>& out) {
        return [this, &out](const json& v, const std::string& path) {
            if (v.is_number()) {  // one value for every channel
                out = {v.get<double>()};
                return;
            }
            if (!v.is_array()) {
                fail(path, v, "expected a number or an array of numbers");
                return;
            }
            std::vector<double> values;
            for (size_t i = 0; i < v.size(); ++i) {
                if (v[i].is_number()) {
                    values.push_back(v[i].get<double>());
                } else {
                    fail(path + "[" + std::to_string(i) + "]", v[i], "expected a number");
                }
            }
            out = std::move(values);
        };
    }

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

template <class T>
constexpr bool isSection = std::is_same_v<T, ModelSpec> || std::is_same_v<T, DataSpec> ||
                           std::is_same_v<T, OptimizerSpec> || std::is_same_v<T, ScalerSpec>;

/// "\"fp32\", \"amp\", ..." for messages.
template <class E>
std::string allowedText() {
    std::string text;
    for (const std::string& name : enumChoices<E>()) {
        text += (text.empty() ? "\"" : ", \"") + name + "\"";
    }
    return text;
}

template <class J, class S>
J write(const S& s);

template <class J>
J writeArms(const std::vector<ArmSpec>& arms) {
    J out = J::array();
    for (const ArmSpec& arm : arms) {
        out.push_back(write<J>(arm));
    }
    return out;
}

/// Every field of S's table, in table order (which reads well in a hand-edited file).
template <class J, class S>
J write(const S& s) {
    J j = J::object();
    for (const auto& f : fieldsOf<S>()) {
        std::visit(
            [&](auto m) {
                using T = std::remove_cv_t<std::remove_reference_t<decltype(s.*m)>>;
                if constexpr (isSection<T>) {
                    j[f.key] = write<J>(s.*m);
                } else if constexpr (std::is_same_v<T, std::vector<ArmSpec>>) {
                    j[f.key] = writeArms<J>(s.*m);
                } else if constexpr (std::is_same_v<T, Switch>) {
                    // Written as a boolean where it is one, so older readers still read it.
                    if (s.*m == Switch::Auto) {
                        j[f.key] = enumToString(s.*m);
                    } else {
                        j[f.key] = s.*m == Switch::On;
                    }
                } else if constexpr (std::is_enum_v<T>) {
                    j[f.key] = enumToString(s.*m);
                } else {
                    j[f.key] = s.*m;
                }
            },
            f.member);
    }
    return j;
}

template <class S>
void read(Reader& r, const json& j, const std::string& path, S& s);

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
        read(r, j[i], armPath, arm);
        result.push_back(std::move(arm));
    }
    arms = std::move(result);
}

/// The reader of one field, chosen by the member's type.
template <class S, class T>
Reader::Field readerOf(Reader& r, S& s, T S::*m) {
    T& target = s.*m;
    if constexpr (isSection<T>) {
        return [&r, &target](const json& v, const std::string& p) { read(r, v, p, target); };
    } else if constexpr (std::is_same_v<T, std::vector<ArmSpec>>) {
        return [&r, &target](const json& v, const std::string& p) { readArms(r, v, p, target); };
    } else if constexpr (std::is_same_v<T, Switch>) {
        return r.toggle(target);
    } else if constexpr (std::is_enum_v<T>) {
        static const std::string allowed = allowedText<T>();
        return r.enumeration(target, &enumFromString<T>, allowed.c_str());
    } else if constexpr (std::is_same_v<T, std::string>) {
        return r.string(target);
    } else if constexpr (std::is_same_v<T, bool>) {
        return r.boolean(target);
    } else if constexpr (std::is_same_v<T, double>) {
        return r.number(target);
    } else if constexpr (std::is_integral_v<T>) {
        return r.integer(target);
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
        return r.numberArray(target);
    } else {
        return r.integerArray(target);
    }
}

/// Reads the keys of S's table (and their former names) from an object.
template <class S>
void read(Reader& r, const json& j, const std::string& path, S& s) {
    Reader::Fields fields;
    for (const auto& f : fieldsOf<S>()) {
        Reader::Field reader = std::visit([&](auto m) { return readerOf(r, s, m); }, f.member);
        if (f.alias) {
            fields[f.alias] = reader;
        }
        fields[f.key] = std::move(reader);
    }
    r.readObject(j, path, fields);
}

}  // namespace

json toJson(const ArmSpec& arm) {
    return write<json>(arm);
}

json toJson(const ExperimentSpec& spec) {
    return write<json>(spec);
}

ArmSpec armFromJson(const json& j, const std::string& path, std::vector<FieldError>& errors) {
    Reader reader(errors);
    ArmSpec arm;
    if (!j.is_object()) {
        reader.fail(path, j, "expected an object");
        return arm;
    }
    read(reader, j, path, arm);
    return arm;
}

ExperimentSpec specFromJson(const json& j, std::vector<FieldError>& errors) {
    ExperimentSpec spec;
    Reader r(errors);
    if (!j.is_object()) {
        r.fail("(file)", j, "expected a JSON object at the top level");
        return spec;
    }
    read(r, j, "", spec);
    return spec;
}

std::string specToJsonText(const ExperimentSpec& spec) {
    // Table order reads better in a hand-edited file than json's sorted keys.
    return write<nlohmann::ordered_json>(spec).dump(2, ' ', false, json::error_handler_t::replace) +
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
