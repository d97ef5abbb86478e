// Experiment specs: presets, JSON in/out, validation messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <type_traits>

#include "core/config/ArmShorthand.h"
#include "core/config/ExperimentSpec.h"
#include "core/config/Presets.h"
#include "core/config/SpecJson.h"
#include "core/config/Validation.h"

namespace ampbench::config {
// Readable failure output for EXPECT_EQ on specs.
void PrintTo(const ExperimentSpec& spec, std::ostream* os) {
    *os << specToJsonText(spec);
}
void PrintTo(const FieldError& e, std::ostream* os) {
    *os << e.toString();
}
}  // namespace ampbench::config

namespace {

using namespace ampbench::config;
using nlohmann::json;

std::optional<FieldError> findError(const std::vector<FieldError>& errors,
                                    const std::string& field) {
    for (const FieldError& e : errors) {
        if (e.field == field) {
            return e;
        }
    }
    return std::nullopt;
}

std::string allErrors(const std::vector<FieldError>& errors) {
    std::string text;
    for (const FieldError& e : errors) {
        text += e.toString() + "\n";
    }
    return text;
}

ExperimentSpec defaultPreset() {
    return *preset("default");
}

// ---- presets ----

TEST(Presets, NamesInOrderAndDescribed) {
    const std::vector<std::string> expected = {"default",
                                               "compare",
                                               "smoke",
                                               "noise-band",
                                               "aa-check",
                                               "fashion-mnist-recipe",
                                               "recipe-controls",
                                               "adamw-controls",
                                               "resnet50-synthetic",
                                               "gpt2-small-synthetic",
                                               "your-model"};
    EXPECT_EQ(presetNames(), expected);
    for (const std::string& name : presetNames()) {
        EXPECT_TRUE(preset(name).has_value()) << name;
        EXPECT_FALSE(presetDescription(name).empty()) << name;
    }
    EXPECT_FALSE(preset("no-such-preset").has_value());
}

// The presets are one table: a name given twice would hide the second entry.
TEST(Presets, NamesAreUniqueAndEachBuildsTheSameSpecEveryTime) {
    const auto names = presetNames();
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
    for (const std::string& name : names) {
        EXPECT_EQ(*preset(name), *preset(name)) << name;
    }
    EXPECT_EQ(preset("smoke")->name, "fashion-mnist-smoke");
    EXPECT_EQ(preset("your-model")->model.file, "model.pt");
    EXPECT_EQ(presetDescription("no-such-preset"), "");
}

// The README's first command: the default comparison whose verdict has a noise band,
// the baseline repeated (cheaper on a CPU than its seeds fused), the AMP arms on one seed.
TEST(Presets, TheFirstComparisonHasANoiseBandAtTheLeastCost) {
    const ExperimentSpec c = *preset("compare");
    ExperimentSpec d = *preset("default");
    ASSERT_EQ(c.arms.size(), d.arms.size());
    EXPECT_EQ(seedsForArm(c, c.arms[0]), (std::vector<uint64_t>{1, 2}));
    for (size_t i = 1; i < c.arms.size(); ++i) {
        EXPECT_EQ(seedsForArm(c, c.arms[i]), std::vector<uint64_t>{1}) << c.arms[i].name;
    }
    EXPECT_FALSE(fuseSeeds(c));
    d.arms[0].repeats = 2;
    EXPECT_EQ(c, d);  // nothing else differs from the default comparison
}

// Only ValidSpec::check makes a ValidSpec, so a function that takes one may skip
// validation: nothing converts a plain spec into one.
TEST(ValidSpec, IsMadeOnlyFromASpecThatValidates) {
    static_assert(!std::is_constructible_v<ValidSpec, ExperimentSpec>);
    static_assert(!std::is_convertible_v<ExperimentSpec, ValidSpec>);
    static_assert(!std::is_default_constructible_v<ValidSpec>);
    std::vector<FieldError> errors{{"stale", "", ""}};
    const auto valid = ValidSpec::check(*preset("smoke"), errors);
    ASSERT_TRUE(valid.has_value());
    EXPECT_TRUE(errors.empty());
    EXPECT_EQ(valid->spec(), *preset("smoke"));

    ExperimentSpec bad = *preset("smoke");
    bad.micro_batch = 0;
    bad.arms.clear();
    EXPECT_FALSE(ValidSpec::check(bad, errors).has_value());
    EXPECT_EQ(allErrors(errors), allErrors(validate(bad)));
    EXPECT_GE(errors.size(), 2u);
}

TEST(Presets, EveryPresetValidatesClean) {
    for (const std::string& name : presetNames()) {
        const auto errors = validate(*preset(name));
        EXPECT_TRUE(errors.empty()) << name << ":\n" << allErrors(errors);
        const auto warned = warnings(*preset(name));
        EXPECT_TRUE(warned.empty()) << name << ":\n" << allErrors(warned);
    }
}

TEST(Presets, DefaultIsTheThreeArmComparison) {
    const ExperimentSpec s = defaultPreset();
    EXPECT_EQ(s.name, "fashion-mnist-amp");
    EXPECT_EQ(s.model.name, "cnn");
    EXPECT_EQ(s.data.name, "fashion-mnist");
    EXPECT_EQ(s.optimizer.kind, OptimizerKind::Sgd);
    EXPECT_DOUBLE_EQ(s.optimizer.weight_decay, 5e-4);
    EXPECT_EQ(s.micro_steps, 600);
    ASSERT_EQ(s.arms.size(), 3u);
    EXPECT_EQ(s.arms[0].name, "fp32");
    EXPECT_EQ(s.arms[1].precision, Precision::Amp);
    EXPECT_EQ(s.arms[2].name, "amp-accum4");
    EXPECT_EQ(s.arms[2].accumulation, 4);
    EXPECT_EQ(s.arms[2].lr_rule, LrRule::Linear);
    EXPECT_DOUBLE_EQ(scaledLearningRate(s, s.arms[2]), 0.2);

    const ExperimentSpec smoke = *preset("smoke");
    EXPECT_EQ(smoke.arms, s.arms);
    EXPECT_EQ(smoke.micro_batch, 8);
    EXPECT_EQ(smoke.micro_steps, 200);
    EXPECT_EQ(smoke.seeds, (std::vector<uint64_t>{1, 2}));
    EXPECT_TRUE(fuseSeeds(smoke));
    EXPECT_EQ(smoke.eval_interval, 0);
    EXPECT_EQ(smoke.eval_batches, 2);
    EXPECT_EQ(preset("noise-band")->seeds, (std::vector<uint64_t>{1, 2, 3}));
}

// A/A arms and negative controls: the baseline again on disjoint seeds, and the
// controls the verdict must catch.
TEST(Presets, AaCheckAndControls) {
    const ExperimentSpec aa = *preset("aa-check");
    ASSERT_EQ(aa.arms.size(), 4u);
    EXPECT_EQ(aa.arms[1].name, "fp32-again");
    ArmSpec copy = aa.arms[1];
    copy.name = aa.arms[0].name;
    copy.seed_offset = 0;
    EXPECT_EQ(copy, aa.arms[0]) << "the same settings as the baseline";
    EXPECT_EQ(seedsForArm(aa, aa.arms[1]), (std::vector<uint64_t>{101, 102, 103}));

    const ExperimentSpec c = *preset("recipe-controls");
    EXPECT_EQ(c.device, DeviceKind::Cuda);
    EXPECT_EQ(c.epochs, preset("fashion-mnist-recipe")->epochs);
    std::vector<std::string> names;
    for (const auto& a : c.arms) {
        names.push_back(a.name);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"fp32", "fp32-again", "amp-fp16-accum4", "pure-fp16",
                                               "amp-fp16-noscale", "amp-fp16-accum4-nolr"}));
    EXPECT_EQ(c.arms[3].precision, Precision::PureFp16);
    EXPECT_FALSE(c.arms[4].loss_scaling);
    EXPECT_EQ(c.arms[5].lr_rule, LrRule::None);
    EXPECT_EQ(seedsForArm(c, c.arms[1]), (std::vector<uint64_t>{1001, 1002, 1003}));

    // The second calibration recipe: AdamW, whose second moment held in fp16 underflows.
    const ExperimentSpec w = *preset("adamw-controls");
    EXPECT_EQ(w.device, DeviceKind::Cuda);
    EXPECT_EQ(w.optimizer.kind, OptimizerKind::AdamW);
    EXPECT_DOUBLE_EQ(w.optimizer.eps, 1e-8);
    names.clear();
    for (const auto& a : w.arms) {
        names.push_back(a.name);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"fp32", "fp32-again", "amp-fp16", "pure-fp16",
                                               "amp-fp16-noscale"}));
    EXPECT_EQ(w.arms[3].precision, Precision::PureFp16);
    EXPECT_FALSE(w.arms[4].loss_scaling);
    EXPECT_TRUE(w.arms[2].loss_scaling);
}

TEST(Presets, GpuPresetsMeasureThroughput) {
    for (const char* name : {"resnet50-synthetic", "gpt2-small-synthetic"}) {
        const ExperimentSpec s = *preset(name);
        EXPECT_EQ(s.device, DeviceKind::Cuda) << name;
        ASSERT_EQ(s.arms.size(), 5u) << name;
        EXPECT_TRUE(s.arms[1].tf32) << name;
        EXPECT_EQ(s.arms[4].accumulation, 4) << name;
        EXPECT_EQ(s.arms[4].lr_rule, LrRule::None) << name;
        EXPECT_DOUBLE_EQ(scaledLearningRate(s, s.arms[4]), s.optimizer.lr) << name;
    }
    EXPECT_EQ(preset("resnet50-synthetic")->model.blocks, (std::vector<int>{3, 4, 6, 3}));
    EXPECT_EQ(preset("gpt2-small-synthetic")->optimizer.kind, OptimizerKind::AdamW);
}

// ---- JSON ----

TEST(SpecJson, EveryPresetRoundTrips) {
    for (const std::string& name : presetNames()) {
        const ExperimentSpec original = *preset(name);
        std::vector<FieldError> errors;
        EXPECT_EQ(specFromJson(toJson(original), errors), original) << name;
        EXPECT_TRUE(errors.empty()) << allErrors(errors);
        EXPECT_EQ(specFromJsonText(specToJsonText(original), errors), original) << name;
        EXPECT_TRUE(errors.empty()) << allErrors(errors);
    }
}

TEST(SpecJson, NonDefaultValuesRoundTrip) {
    ExperimentSpec s = defaultPreset();
    s.data.dir = "/data/fm \"quoted\"";
    s.optimizer.lr = 0.1 + 0.2;  // not exactly representable in short decimal
    s.seeds = {0, std::numeric_limits<uint64_t>::max()};
    s.device = DeviceKind::Cpu;
    s.cudnn_benchmark = Switch::Off;
    s.arms[1].precision = Precision::AmpBf16;
    s.arms[1].lr_rule = LrRule::Sqrt;
    s.arms[1].scaler.init_scale = 1024;
    s.arms[1].grad_clip = 1.5;
    s.arms[1].channels_last = true;
    s.arms[1].checkpointing = true;
    s.arms[1].repeats = 3;
    std::vector<FieldError> errors;
    EXPECT_EQ(specFromJsonText(specToJsonText(s), errors), s);
    EXPECT_TRUE(errors.empty()) << allErrors(errors);
}

TEST(SpecJson, CudnnBenchmarkIsAutoTrueOrFalseAndOlderBooleansStillRead) {
    EXPECT_EQ(defaultPreset().cudnn_benchmark, Switch::Auto);
    for (const auto& [text, want] :
         std::vector<std::pair<std::string, Switch>>{{"true", Switch::On},
                                                     {"false", Switch::Off},
                                                     {"\"auto\"", Switch::Auto},
                                                     {"\"true\"", Switch::On}}) {
        json j = toJson(defaultPreset());
        j["cudnn_benchmark"] = json::parse(text);
        std::vector<FieldError> errors;
        const ExperimentSpec s = specFromJsonText(j.dump(), errors);
        EXPECT_TRUE(errors.empty()) << text << ": " << allErrors(errors);
        EXPECT_EQ(s.cudnn_benchmark, want) << text;
    }
    ExperimentSpec s = defaultPreset();
    s.cudnn_benchmark = Switch::On;
    EXPECT_EQ(toJson(s)["cudnn_benchmark"], json(true));  // a boolean where it is one
    s.cudnn_benchmark = Switch::Auto;
    EXPECT_EQ(toJson(s)["cudnn_benchmark"], json("auto"));
    json j = toJson(defaultPreset());
    j["cudnn_benchmark"] = "sometimes";
    std::vector<FieldError> errors;
    specFromJsonText(j.dump(), errors);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(allErrors(errors).find("cudnn_benchmark"), std::string::npos) << allErrors(errors);
    EXPECT_NE(allErrors(errors).find("auto"), std::string::npos) << allErrors(errors);
}

TEST(SpecJson, WritesEveryFieldWithSnakeCaseNames) {
    const json j = toJson(defaultPreset());
    for (const char* key : {"name", "model", "data", "optimizer", "micro_batch", "micro_steps",
                            "epochs", "warmup_steps", "eval_interval", "eval_batches", "seeds",
                            "device", "cpu_threads", "cudnn_benchmark", "arms"}) {
        EXPECT_TRUE(j.contains(key)) << key;
    }
    EXPECT_EQ(j["optimizer"]["kind"], "sgd");
    EXPECT_EQ(j["arms"][2]["precision"], "amp");
    EXPECT_EQ(j["arms"][2]["lr_rule"], "linear");
    EXPECT_EQ(j["arms"][0]["scaler"]["growth_interval"], 2000);
    EXPECT_EQ(j["device"], "auto");
}

TEST(SpecJson, MissingFieldsKeepDefaults) {
    std::vector<FieldError> errors;
    EXPECT_EQ(specFromJsonText("{}", errors), ExperimentSpec{});
    EXPECT_TRUE(errors.empty());
    const ExperimentSpec s = specFromJsonText(R"({"steps": 10, "arms": [{"name": "x"}]})", errors);
    EXPECT_EQ(s.micro_steps, 10);
    EXPECT_EQ(s.micro_batch, ExperimentSpec{}.micro_batch);
    ASSERT_EQ(s.arms.size(), 1u);
    EXPECT_EQ(s.arms[0].name, "x");
    EXPECT_EQ(s.arms[0].scaler, ScalerSpec{});
}

TEST(SpecJson, BadFieldsReportedByPathAndTheRestLoads) {
    const std::string text = R"({
        "micro_batch": "x",
        "steps": 100,
        "optimizer": {"lr": "fast", "momentum": 0.8},
        "model": "cnn",
        "arms": [{"name": "a"}, {"name": "b", "accumulation": 2.5, "tf32": 1}, 7],
        "device": "tpu"
    })";
    std::vector<FieldError> errors;
    const ExperimentSpec s = specFromJsonText(text, errors);

    const auto microBatch = findError(errors, "micro_batch");
    ASSERT_TRUE(microBatch) << allErrors(errors);
    EXPECT_EQ(microBatch->value, "\"x\"");
    EXPECT_EQ(microBatch->message, "expected an integer");
    EXPECT_EQ(findError(errors, "optimizer.lr")->message, "expected a number");
    EXPECT_EQ(findError(errors, "model")->message, "expected an object");
    EXPECT_EQ(findError(errors, "arms[1].accumulation")->value, "2.5");
    EXPECT_EQ(findError(errors, "arms[1].tf32")->message, "expected true or false");
    EXPECT_EQ(findError(errors, "arms[2]")->message, "expected an object");
    const auto device = findError(errors, "device");
    ASSERT_TRUE(device);
    EXPECT_NE(device->message.find("\"cuda\""), std::string::npos) << device->message;
    EXPECT_EQ(errors.size(), 7u) << allErrors(errors);

    EXPECT_EQ(s.micro_batch, 64);  // default kept
    EXPECT_EQ(s.micro_steps, 100);
    EXPECT_DOUBLE_EQ(s.optimizer.lr, OptimizerSpec{}.lr);
    EXPECT_DOUBLE_EQ(s.optimizer.momentum, 0.8);
    ASSERT_EQ(s.arms.size(), 2u);
    EXPECT_EQ(s.arms[1].name, "b");
    EXPECT_EQ(s.arms[1].accumulation, 1);
    EXPECT_EQ(s.device, DeviceKind::Auto);
}

TEST(SpecJson, UnknownKeysReportedByPath) {
    std::vector<FieldError> errors;
    const ExperimentSpec s = specFromJsonText(
        R"({"nmae": "x", "model": {"widht": 3, "width": 16},
            "arms": [{"name": "a", "scaler": {"init": 2}}]})",
        errors);
    ASSERT_EQ(errors.size(), 3u) << allErrors(errors);
    EXPECT_EQ(findError(errors, "nmae")->message, "unknown field");
    EXPECT_EQ(findError(errors, "model.widht")->value, "3");
    EXPECT_TRUE(findError(errors, "arms[0].scaler.init"));
    EXPECT_EQ(s.model.width, 16);
}

TEST(SpecJson, BadEnumListsAllowedValues) {
    std::vector<FieldError> errors;
    const ExperimentSpec s = specFromJsonText(
        R"({"arms": [{"name": "a", "precision": "fp64", "lr_rule": "cubic"}],
            "optimizer": {"kind": "lamb"}})",
        errors);
    ASSERT_EQ(errors.size(), 3u) << allErrors(errors);
    const auto precision = findError(errors, "arms[0].precision");
    ASSERT_TRUE(precision);
    EXPECT_EQ(precision->value, "\"fp64\"");
    for (const char* allowed : {"fp32", "amp", "amp-fp16", "amp-bf16"}) {
        EXPECT_NE(precision->message.find(allowed), std::string::npos) << precision->message;
    }
    EXPECT_NE(findError(errors, "arms[0].lr_rule")->message.find("sqrt"), std::string::npos);
    EXPECT_NE(findError(errors, "optimizer.kind")->message.find("adamw"), std::string::npos);
    EXPECT_EQ(s.arms[0].precision, Precision::Fp32);
}

TEST(SpecJson, IntegerConversions) {
    std::vector<FieldError> errors;
    ExperimentSpec s = specFromJsonText(
        R"({"micro_batch": 32.0, "steps": 1e9, "seeds": [3, 18446744073709551615]})", errors);
    EXPECT_TRUE(errors.empty()) << allErrors(errors);
    EXPECT_EQ(s.micro_batch, 32);
    EXPECT_EQ(s.micro_steps, 1000000000);
    EXPECT_EQ(s.seeds, (std::vector<uint64_t>{3, 18446744073709551615ull}));

    s = specFromJsonText(
        R"({"micro_batch": 1e12, "epochs": 3000000000, "seeds": [1, -2, 4.5, "7", 9]})", errors);
    EXPECT_EQ(findError(errors, "micro_batch")->value, "1000000000000.0");
    EXPECT_NE(findError(errors, "epochs")->message.find("2147483647"), std::string::npos);
    EXPECT_EQ(findError(errors, "seeds[1]")->message, "expected a non-negative integer");
    EXPECT_TRUE(findError(errors, "seeds[2]"));
    EXPECT_TRUE(findError(errors, "seeds[3]"));
    EXPECT_EQ(errors.size(), 5u) << allErrors(errors);
    EXPECT_EQ(s.seeds, (std::vector<uint64_t>{1, 9}));
}

TEST(SpecJson, ParseErrorIsOneFileError) {
    std::vector<FieldError> errors;
    const ExperimentSpec s = specFromJsonText("{\"name\": \"x\",\n  \"steps\": }", errors);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].field, "(file)");
    EXPECT_EQ(errors[0].value, "");
    EXPECT_EQ(errors[0].message.rfind("not valid JSON: ", 0), 0u) << errors[0].message;
    EXPECT_NE(errors[0].message.find("line 2"), std::string::npos) << errors[0].message;
    EXPECT_EQ(errors[0].message.find("[json.exception"), std::string::npos);
    EXPECT_EQ(s, ExperimentSpec{});

    errors.clear();
    specFromJsonText("[1, 2]", errors);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].field, "(file)");
    EXPECT_NE(errors[0].message.find("object"), std::string::npos);
}

// ---- validation ----

TEST(Validation, MessageNamesFieldValueAndRange) {
    ExperimentSpec s = defaultPreset();
    s.micro_batch = 0;
    const auto errors = validate(s);
    ASSERT_EQ(errors.size(), 1u) << allErrors(errors);
    EXPECT_EQ(errors[0].toString(), "micro_batch = 0: must be between 1 and 65536");
}

// A run's seed is stored as a 64-bit signed integer, so a seed above 2^63 - 1 (or one
// an arm's offset takes there) is refused where it is given: stored, 2^64 - 1 read back
// as -1 in the file.
TEST(Validation, SeedsBeyondWhatTheStoreHoldsAreRefused) {
    ExperimentSpec s = defaultPreset();
    s.seeds = {1, kMaxSeed};
    EXPECT_TRUE(validate(s).empty()) << allErrors(validate(s));
    s.seeds = {1, kMaxSeed + 1, 18446744073709551615ull};
    auto errors = validate(s);
    EXPECT_EQ(findError(errors, "seeds[1]")->toString(),
              "seeds[1] = 9223372036854775808: must be at most 9223372036854775807 (a run's seed "
              "is stored as a 64-bit signed integer)");
    EXPECT_TRUE(findError(errors, "seeds[2]"));
    EXPECT_EQ(errors.size(), 2u) << allErrors(errors);
    s.seeds = {kMaxSeed - 5};
    s.arms[1].seed_offset = 10;
    errors = validate(s);
    ASSERT_EQ(errors.size(), 1u) << allErrors(errors);
    EXPECT_EQ(errors[0].field, "arms[1].seed_offset");
}

TEST(Validation, ArmAccumulationAndNames) {
    ExperimentSpec s = defaultPreset();
    s.arms[1].accumulation = 0;
    s.arms[2].name = "fp32";
    s.arms.push_back(s.arms[0]);
    s.arms[3].name = "bad name!";
    const auto errors = validate(s);
    EXPECT_EQ(findError(errors, "arms[1].accumulation")->toString(),
              "arms[1].accumulation = 0: must be between 1 and 1024");
    const auto duplicate = findError(errors, "arms[2].name");
    ASSERT_TRUE(duplicate) << allErrors(errors);
    EXPECT_NE(duplicate->message.find("unique"), std::string::npos);
    EXPECT_NE(findError(errors, "arms[3].name")->message.find("letters, digits"),
              std::string::npos);

    s = defaultPreset();
    s.arms[0].name = "";
    EXPECT_EQ(findError(validate(s), "arms[0].name")->message, "must not be empty");
    s.arms.clear();
    EXPECT_TRUE(findError(validate(s), "arms"));
}

// Messages shown to people name an arm by its name and row, never by "arms[2]".
// The editor's wording names the experiment's fields by their labels too (a section's
// under the section's), as it does an arm's; the CLI's keeps the JSON keys.
TEST(Validation, WithLabelsEveryFieldIsNamedByItsLabel) {
    ExperimentSpec s = defaultPreset();
    s.micro_steps = -5;
    s.model.width = -3;
    const auto errors = validate(s);
    const auto steps = findError(errors, "micro_steps");
    const auto width = findError(errors, "model.width");
    ASSERT_TRUE(steps && width) << allErrors(errors);
    EXPECT_EQ(describe(*steps, s.arms, /*labels=*/true).rfind("Micro-steps = -5: ", 0), 0u)
        << describe(*steps, s.arms, true);
    EXPECT_EQ(describe(*width, s.arms, /*labels=*/true).rfind("Model \u203a Width = -3: ", 0), 0u)
        << describe(*width, s.arms, true);
    EXPECT_EQ(describe(*steps, s.arms), steps->toString());
}

TEST(Validation, ProblemsNameTheArmByNameAndRow) {
    ExperimentSpec s = defaultPreset();
    s.arms[1].accumulation = 0;
    s.arms[2].name = "fp32";
    auto errors = validate(s);
    ASSERT_FALSE(errors.empty());
    const auto duplicate = findError(errors, "arms[2].name");
    ASSERT_TRUE(duplicate) << allErrors(errors);
    EXPECT_EQ(describe(*duplicate, s.arms),
              "Arm \u201c"
              "fp32\u201d (row 3), name = \"fp32\": row 1 has this name too; arm "
              "names must be unique");
    EXPECT_EQ(describe(*findError(errors, "arms[1].accumulation"), s.arms, /*labels=*/true),
              "Arm \u201c"
              "amp\u201d (row 2), Accumulation K = 0: must be between 1 and 1024");
    for (const FieldError& e : errors) {
        EXPECT_EQ(describe(e, s.arms).find("arms["), std::string::npos) << describe(e, s.arms);
    }
    s.arms[0].name = "";
    EXPECT_EQ(describe(*findError(validate(s), "arms[0].name"), s.arms),
              "Arm in row 1, name = \"\": must not be empty");
    // Problems not about an arm read as before.
    EXPECT_EQ(describe({"micro_batch", "0", "must be between 1 and 65536"}, s.arms),
              "micro_batch = 0: must be between 1 and 65536");
}

// An arm of a file that is not an object is left out; the errors of the arms after
// it name the rows those arms load into, and the one left out its place in the file.
TEST(Validation, FileErrorsNameTheRowsTheArmsLoadInto) {
    std::vector<FieldError> errors;
    const ExperimentSpec s = specFromJsonText(
        R"({"arms": [7, {"name": "b", "precision": "fp4"}, {"name": "c", "tf32": 1}]})", errors);
    ASSERT_EQ(s.arms.size(), 2u);
    renumberArmsAfterLeftOut(errors);
    ASSERT_TRUE(findError(errors, "arms[0].precision")) << allErrors(errors);
    ASSERT_TRUE(findError(errors, "arms[1].tf32")) << allErrors(errors);
    EXPECT_EQ(describe(*findError(errors, "arms[0].precision"), s.arms)
                  .rfind("Arm \u201c"
                         "b\u201d (row 1), precision = \"fp4\": expected one of",
                         0),
              0u);
    EXPECT_EQ(describe(*findError(errors, "arms[1].tf32"), s.arms),
              "Arm \u201c"
              "c\u201d (row 2), tf32 = 1: expected true or false");
    EXPECT_EQ(describe(*findError(errors, "arms[0]"), s.arms),
              "Arm 1 in the file (not loaded) = 7: expected an object");
}

// The trainer makes micro_steps / K optimizer steps (rounded down) and never draws
// the rest: a warning says how many, and the spec still runs.
TEST(Validation, AccumulationThatLeavesMicroBatchesUnusedIsAWarning) {
    ExperimentSpec s = defaultPreset();  // arm 3, "amp-accum4", has K = 4
    s.micro_steps = 602;
    EXPECT_TRUE(validate(s).empty()) << allErrors(validate(s));
    auto warned = warnings(s);
    ASSERT_EQ(warned.size(), 1u) << allErrors(warned);
    EXPECT_EQ(warned[0].field, "arms[2].accumulation");
    EXPECT_EQ(describe(warned[0], s.arms),
              "Arm \u201c"
              "amp-accum4\u201d (row 3), accumulation = 4: does not divide "
              "micro_steps (602): the arm makes 150 optimizer steps of 4 micro-batches and never "
              "trains the last 2 micro-batches");
    s.micro_steps = 601;
    ASSERT_EQ(warnings(s).size(), 1u);
    EXPECT_NE(warnings(s)[0].message.find("the last 1 micro-batch"), std::string::npos)
        << warnings(s)[0].message;

    s.micro_steps = 600;  // a multiple of every K
    EXPECT_TRUE(warnings(s).empty()) << allErrors(warnings(s));
    s.micro_steps = 3;  // fewer than K: an error, not a warning as well
    EXPECT_TRUE(findError(validate(s), "arms[2].accumulation"));
    EXPECT_TRUE(warnings(s).empty()) << allErrors(warnings(s));
    s.micro_steps = 602;
    s.epochs = 2;  // the step count follows from the data
    EXPECT_TRUE(warnings(s).empty()) << allErrors(warnings(s));
}

TEST(Validation, StepsMustCoverAccumulationAndWarmup) {
    ExperimentSpec s = defaultPreset();
    s.micro_steps = 2;
    s.warmup_steps = 0;
    auto errors = validate(s);
    const auto accumulation = findError(errors, "arms[2].accumulation");
    ASSERT_TRUE(accumulation) << allErrors(errors);
    EXPECT_NE(accumulation->message.find("at least one optimizer step"), std::string::npos);
    EXPECT_EQ(errors.size(), 1u) << allErrors(errors);

    s.micro_steps = 20;  // the accumulation-4 arm makes 5 optimizer steps
    s.warmup_steps = 5;
    errors = validate(s);
    ASSERT_EQ(errors.size(), 1u) << allErrors(errors);
    EXPECT_EQ(errors[0].field, "warmup_steps");
    EXPECT_NE(errors[0].message.find("amp-accum4"), std::string::npos) << errors[0].message;

    s.epochs = 2;  // steps no longer decide the length
    s.micro_steps = 0;
    EXPECT_TRUE(validate(s).empty()) << allErrors(validate(s));
}

TEST(Validation, ModelAndDataPairing) {
    ExperimentSpec s = defaultPreset();
    s.model.name = "transformer";
    s.model.heads = 4;
    auto errors = validate(s);
    const auto data = findError(errors, "data.name");
    ASSERT_TRUE(data) << allErrors(errors);
    EXPECT_NE(data->message.find("synthetic-tokens"), std::string::npos);

    s = defaultPreset();
    s.data.name = "synthetic-tokens";
    errors = validate(s);
    ASSERT_TRUE(findError(errors, "data.name")) << allErrors(errors);
    EXPECT_NE(findError(errors, "data.name")->message.find("transformer"), std::string::npos);

    s = *preset("gpt2-small-synthetic");
    s.model.heads = 5;
    EXPECT_NE(findError(validate(s), "model.heads")->message.find("768"), std::string::npos);

    s = defaultPreset();
    s.model.name = "vgg";
    EXPECT_NE(findError(validate(s), "model.name")->message.find("resnet"), std::string::npos);

    s = defaultPreset();  // fashion-mnist ignores the synthetic image shape
    s.data.channels = 0;
    s.data.height = -1;
    EXPECT_TRUE(validate(s).empty());
    s.data.name = "synthetic-images";
    errors = validate(s);
    EXPECT_TRUE(findError(errors, "data.channels"));
    EXPECT_TRUE(findError(errors, "data.height"));
}

TEST(Validation, YourOwnModelAndDataNameTheirFiles) {
    ExperimentSpec s = defaultPreset();
    s.model.name = "torchscript";
    s.data.name = "arrays";
    auto errors = validate(s);
    ASSERT_TRUE(findError(errors, "model.file")) << allErrors(errors);
    EXPECT_NE(findError(errors, "model.file")->message.find("torch.jit.script"), std::string::npos);
    ASSERT_TRUE(findError(errors, "data.path")) << allErrors(errors);
    EXPECT_NE(findError(errors, "data.path")->message.find(".npz"), std::string::npos);
    s.model.file = "net.pt";
    s.data.path = "train.npz";
    s.data.mean = {0.5, std::nan("")};
    s.data.std = {0.0};
    errors = validate(s);
    EXPECT_TRUE(findError(errors, "data.mean[1]")) << allErrors(errors);
    EXPECT_TRUE(findError(errors, "data.std[0]")) << allErrors(errors);
    s.data.mean = {0.5};
    s.data.std = {0.25};
    EXPECT_TRUE(validate(s).empty()) << allErrors(validate(s));
    s.arms[0].channels_last = true;  // a model file may be convolutional
    EXPECT_TRUE(validate(s).empty()) << allErrors(validate(s));

    s.data.name = "image-folder";
    s.data.channels = 2;
    EXPECT_NE(findError(validate(s), "data.channels")->message.find("1 (grey) or 3"),
              std::string::npos);

    s = defaultPreset();
    s.model.task = Task::Tokens;
    EXPECT_TRUE(findError(validate(s), "model.task"));
    s = *preset("gpt2-small-synthetic");
    s.model.task = Task::Regression;
    EXPECT_NE(findError(validate(s), "model.task")->message.find("predicts tokens"),
              std::string::npos);
}

TEST(Validation, ArmFeaturesNeedTheRightModelAndPrecision) {
    ExperimentSpec s = defaultPreset();
    s.arms[1].tf32 = true;
    s.arms[0].checkpointing = true;  // cnn has no checkpointing
    auto errors = validate(s);
    EXPECT_EQ(findError(errors, "arms[1].tf32")->message.rfind("TF32 applies to fp32 arms only", 0),
              0u);
    EXPECT_TRUE(findError(errors, "arms[0].checkpointing"));
    EXPECT_EQ(errors.size(), 2u) << allErrors(errors);

    s = defaultPreset();
    s.model.name = "mlp";
    s.arms[0].channels_last = true;
    EXPECT_TRUE(findError(validate(s), "arms[0].channels_last"));
}

TEST(Validation, NonFiniteDoublesAreErrors) {
    ExperimentSpec s = defaultPreset();
    s.optimizer.lr = std::nan("");
    s.arms[2].grad_clip = std::numeric_limits<double>::infinity();
    s.model.dropout = -std::numeric_limits<double>::infinity();
    const auto errors = validate(s);
    ASSERT_EQ(errors.size(), 3u) << allErrors(errors);
    const auto lr = findError(errors, "optimizer.lr");
    ASSERT_TRUE(lr);
    EXPECT_EQ(lr->value, "nan");
    EXPECT_NE(lr->message.find("finite"), std::string::npos);
    EXPECT_NE(lr->message.find("greater than 0 and at most 10"), std::string::npos);
    EXPECT_EQ(findError(errors, "arms[2].grad_clip")->value, "inf");
}

TEST(Validation, DoubleRangesInWords) {
    ExperimentSpec s = defaultPreset();
    s.optimizer.lr = 0;
    s.optimizer.momentum = 1;
    s.optimizer.eps = 0.5;
    s.data.val_fraction = 0.6;
    s.arms[1].scaler.growth_factor = 1;
    s.arms[1].scaler.init_scale = 1e30;
    const auto errors = validate(s);
    EXPECT_EQ(findError(errors, "optimizer.lr")->toString(),
              "optimizer.lr = 0.0: must be greater than 0 and at most 10");
    EXPECT_EQ(findError(errors, "optimizer.momentum")->message,
              "must be at least 0 and less than 1");
    EXPECT_EQ(findError(errors, "optimizer.eps")->message,
              "must be greater than 0 and at most 0.01");
    EXPECT_EQ(findError(errors, "data.val_fraction")->message,
              "must be greater than 0 and at most 0.5");
    EXPECT_TRUE(findError(errors, "arms[1].scaler.growth_factor"));
    EXPECT_NE(findError(errors, "arms[1].scaler.init_scale")->message.find("2^64"),
              std::string::npos);
    EXPECT_EQ(errors.size(), 6u) << allErrors(errors);
}

TEST(Validation, SeedsAndEverythingReportedAtOnce) {
    ExperimentSpec s = defaultPreset();
    s.seeds = {4, 5, 4};
    s.name = "";
    s.cpu_threads = 5000;
    s.arms[0].repeats = 101;
    auto errors = validate(s);
    EXPECT_EQ(errors.size(), 4u) << allErrors(errors);
    EXPECT_NE(findError(errors, "seeds[2]")->message.find("seeds[0]"), std::string::npos);
    EXPECT_TRUE(findError(errors, "name"));
    EXPECT_TRUE(findError(errors, "cpu_threads"));
    EXPECT_TRUE(findError(errors, "arms[0].repeats"));
    s = defaultPreset();
    s.seeds.clear();
    EXPECT_TRUE(findError(validate(s), "seeds"));
}

// ---- helpers ----

TEST(ExperimentSpec, SeedsForArm) {
    ExperimentSpec s;
    s.seeds = {5, 2};
    ArmSpec arm;
    EXPECT_EQ(seedsForArm(s, arm), (std::vector<uint64_t>{5, 2}));
    arm.repeats = 1;
    EXPECT_EQ(seedsForArm(s, arm), (std::vector<uint64_t>{5}));
    arm.repeats = 4;
    EXPECT_EQ(seedsForArm(s, arm), (std::vector<uint64_t>{5, 2, 6, 7}));
    // An A/A copy of the baseline on disjoint seeds.
    arm.repeats = 0;
    arm.seed_offset = 100;
    EXPECT_EQ(seedsForArm(s, arm), (std::vector<uint64_t>{105, 102}));
    arm.repeats = 3;
    EXPECT_EQ(seedsForArm(s, arm), (std::vector<uint64_t>{105, 102, 106}));
    std::string error;
    auto parsed = parseArmShorthand("fp32-again=fp32,seed_offset=1000", error);
    ASSERT_TRUE(parsed) << error;
    EXPECT_EQ(parsed->seed_offset, 1000);
}

TEST(ExperimentSpec, ScaledLearningRate) {
    ExperimentSpec s;
    s.optimizer.lr = 0.05;
    ArmSpec arm;
    arm.accumulation = 4;
    arm.lr_rule = LrRule::Linear;
    EXPECT_DOUBLE_EQ(scaledLearningRate(s, arm), 0.2);
    arm.lr_rule = LrRule::Sqrt;
    EXPECT_DOUBLE_EQ(scaledLearningRate(s, arm), 0.1);
    arm.lr_rule = LrRule::None;
    EXPECT_DOUBLE_EQ(scaledLearningRate(s, arm), 0.05);
    arm.accumulation = 1;
    arm.lr_rule = LrRule::Linear;
    EXPECT_DOUBLE_EQ(scaledLearningRate(s, arm), 0.05);
}

TEST(ExperimentSpec, EnumStringsRoundTrip) {
    for (Precision p : {Precision::Fp32, Precision::Amp, Precision::AmpFp16, Precision::AmpBf16}) {
        EXPECT_EQ(precisionFromString(toString(p)), p);
    }
    for (LrRule r : {LrRule::Linear, LrRule::Sqrt, LrRule::None}) {
        EXPECT_EQ(lrRuleFromString(toString(r)), r);
    }
    EXPECT_EQ(toString(Precision::AmpBf16), "amp-bf16");
    EXPECT_EQ(optimizerFromString("adamw"), OptimizerKind::AdamW);
    EXPECT_EQ(deviceFromString("cuda"), DeviceKind::Cuda);
    EXPECT_FALSE(precisionFromString("FP32").has_value());
    EXPECT_FALSE(deviceFromString("").has_value());
}

TEST(ExperimentSpec, EqualityComparesEveryMember) {
    const ExperimentSpec a = defaultPreset();
    ExperimentSpec b = a;
    EXPECT_EQ(a, b);
    b.arms[2].scaler.growth_interval = 1;
    EXPECT_NE(a, b);
    b = a;
    b.cudnn_benchmark = Switch::Off;
    EXPECT_NE(a, b);
    b = a;
    b.data.prefetch = 9;
    EXPECT_NE(a, b);
}

}  // namespace

TEST(ArmShorthand, NoTurnsASwitchOffAndPureFp16IsAPrecision) {
    std::string error;
    auto arm = parseArmShorthand("ctl=amp-fp16,noscale", error);
    ASSERT_TRUE(arm) << error;
    EXPECT_FALSE(arm->loss_scaling);
    arm = parseArmShorthand("half=pure-fp16", error);
    ASSERT_TRUE(arm) << error;
    EXPECT_EQ(arm->precision, Precision::PureFp16);
    EXPECT_FALSE(parseArmShorthand("x=fp32,nosuch", error));
}
