#include "core/config/Validation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace ampbench::config {

std::string FieldError::toString() const {
    if (value.empty()) {
        return field + ": " + message;
    }
    return field + " = " + value + ": " + message;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// JSON text of a string for a message; a long one is cut, with its length said.
std::string quoted(const std::string& text) {
    constexpr size_t kShown = 60;
    const std::string shown = text.size() > kShown ? text.substr(0, kShown) : text;
    std::string out =
        nlohmann::json(shown).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > kShown) {
        out += "... (" + std::to_string(text.size()) + " bytes)";
    }
    return out;
}

/// Control characters in a name would reach terminals and files raw.
bool hasControlCharacter(const std::string& text) {
    return std::any_of(text.begin(), text.end(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return c < 0x20 || c == 0x7F;
    });
}

std::string formatDouble(double v) {
    if (std::isnan(v)) {
        return "nan";
    }
    if (std::isinf(v)) {
        return v > 0 ? "inf" : "-inf";
    }
    return nlohmann::json(v).dump();  // shortest text that reads back the same
}

/// Bounds in messages: integral values without a fraction ("10", not "10.0").
std::string formatBound(double v) {
    if (std::abs(v) < 1e15 && v == std::floor(v)) {
        return std::to_string(static_cast<int64_t>(v));
    }
    return formatDouble(v);
}

std::string boolText(bool b) {
    return b ? "true" : "false";
}

std::string indexed(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

/// A range of doubles in words; `hi` = inf means no upper bound.
struct Range {
    double lo;
    bool loInclusive;
    double hi;
    bool hiInclusive;

    bool contains(double v) const {
        const bool aboveLo = loInclusive ? v >= lo : v > lo;
        const bool belowHi = std::isinf(hi) || (hiInclusive ? v <= hi : v < hi);
        return aboveLo && belowHi;
    }

    std::string text(const std::string& hiText = {}) const {
        const std::string h = hiText.empty() ? formatBound(hi) : hiText;
        if (std::isinf(hi)) {
            return (loInclusive ? "at least " : "greater than ") + formatBound(lo);
        }
        if (loInclusive && hiInclusive) {
            return "between " + formatBound(lo) + " and " + h;
        }
        return (loInclusive ? "at least " : "greater than ") + formatBound(lo) +
               (hiInclusive ? " and at most " : " and less than ") + h;
    }
};

class Checker {
  public:
    std::vector<FieldError> errors;

    void add(const std::string& field, const std::string& value, const std::string& message) {
        errors.push_back(FieldError{field, value, message});
    }

    /// Integer in [lo, hi]; returns whether it is.
    bool integer(const std::string& field, int64_t v, int64_t lo, int64_t hi) {
        if (v >= lo && v <= hi) {
            return true;
        }
        add(field, std::to_string(v),
            "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
        return false;
    }

    /// Finite double within `range`; returns whether it is.
    bool number(const std::string& field, double v, const Range& range,
                const std::string& hiText = {}) {
        if (!std::isfinite(v)) {
            add(field, formatDouble(v), "must be a finite number (" + range.text(hiText) + ")");
            return false;
        }
        if (!range.contains(v)) {
            add(field, formatDouble(v), "must be " + range.text(hiText));
            return false;
        }
        return true;
    }

    void oneOf(const std::string& field, const std::string& v,
               const std::vector<std::string>& allowed) {
        if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) {
            return;
        }
        std::string list;
        for (const std::string& a : allowed) {
            list += (list.empty() ? "" : ", ") + a;
        }
        add(field, quoted(v), "must be one of " + list);
    }
};

const std::vector<std::string> kModels = {"mlp", "cnn", "resnet", "transformer"};
const std::vector<std::string> kDatasets = {"fashion-mnist", "synthetic-images",
                                            "synthetic-tokens"};

bool contains(const std::vector<std::string>& list, const std::string& v) {
    return std::find(list.begin(), list.end(), v) != list.end();
}

bool validArmNameChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '+' || c == '-';
}

void checkRun(Checker& c, const ExperimentSpec& s) {
    if (s.name.empty()) {
        c.add("name", quoted(s.name), "must not be empty");
    } else if (s.name.size() > kMaxExperimentNameLength) {
        c.add("name", quoted(s.name),
              "must be at most " + std::to_string(kMaxExperimentNameLength) + " bytes long");
    } else if (hasControlCharacter(s.name)) {
        c.add("name", quoted(s.name), "must not contain control characters (line breaks, escapes)");
    }
    c.integer("micro_batch", s.micro_batch, 1, 65536);
    c.integer("epochs", s.epochs, 0, 10000);
    const bool stepsUsed = s.epochs == 0;
    const bool stepsOk = !stepsUsed || c.integer("steps", s.steps, 1, 1000000000);
    if (c.integer("warmup_steps", s.warmup_steps, 0, 100000) && stepsUsed && stepsOk) {
        // Warm-up is excluded from timing, so every arm needs timed steps after it.
        const ArmSpec* tightest = nullptr;
        int64_t fewest = std::numeric_limits<int64_t>::max();
        for (const ArmSpec& arm : s.arms) {
            if (arm.accumulation < 1 || arm.accumulation > 1024 || s.steps < arm.accumulation) {
                continue;  // reported at the arm
            }
            const int64_t optimizerSteps = s.steps / arm.accumulation;
            if (optimizerSteps < fewest) {
                fewest = optimizerSteps;
                tightest = &arm;
            }
        }
        if (tightest != nullptr && s.warmup_steps >= fewest) {
            c.add("warmup_steps", std::to_string(s.warmup_steps),
                  "must be less than the " + std::to_string(fewest) + " optimizer steps of arm " +
                      quoted(tightest->name) +
                      " (steps / accumulation = " + std::to_string(s.steps) + " / " +
                      std::to_string(tightest->accumulation) + ")");
        }
    }
    c.integer("eval_interval", s.eval_interval, 0, 1000000000);
    c.integer("eval_batches", s.eval_batches, 0, 1000000);
    if (s.seeds.empty()) {
        c.add("seeds", "[]", "must list at least one seed");
    }
    for (size_t i = 0; i < s.seeds.size(); ++i) {
        const auto first = std::find(s.seeds.begin(), s.seeds.end(), s.seeds[i]);
        const auto firstIndex = static_cast<size_t>(first - s.seeds.begin());
        if (firstIndex != i) {
            c.add(indexed("seeds", i), std::to_string(s.seeds[i]),
                  "duplicate of " + indexed("seeds", firstIndex) + "; seeds must be distinct");
        }
    }
    c.integer("cpu_threads", s.cpu_threads, 0, 1024);
}

void checkModel(Checker& c, const ModelSpec& m) {
    c.oneOf("model.name", m.name, kModels);
    const bool widthOk = c.integer("model.width", m.width, 1, 8192);
    c.integer("model.depth", m.depth, 1, 256);
    if (m.name == "resnet") {
        if (m.blocks.size() > 8) {
            c.add("model.blocks", nlohmann::json(m.blocks).dump(), "must have at most 8 stages");
        }
        for (size_t i = 0; i < m.blocks.size(); ++i) {
            c.integer(indexed("model.blocks", i), m.blocks[i], 1, 64);
        }
    }
    if (m.name == "transformer") {
        if (m.heads < 1) {
            c.add("model.heads", std::to_string(m.heads), "must be at least 1");
        } else if (widthOk && m.width % m.heads != 0) {
            c.add("model.heads", std::to_string(m.heads),
                  "must divide model.width (" + std::to_string(m.width) + ") evenly");
        }
    }
    c.number("model.dropout", m.dropout, {0, true, 1, false});
}

void checkData(Checker& c, const DataSpec& d, const ModelSpec& m) {
    c.oneOf("data.name", d.name, kDatasets);
    if (contains(kDatasets, d.name) && contains(kModels, m.name)) {
        if (m.name == "transformer" && d.name != "synthetic-tokens") {
            c.add("data.name", quoted(d.name),
                  "model transformer needs data synthetic-tokens (the only token dataset)");
        } else if (d.name == "synthetic-tokens" && m.name != "transformer") {
            c.add("data.name", quoted(d.name),
                  "synthetic-tokens works only with model transformer (model is " + m.name + ")");
        }
    }
    c.number("data.val_fraction", d.val_fraction, {0, false, 0.5, true});
    if (d.name == "synthetic-images") {  // fashion-mnist is always 1x28x28 with 10 classes
        c.integer("data.channels", d.channels, 1, 64);
        c.integer("data.height", d.height, 1, 4096);
        c.integer("data.width", d.width, 1, 4096);
        c.integer("data.classes", d.classes, 2, 100000);
    }
    if (d.name == "synthetic-tokens") {
        c.integer("data.seq_len", d.seq_len, 2, 65536);
        c.integer("data.vocab", d.vocab, 2, 1000000);
    }
    c.integer("data.prefetch", d.prefetch, 1, 64);
}

void checkOptimizer(Checker& c, const OptimizerSpec& o) {
    c.number("optimizer.lr", o.lr, {0, false, 10, true});
    c.number("optimizer.momentum", o.momentum, {0, true, 1, false});
    c.number("optimizer.weight_decay", o.weight_decay, {0, true, 1, true});
    c.number("optimizer.beta1", o.beta1, {0, true, 1, false});
    c.number("optimizer.beta2", o.beta2, {0, true, 1, false});
    c.number("optimizer.eps", o.eps, {0, false, 1e-2, true});
}

void checkArm(Checker& c, const ExperimentSpec& s, size_t index) {
    const ArmSpec& a = s.arms[index];
    const std::string p = indexed("arms", index) + ".";
    if (a.name.empty()) {
        c.add(p + "name", quoted(a.name), "must not be empty");
    } else if (!std::all_of(a.name.begin(), a.name.end(), validArmNameChar)) {
        c.add(p + "name", quoted(a.name), "must use only letters, digits and _ . + -");
    } else if (a.name.size() > kMaxArmNameLength) {
        c.add(p + "name", quoted(a.name),
              "must be at most " + std::to_string(kMaxArmNameLength) + " characters long");
    }
    for (size_t j = 0; j < index; ++j) {
        if (!a.name.empty() && s.arms[j].name == a.name) {
            c.add(p + "name", quoted(a.name),
                  "duplicate of " + indexed("arms", j) + ".name; arm names must be unique");
            break;
        }
    }
    if (c.integer(p + "accumulation", a.accumulation, 1, 1024) && s.epochs == 0 && s.steps >= 1 &&
        s.steps < a.accumulation) {
        c.add(p + "accumulation", std::to_string(a.accumulation),
              "must be at most steps (" + std::to_string(s.steps) +
                  ") so the arm makes at least one optimizer step");
    }
    c.number(p + "scaler.init_scale", a.scaler.init_scale, {0, false, 18446744073709551616.0, true},
             "2^64");
    c.number(p + "scaler.growth_factor", a.scaler.growth_factor, {1, false, 1e3, true});
    c.number(p + "scaler.backoff_factor", a.scaler.backoff_factor, {0, false, 1, false});
    c.integer(p + "scaler.growth_interval", a.scaler.growth_interval, 1, 1000000000);
    c.number(p + "grad_clip", a.grad_clip, {0, true, kInf, false});
    c.integer(p + "repeats", a.repeats, 0, 100);
    if (a.channels_last && contains(kModels, s.model.name) && s.model.name != "cnn" &&
        s.model.name != "resnet") {
        c.add(
            p + "channels_last", boolText(true),
            "channels_last applies to cnn and resnet models only (model is " + s.model.name + ")");
    }
    if (a.checkpointing && contains(kModels, s.model.name) && s.model.name != "resnet" &&
        s.model.name != "transformer") {
        c.add(p + "checkpointing", boolText(true),
              "checkpointing applies to resnet and transformer models only (model is " +
                  s.model.name + ")");
    }
    if (a.cuda_graph && a.accumulation != 1) {
        c.add(p + "cuda_graph", boolText(true),
              "CUDA-graph capture needs accumulation 1 (this arm has " +
                  std::to_string(a.accumulation) + ")");
    }
    if (a.tf32 && a.precision != Precision::Fp32) {
        c.add(p + "tf32", boolText(true),
              "TF32 applies to fp32 arms only (this arm is " + toString(a.precision) + ")");
    }
}

}  // namespace

std::vector<FieldError> validate(const ExperimentSpec& spec) {
    Checker c;
    checkRun(c, spec);
    checkModel(c, spec.model);
    checkData(c, spec.data, spec.model);
    checkOptimizer(c, spec.optimizer);
    if (spec.arms.empty()) {
        c.add("arms", "[]", "must have at least one arm");
    } else if (spec.arms.size() > 32) {
        c.add("arms", std::to_string(spec.arms.size()) + " arms", "must have at most 32 arms");
    }
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        checkArm(c, spec, i);
    }
    return c.errors;
}

}  // namespace ampbench::config
