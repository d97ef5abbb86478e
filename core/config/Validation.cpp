#include "core/config/Validation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/config/PrecisionFormats.h"
#include "core/config/SpecFields.h"
#include "core/util/Words.h"

namespace ampbench::config {

std::string FieldError::toString() const {
    if (value.empty()) {
        return field + ": " + message;
    }
    return field + " = " + value + ": " + message;
}

std::optional<ArmFieldPath> armFieldPath(const std::string& path) {
    const std::string prefix = "arms[";
    if (path.rfind(prefix, 0) != 0) {
        return std::nullopt;
    }
    const size_t close = path.find("].", prefix.size());
    if (close == std::string::npos || close == prefix.size() || close + 2 >= path.size()) {
        return std::nullopt;
    }
    const std::string index = path.substr(prefix.size(), close - prefix.size());
    if (index.find_first_not_of("0123456789") != std::string::npos || index.size() > 9) {
        return std::nullopt;
    }
    return ArmFieldPath{static_cast<size_t>(std::stoul(index)), path.substr(close + 2)};
}

namespace {

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

std::string boolText(bool b) {
    return b ? "true" : "false";
}

std::string indexed(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

bool contains(const std::vector<std::string>& list, const std::string& v) {
    return std::find(list.begin(), list.end(), v) != list.end();
}

const std::vector<std::string>& modelNames() {
    return findField<ExperimentSpec>("model.name")->choices;
}

const std::vector<std::string>& datasetNames() {
    return findField<ExperimentSpec>("data.name")->choices;
}

struct Checker {
    std::vector<FieldError> errors;

    void add(const std::string& field, const std::string& value, const std::string& message) {
        errors.push_back(FieldError{field, value, message});
    }

    /// The allowed range or values of every field in a table that applies to `spec`.
    template <class Root>
    void fields(const ExperimentSpec& spec, const Root& root, const std::string& prefix) {
        for (const FlatField<Root>& f : flatFields<Root>()) {
            if (f.info->applies && !f.info->applies(spec)) {
                continue;
            }
            const std::string path = prefix + f.path;
            const Bounds& b = f.info->bounds;
            const FieldValue value = f.get(root);
            switch (f.kind) {
                case ValueKind::Int: {
                    const auto v = std::get<int64_t>(value);
                    if (b.any() && !b.contains(static_cast<double>(v))) {
                        add(path, std::to_string(v), "must be " + b.text());
                    }
                    break;
                }
                case ValueKind::Double: {
                    const double v = std::get<double>(value);
                    if (!std::isfinite(v)) {
                        add(path, formatDouble(v), "must be a finite number (" + b.text() + ")");
                    } else if (b.any() && !b.contains(v)) {
                        add(path, formatDouble(v), "must be " + b.text());
                    }
                    break;
                }
                case ValueKind::IntList: {
                    const auto& list = std::get<std::vector<uint64_t>>(value);
                    for (size_t i = 0; b.any() && i < list.size(); ++i) {
                        if (!b.contains(static_cast<double>(list[i]))) {
                            add(indexed(path, i), std::to_string(list[i]), "must be " + b.text());
                        }
                    }
                    break;
                }
                case ValueKind::DoubleList: {
                    const auto& list = std::get<std::vector<double>>(value);
                    for (size_t i = 0; i < list.size(); ++i) {
                        if (!std::isfinite(list[i])) {
                            add(indexed(path, i), formatDouble(list[i]), "must be a finite number");
                        } else if (b.any() && !b.contains(list[i])) {
                            add(indexed(path, i), formatDouble(list[i]), "must be " + b.text());
                        }
                    }
                    break;
                }
                case ValueKind::Choice: {
                    const auto& v = std::get<std::string>(value);
                    if (!contains(f.choices, v)) {
                        std::string list;
                        for (const std::string& c : f.choices) {
                            list += (list.empty() ? "" : ", ") + c;
                        }
                        add(path, quoted(v), "must be one of " + list);
                    }
                    break;
                }
                case ValueKind::Bool:
                case ValueKind::Text:
                    break;  // free text and switches: rules below where they have any
            }
        }
    }
};

// --- rules that tie fields together, or that no range can say ---

void checkName(Checker& c, const ExperimentSpec& s) {
    if (s.name.empty()) {
        c.add("name", quoted(s.name), "must not be empty");
    } else if (s.name.size() > kMaxExperimentNameLength) {
        c.add("name", quoted(s.name),
              "must be at most " + std::to_string(kMaxExperimentNameLength) + " bytes long");
    } else if (hasControlCharacter(s.name)) {
        c.add("name", quoted(s.name), "must not contain control characters (line breaks, escapes)");
    }
}

/// What an arm's micro-batches are called: the spec's micro_steps, or for an arm of its own
/// micro-batch the micro-steps that train as many samples (armMicroSteps).
std::string microStepsName(const ArmSpec& arm) {
    return arm.micro_batch > 0 ? "the arm's micro-steps at its micro-batch" : "micro_steps";
}

void checkSchedule(Checker& c, const ExperimentSpec& s) {
    const bool stepsUsed = s.epochs == 0;
    const bool stepsOk = !stepsUsed || (s.micro_steps >= 1 && s.micro_steps <= 1000000000);
    if (s.warmup_steps < 0 || s.warmup_steps > 100000 || !stepsUsed || !stepsOk) {
        return;
    }
    // Warm-up is excluded from timing, so every arm needs timed steps after it.
    const ArmSpec* tightest = nullptr;
    int64_t fewest = std::numeric_limits<int64_t>::max();
    for (const ArmSpec& arm : s.arms) {
        const int64_t micro = armMicroSteps(s, arm);
        if (arm.accumulation < 1 || arm.accumulation > 1024 || micro < arm.accumulation) {
            continue;  // reported at the arm
        }
        const int64_t optimizerSteps = micro / arm.accumulation;
        if (optimizerSteps < fewest) {
            fewest = optimizerSteps;
            tightest = &arm;
        }
    }
    if (tightest != nullptr && s.warmup_steps >= fewest) {
        c.add("warmup_steps", std::to_string(s.warmup_steps),
              "must be less than the " + std::to_string(fewest) + " optimizer steps of arm " +
                  quoted(tightest->name) + " (" + microStepsName(*tightest) +
                  " / accumulation = " + std::to_string(armMicroSteps(s, *tightest)) + " / " +
                  std::to_string(tightest->accumulation) + ")");
    }
}

void checkSeeds(Checker& c, const ExperimentSpec& s) {
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
        if (s.seeds[i] > kMaxSeed) {
            c.add(indexed("seeds", i), std::to_string(s.seeds[i]),
                  "must be at most " + std::to_string(kMaxSeed) +
                      " (a run's seed is stored as a 64-bit signed integer)");
        }
    }
    // An arm's offset and repeats must keep its seeds in range too.
    const auto beyond = [](uint64_t seed) { return seed > kMaxSeed; };
    if (std::any_of(s.seeds.begin(), s.seeds.end(), beyond)) {
        return;  // said of the seed itself
    }
    for (size_t a = 0; a < s.arms.size(); ++a) {
        const std::vector<uint64_t> seeds = seedsForArm(s, s.arms[a]);
        if (std::any_of(seeds.begin(), seeds.end(), beyond)) {
            c.add(indexed("arms", a) + ".seed_offset", std::to_string(s.arms[a].seed_offset),
                  "takes the arm's seeds past " + std::to_string(kMaxSeed) + ", the largest seed");
        }
    }
}

void checkModelAndData(Checker& c, const ModelSpec& m, const DataSpec& d) {
    if (m.name == "resnet" && m.blocks.size() > 8) {
        c.add("model.blocks", nlohmann::json(m.blocks).dump(), "must have at most 8 stages");
    }
    if (m.name == "transformer" && m.heads >= 1 && m.width >= 1 && m.width <= 8192 &&
        m.width % m.heads != 0) {
        c.add("model.heads", std::to_string(m.heads),
              "must divide model.width (" + std::to_string(m.width) + ") evenly");
    }
    if (contains(datasetNames(), d.name) && contains(modelNames(), m.name)) {
        if (m.name == "transformer" && d.name != "synthetic-tokens" && d.name != "arrays") {
            c.add("data.name", quoted(d.name),
                  "model transformer needs token data (synthetic-tokens, or arrays of token ids)");
        } else if (d.name == "synthetic-tokens" && m.name != "transformer" &&
                   m.name != "torchscript" && m.name != "script") {
            c.add("data.name", quoted(d.name),
                  "synthetic-tokens works only with model transformer or a model file (model is " +
                      m.name + ")");
        }
    }
    if (m.name == "transformer" && m.task != Task::Auto && m.task != Task::Tokens) {
        c.add("model.task", quoted(toString(m.task)), "model transformer predicts tokens");
    } else if (m.name != "transformer" && m.name != "torchscript" && m.name != "script" &&
               m.task == Task::Tokens) {
        c.add("model.task", quoted(toString(m.task)),
              "token prediction needs model transformer or a model file (model is " + m.name + ")");
    }
    if (d.evaluate_on == "test" && d.name != "fashion-mnist" && contains(datasetNames(), d.name)) {
        c.add("data.evaluate_on", quoted(d.evaluate_on),
              "only fashion-mnist has a test split of its own (data is " + d.name +
                  "); give your test files as data.val_path");
    }
    if (m.name == "torchscript" && m.file.empty()) {
        c.add("model.file", quoted(m.file),
              "must name the model file (a module saved with torch.jit.script(model).save)");
    }
    if (m.name == "script" && m.file.empty()) {
        c.add("model.file", quoted(m.file),
              "must name the training script (a Python file that records with "
              "ampbench.Recorder)");
    }
    if (std::string why; m.name == "script" && !util::splitWords(m.args, why)) {
        c.add("model.args", quoted(m.args), why + " (the arguments split as a shell would)");
    }
    if (fileData(d) && d.path.empty()) {
        c.add("data.path", quoted(d.path),
              "must name the " + std::string(d.name == "image-folder" ? "image folder"
                                             : d.name == "csv"        ? ".csv file"
                                                                      : ".npz or .npy file"));
    }
    if (d.name == "image-folder" && d.channels != 1 && d.channels != 3) {
        c.add("data.channels", std::to_string(d.channels),
              "must be 1 (grey) or 3 (RGB) for an image folder");
    }
}

void checkArm(Checker& c, const ExperimentSpec& s, size_t index) {
    const ArmSpec& a = s.arms[index];
    const std::string p = indexed("arms", index) + ".";
    if (a.name.empty()) {
        c.add(p + "name", quoted(a.name), "must not be empty");
    } else if (!std::all_of(a.name.begin(), a.name.end(), nameChar)) {
        c.add(p + "name", quoted(a.name), "must use only letters, digits and _ . + -");
    } else if (a.name.size() > kMaxArmNameLength) {
        c.add(p + "name", quoted(a.name),
              "must be at most " + std::to_string(kMaxArmNameLength) + " characters long");
    }
    for (size_t j = 0; j < index; ++j) {
        if (!a.name.empty() && s.arms[j].name == a.name) {
            c.add(p + "name", quoted(a.name),
                  "row " + std::to_string(j + 1) + " has this name too; arm names must be unique");
            break;
        }
    }
    c.fields(s, a, p);
    if (a.accumulation >= 1 && a.accumulation <= 1024 && s.epochs == 0 && s.micro_steps >= 1 &&
        armMicroSteps(s, a) < a.accumulation) {
        c.add(p + "accumulation", std::to_string(a.accumulation),
              "must be at most " + microStepsName(a) + " (" + std::to_string(armMicroSteps(s, a)) +
                  ") so the arm makes at least one optimizer step");
    }
    const bool knownModel = contains(modelNames(), s.model.name);
    if (a.channels_last && knownModel && s.model.name != "cnn" && s.model.name != "resnet" &&
        s.model.name != "torchscript") {
        c.add(p + "channels_last", boolText(true),
              "channels_last applies to convolutional models only: cnn, resnet or a model file "
              "(model is " +
                  s.model.name + ")");
    }
    if (a.checkpointing && knownModel && s.model.name != "resnet" &&
        s.model.name != "transformer") {
        c.add(p + "checkpointing", boolText(true),
              "checkpointing applies to resnet and transformer models only (model is " +
                  s.model.name + ")");
    }
    if (a.cuda_graph && a.ranks > 1) {
        c.add(p + "cuda_graph", boolText(true),
              "CUDA-graph capture needs ranks 1 (the gradient all-reduce is not captured; this "
              "arm has " +
                  std::to_string(a.ranks) + ")");
    }
    if (a.precision == Precision::Fp8 && knownModel &&
        (s.model.name == "torchscript" || s.model.name == "script")) {
        c.add(p + "precision", "fp8",
              "fp8 applies to the built-in models' Linear layers; a " +
                  std::string(s.model.name == "script"
                                  ? "training script sets up its own precision"
                                  : "model file's layers run inside TorchScript, where they "
                                    "cannot be swapped") +
                  " (use amp-bf16, or a built-in model)");
    }
    if (a.tf32 && !formatOf(a.precision).tf32) {
        c.add(p + "tf32", boolText(true),
              "TF32 applies to fp32 arms only (this arm is " + toString(a.precision) + ")");
    }
}

/// An arm whose K does not divide the micro-steps: the trainer makes
/// micro_steps / K (rounded down) optimizer steps of K micro-batches each and never
/// draws the rest (train::plannedOptimizerSteps).
void warnPartialStep(Checker& c, const ExperimentSpec& s, size_t index) {
    const ArmSpec& a = s.arms[index];
    const int64_t micro = armMicroSteps(s, a);
    if (s.epochs != 0 || s.micro_steps < 1 || a.accumulation <= 1 || micro < a.accumulation ||
        micro % a.accumulation == 0) {
        return;  // epochs: the count depends on the data; the rest are errors, or whole
    }
    const int64_t steps = micro / a.accumulation;
    const int64_t unused = micro % a.accumulation;
    c.add(indexed("arms", index) + ".accumulation", std::to_string(a.accumulation),
          "does not divide " + microStepsName(a) + " (" + std::to_string(micro) +
              "): the arm makes " + std::to_string(steps) + " optimizer steps of " +
              std::to_string(a.accumulation) + " micro-batches and never trains the last " +
              std::to_string(unused) + (unused == 1 ? " micro-batch" : " micro-batches"));
}

/// FP32 islands switch autocast off; an arm without autocast has nothing to switch.
void warnIslandsWithoutAutocast(Checker& c, const ExperimentSpec& s, size_t index) {
    const ArmSpec& a = s.arms[index];
    const bool blank = a.fp32_modules.find_first_not_of(" \t;,") == std::string::npos;
    if (blank || formatOf(a.precision).autocast) {
        return;
    }
    c.add(indexed("arms", index) + ".fp32_modules", a.fp32_modules,
          "has no effect on a " + toString(a.precision) +
              " arm: FP32 islands turn autocast off, and this arm runs without it");
}

/// fp8_modules picks an fp8 arm's FP8 layers; on any other arm it does nothing.
void warnFp8ModulesElsewhere(Checker& c, const ExperimentSpec& s, size_t index) {
    const ArmSpec& a = s.arms[index];
    if (!fieldIsOtherFormats("fp8_modules", a.precision) ||
        a.fp8_modules.find_first_not_of(" \t;,") == std::string::npos) {
        return;
    }
    c.add(indexed("arms", index) + ".fp8_modules", a.fp8_modules,
          "has no effect on a " + toString(a.precision) +
              " arm: it picks the Linear layers of an fp8 arm");
}

/// At most 40 characters of an arm's name, for a title.
std::string shortName(const std::string& name) {
    constexpr size_t kShown = 40;
    return name.size() > kShown ? name.substr(0, kShown) + "..." : name;
}

/// "arms[3]" (the whole arm, as JSON reading reports one that is not an object).
std::optional<size_t> wholeArmPath(const std::string& path) {
    const std::string prefix = "arms[";
    if (path.rfind(prefix, 0) != 0 || path.size() < prefix.size() + 2 || path.back() != ']') {
        return std::nullopt;
    }
    const std::string index = path.substr(prefix.size(), path.size() - prefix.size() - 1);
    if (index.find_first_not_of("0123456789") != std::string::npos || index.size() > 9) {
        return std::nullopt;
    }
    return static_cast<size_t>(std::stoul(index));
}

}  // namespace

std::vector<FieldError> warnings(const ExperimentSpec& spec) {
    Checker c;
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        warnPartialStep(c, spec, i);
        warnIslandsWithoutAutocast(c, spec, i);
        warnFp8ModulesElsewhere(c, spec, i);
    }
    return c.errors;
}

std::vector<FieldError> checkRanks(const ExperimentSpec& spec, const RankCapacity& machine) {
    Checker c;
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        const ArmSpec& a = spec.arms[i];
        if (a.ranks <= 1) {
            continue;
        }
        const std::string field = indexed("arms", i) + ".ranks";
        const std::string value = std::to_string(a.ranks);
        if (machine.cuda && !machine.nccl) {
            c.add(field, value, "data-parallel ranks on CUDA need NCCL, which this build lacks");
        } else if (const int gpus =
                       spec.gpus > 0 ? std::min(spec.gpus, machine.gpus) : machine.gpus;
                   machine.cuda && a.ranks > gpus) {
            c.add(field, value,
                  "each rank needs a GPU of its own: " + value + " ranks asked for, " +
                      std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") +
                      (gpus < machine.gpus ? " allowed (gpus)" : " visible"));
        } else if (!machine.cuda && !machine.gloo) {
            c.add(field, value,
                  "data-parallel ranks on the CPU need Gloo, which this build lacks (build with "
                  "libgloo-dev installed)");
        }
    }
    return c.errors;
}

std::string armTitle(const std::vector<ArmSpec>& arms, size_t index) {
    const std::string row = std::to_string(index + 1);
    if (index >= arms.size() || arms[index].name.empty()) {
        return "Arm in row " + row;
    }
    return "Arm \u201c" + shortName(arms[index].name) + "\u201d (row " + row + ")";
}

std::string describe(const FieldError& e, const std::vector<ArmSpec>& arms, bool labels) {
    if (const auto whole = wholeArmPath(e.field)) {
        std::string text = "Arm " + std::to_string(*whole + 1) + " in the file (not loaded)";
        return text + (e.value.empty() ? "" : " = " + e.value) + ": " + e.message;
    }
    const auto where = armFieldPath(e.field);
    if (!where) {
        // The editor names every field by its label: "Micro-steps = -5" beside an
        // arm's "Accumulation K = 0", not the JSON key.
        const auto* f = labels ? findField<ExperimentSpec>(e.field) : nullptr;
        if (!f) {
            return e.toString();
        }
        std::string label = f->info->label;
        // A section's field under the section's label: "Model › Width", not "Width".
        if (const auto dot = e.field.find('.'); dot != std::string::npos) {
            for (const auto& top : fieldsOf<ExperimentSpec>()) {
                if (e.field.compare(0, dot, top.key) == 0 && std::string(top.key).size() == dot) {
                    label = std::string(top.label) + " \xE2\x80\xBA " + label;
                }
            }
        }
        return label + (e.value.empty() ? "" : " = " + e.value) + ": " + e.message;
    }
    std::string what = where->field;
    if (labels) {
        if (const auto* f = findField<ArmSpec>(where->field)) {
            what = f->info->label;
        }
    }
    std::string text = armTitle(arms, where->arm) + ", " + what;
    if (!e.value.empty()) {
        text += " = " + e.value;
    }
    return text + ": " + e.message;
}

void renumberArmsAfterLeftOut(std::vector<FieldError>& errors) {
    std::vector<size_t> leftOut;
    for (const FieldError& e : errors) {
        if (const auto whole = wholeArmPath(e.field)) {
            leftOut.push_back(*whole);
        }
    }
    if (leftOut.empty()) {
        return;
    }
    for (FieldError& e : errors) {
        const auto where = armFieldPath(e.field);
        if (!where) {
            continue;
        }
        const auto before = static_cast<size_t>(std::count_if(
            leftOut.begin(), leftOut.end(), [&](size_t k) { return k < where->arm; }));
        if (before > 0) {
            e.field = indexed("arms", where->arm - before) + "." + where->field;
        }
    }
}

bool nameChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '+' || c == '-';
}

std::vector<FieldError> validate(const ExperimentSpec& spec) {
    Checker c;
    checkName(c, spec);
    c.fields(spec, spec, "");
    checkSchedule(c, spec);
    checkSeeds(c, spec);
    checkModelAndData(c, spec.model, spec.data);
    if (spec.optimizer.nesterov && spec.optimizer.kind == OptimizerKind::Sgd &&
        !(spec.optimizer.momentum > 0)) {
        c.add("optimizer.nesterov", boolText(true), "Nesterov momentum needs momentum > 0");
    }
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

std::optional<ValidSpec> ValidSpec::check(const ExperimentSpec& spec,
                                          std::vector<FieldError>& errors) {
    errors = validate(spec);
    if (!errors.empty()) {
        return std::nullopt;
    }
    return ValidSpec(spec);
}

}  // namespace ampbench::config
