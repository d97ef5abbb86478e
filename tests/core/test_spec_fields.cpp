// The spec's field table is the one definition of every field: these tests hold
// each field of the table to its promises (JSON round trip, equality, validation,
// shorthand), so a field added to the table is covered without a new test.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/config/ArmShorthand.h"
#include "core/config/PlannedArm.h"
#include "core/config/Presets.h"
#include "core/config/SpecFields.h"
#include "core/config/SpecJson.h"
#include "core/config/Validation.h"

using namespace ampbench::config;

namespace {

/// A value of `field` that differs from `now` and lies inside its bounds.
FieldValue otherValue(ValueKind kind, const FieldInfo& info,
                      const std::vector<std::string>& choices, const FieldValue& now) {
    const Bounds& b = info.bounds;
    switch (kind) {
        case ValueKind::Int: {
            const auto v = std::get<int64_t>(now);
            return FieldValue(b.contains(static_cast<double>(v + 1)) ? v + 1 : v - 1);
        }
        case ValueKind::Double: {
            const double v = std::get<double>(now);
            for (double candidate : {v * 0.5, v + 0.25, v * 2.0, 0.001, 1.5}) {
                if (candidate != v && (!b.any() || b.contains(candidate))) {
                    return FieldValue(candidate);
                }
            }
            return FieldValue(v);
        }
        case ValueKind::Bool:
            return FieldValue(!std::get<bool>(now));
        case ValueKind::Text:
            return FieldValue(std::get<std::string>(now) + "x");
        case ValueKind::Choice:
            for (const auto& c : choices) {
                if (c != std::get<std::string>(now)) {
                    return FieldValue(c);
                }
            }
            return now;
        case ValueKind::IntList:
            return FieldValue(std::vector<uint64_t>{3, 5});
        case ValueKind::DoubleList:
            return FieldValue(std::vector<double>{0.5, 0.25});
    }
    return now;
}

/// A spec in which `info`'s condition holds (a ResNet's blocks need a resnet).
ExperimentSpec specWhere(const FieldInfo& info) {
    std::vector<ExperimentSpec> candidates(7, *preset("default"));
    candidates[1].model.name = "resnet";
    candidates[2].model.name = "transformer";
    candidates[2].data.name = "synthetic-tokens";
    candidates[3].data.name = "synthetic-images";
    candidates[4].optimizer.kind = OptimizerKind::AdamW;
    candidates[5].model.name = "torchscript";
    candidates[5].model.file = "model.pt";
    candidates[5].data.name = "image-folder";
    candidates[5].data.path = "images";
    candidates[6].data.name = "arrays";
    candidates[6].data.path = "train.npz";
    for (const auto& s : candidates) {
        if (!info.applies || info.applies(s)) {
            return s;
        }
    }
    ADD_FAILURE() << info.key << ": no spec in which it applies";
    return candidates[0];
}

}  // namespace

TEST(SpecFields, EveryExperimentFieldRoundTripsThroughJsonAndCountsInEquality) {
    const ExperimentSpec base = *preset("default");
    for (const auto& f : flatFields<ExperimentSpec>()) {
        ExperimentSpec changed = base;
        const FieldValue value = otherValue(f.kind, *f.info, f.choices, f.get(base));
        f.set(changed, value);
        EXPECT_NE(changed, base) << f.path << ": equality does not see the field";
        std::vector<FieldError> errors;
        const ExperimentSpec back = specFromJsonText(specToJsonText(changed), errors);
        EXPECT_TRUE(errors.empty()) << f.path;
        EXPECT_EQ(back, changed) << f.path;
        EXPECT_TRUE(f.get(back) == value) << f.path << ": not written or not read";
    }
}

TEST(SpecFields, EveryArmFieldRoundTripsThroughJsonAndCountsInEquality) {
    const ExperimentSpec base = *preset("default");
    for (const auto& f : flatFields<ArmSpec>()) {
        ExperimentSpec changed = base;
        const FieldValue value = otherValue(f.kind, *f.info, f.choices, f.get(base.arms[1]));
        f.set(changed.arms[1], value);
        EXPECT_NE(changed.arms[1], base.arms[1]) << f.path;
        EXPECT_NE(changed, base) << f.path;
        std::vector<FieldError> errors;
        const ExperimentSpec back = specFromJsonText(specToJsonText(changed), errors);
        EXPECT_TRUE(errors.empty()) << f.path;
        EXPECT_TRUE(f.get(back.arms[1]) == value) << f.path;
    }
}

TEST(SpecFields, EveryBoundedFieldIsValidatedWithItsRange) {
    int checked = 0;
    auto outside = [](const Bounds& b) {
        if (std::isfinite(b.hi)) {
            return b.hi_closed ? (b.hi >= 1e9 ? b.hi * 2 : b.hi + 1) : b.hi;
        }
        return b.lo_closed ? b.lo - 1 : b.lo;
    };
    for (const auto& f : flatFields<ExperimentSpec>()) {
        // Enumerations cannot hold a value outside their names; texts with fixed
        // values and bounded numbers can.
        if (!f.info->bounds.any() && f.info->choices.empty()) {
            continue;
        }
        ExperimentSpec s = specWhere(*f.info);
        const double bad = outside(f.info->bounds);
        std::string expected = f.path;
        if (f.kind == ValueKind::Int) {
            f.set(s, FieldValue(static_cast<int64_t>(bad)));
        } else if (f.kind == ValueKind::Double) {
            f.set(s, FieldValue(bad));
        } else if (f.kind == ValueKind::IntList) {
            f.set(s, FieldValue(std::vector<uint64_t>{static_cast<uint64_t>(std::max(0.0, bad))}));
            expected += "[0]";
        } else if (f.kind == ValueKind::DoubleList) {
            f.set(s, FieldValue(std::vector<double>{bad}));
            expected += "[0]";
        } else {
            f.set(s, FieldValue(std::string("no-such-value")));
        }
        const auto errors = validate(s);
        bool named = false;
        for (const auto& e : errors) {
            named = named || e.field == expected;
        }
        EXPECT_TRUE(named) << f.path << " = " << bad << " was not refused";
        ++checked;
    }
    for (const auto& f : flatFields<ArmSpec>()) {
        if (!f.info->bounds.any()) {
            continue;
        }
        ExperimentSpec s = *preset("default");
        const double bad = outside(f.info->bounds);
        if (f.kind == ValueKind::Int) {
            f.set(s.arms[0], FieldValue(static_cast<int64_t>(bad)));
        } else {
            f.set(s.arms[0], FieldValue(bad));
        }
        bool named = false;
        for (const auto& e : validate(s)) {
            named = named || e.field == "arms[0]." + f.path;
        }
        EXPECT_TRUE(named) << f.path << " = " << bad << " was not refused";
        ++checked;
    }
    EXPECT_GE(checked, 30);
}

TEST(SpecFields, FormerKeysStillLoad) {
    std::vector<FieldError> errors;
    const auto s = specFromJsonText(R"({"steps": 123, "arms": [{"name": "a"}]})", errors);
    EXPECT_TRUE(errors.empty());
    EXPECT_EQ(s.micro_steps, 123);
    EXPECT_NE(specToJsonText(s).find("\"micro_steps\": 123"), std::string::npos);
}

TEST(SpecFields, EveryShorthandKeyOfTheTableParses) {
    for (const auto& f : flatFields<ArmSpec>()) {
        if (!f.info->shorthand) {
            continue;
        }
        ArmSpec base;
        const FieldValue value = otherValue(f.kind, *f.info, f.choices, f.get(base));
        std::string text;
        if (f.kind == ValueKind::Int) {
            text = std::to_string(std::get<int64_t>(value));
        } else if (f.kind == ValueKind::Double) {
            text = nlohmann::json(std::get<double>(value)).dump();
        } else if (f.kind == ValueKind::Bool) {
            text = std::get<bool>(value) ? "1" : "0";
        } else {
            text = std::get<std::string>(value);
        }
        std::string error;
        const auto arm =
            parseArmShorthand("x=fp32," + std::string(f.info->shorthand) + "=" + text, error);
        ASSERT_TRUE(arm) << f.path << ": " << error;
        EXPECT_TRUE(f.get(*arm) == value) << f.path;
    }
}

TEST(SpecFields, EnumNamesRoundTrip) {
    for (const auto& n : enumNames(Precision{})) {
        EXPECT_EQ(precisionFromString(toString(n.value)), n.value);
    }
    for (const auto& n : enumNames(DeviceKind{})) {
        EXPECT_EQ(deviceFromString(n.name), n.value);
    }
    EXPECT_FALSE(lrRuleFromString("cubic"));
    EXPECT_EQ(enumChoices<OptimizerKind>(), (std::vector<std::string>{"sgd", "adamw"}));
}

TEST(PlannedArm, IsStoredAndReadAsARecord) {
    const ExperimentSpec spec = *preset("default");
    const PlannedArm planned = planArm(spec, spec.arms[2], /*cuda=*/true);
    EXPECT_EQ(planned.precision, Precision::AmpFp16);
    EXPECT_EQ(planned.effective_batch, spec.micro_batch * 4);
    EXPECT_DOUBLE_EQ(planned.lr, spec.optimizer.lr * 4);  // linear rule, K = 4
    const PlannedArm back = plannedArmFromJson(plannedArmToJson(planned));
    EXPECT_EQ(back.arm, planned.arm);
    EXPECT_EQ(back.precision, planned.precision);
    EXPECT_DOUBLE_EQ(back.lr, planned.lr);
    EXPECT_EQ(back.effective_batch, planned.effective_batch);
    EXPECT_EQ(back.resolvedOn("cpu"), Precision::AmpFp16) << "what ran, not what would run here";
}

TEST(PlannedArm, ReadsRowsOfEarlierVersions) {
    // Earlier versions stored the arm with "lr" and "effective_batch" beside it.
    const PlannedArm old = plannedArmFromJson(
        R"({"name": "amp", "precision": "amp", "accumulation": 2, "lr": 0.1,
            "effective_batch": 128, "steps_per_what": 1})");
    EXPECT_EQ(old.arm.name, "amp");
    EXPECT_EQ(old.arm.accumulation, 2);
    EXPECT_FALSE(old.precision);
    EXPECT_EQ(old.resolvedOn("cuda:0"), Precision::AmpFp16);
    EXPECT_EQ(old.resolvedOn("cpu"), Precision::AmpBf16);
    EXPECT_DOUBLE_EQ(old.lr, 0.1);
    EXPECT_EQ(old.effective_batch, 128);
    EXPECT_EQ(plannedArmFromJson("not json").arm, ArmSpec{});
}

TEST(SpecFields, ArmFieldPathsNameTheArmAndItsField) {
    const auto scaler = armFieldPath("arms[12].scaler.init_scale");
    ASSERT_TRUE(scaler);
    EXPECT_EQ(scaler->arm, 12u);
    EXPECT_EQ(scaler->field, "scaler.init_scale");
    for (const char* other : {"arms", "arms[].name", "arms[x].name", "arms[1]", "arms[1].",
                              "model.width", "seeds[1]"}) {
        EXPECT_FALSE(armFieldPath(other)) << other;
    }
}
