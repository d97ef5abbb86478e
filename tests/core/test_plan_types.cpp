// The plan's types: a device as a type (config::Placement) and the precision formats'
// one table (config::PrecisionFormats), torch-free.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/config/Placement.h"
#include "core/config/PlannedArm.h"
#include "core/config/PrecisionFormats.h"
#include "core/config/SpecFields.h"
#include "core/config/Validation.h"
#include "core/run/NumberFormat.h"

namespace ampbench {
namespace {

using config::Placement;
using config::Precision;

TEST(Placement, ReadsTheDevicesRunsRecordAndWritesThemBack) {
    EXPECT_FALSE(Placement::parse("cpu").isCuda());
    EXPECT_EQ(Placement::parse("cpu").str(), "cpu");
    EXPECT_TRUE(Placement::parse("cuda").isCuda());
    EXPECT_EQ(Placement::parse("cuda").str(), "cuda:0");
    EXPECT_EQ(Placement::parse("cuda:3").gpu, 3);
    EXPECT_EQ(Placement::parse("cuda:3").str(), "cuda:3");
    EXPECT_EQ(Placement::parse("cuda:12"), Placement::cuda(12));
    // What is not a CUDA device name reads as the CPU, as an old row's empty field does;
    // a malformed index is the first GPU, never a crash.
    for (const std::string odd : {"", "mps", "cudax", "CUDA:0", "cpu:1"}) {
        EXPECT_FALSE(Placement::parse(odd).isCuda()) << odd;
    }
    for (const std::string odd : {"cuda:", "cuda:x", "cuda:-1", "cuda:99999999999999"}) {
        EXPECT_EQ(Placement::parse(odd), Placement::cuda(0)) << odd;
    }
    EXPECT_TRUE(config::onCuda("cuda:1"));
    EXPECT_FALSE(config::onCuda("cpu"));
    EXPECT_EQ(Placement::cuda(0, 2).onGpu(4).str(), "cuda:4");
    EXPECT_EQ(Placement::cuda(0, 2).onGpu(4).gpus, 2);
    EXPECT_EQ(Placement::cpu().onGpu(4), Placement::cpu());
}

// Every precision the spec can name has its row, under the name the spec's JSON and
// shorthand use; what a format resolves to, its numerics' format and the features that
// apply come from that row alone.
TEST(PrecisionFormats, EveryPrecisionHasOneRowThatTheRestReads) {
    std::set<std::string> names;
    for (const auto& f : config::precisionFormats()) {
        EXPECT_TRUE(names.insert(f.name).second) << "two rows named " << f.name;
        EXPECT_EQ(config::toString(f.id), f.name);
        EXPECT_EQ(config::precisionFromString(f.name), f.id);
        EXPECT_EQ(config::resolvePrecision(f.id, false), f.on_cpu);
        EXPECT_EQ(config::resolvePrecision(f.id, true), f.on_cuda);
        EXPECT_STREQ(run::formatOfArm(f.id).name, f.numerics_in) << f.name;
        EXPECT_EQ(&config::formatOf(f.id), &f);
        EXPECT_FALSE(std::string(f.what).empty()) << f.name;
        // What a format resolves to resolves to itself: planning resolves once.
        EXPECT_EQ(config::resolvePrecision(f.on_cuda, true), f.on_cuda) << f.name;
        EXPECT_EQ(config::resolvePrecision(f.on_cpu, false), f.on_cpu) << f.name;
    }
    const auto& spec_names = config::enumNames(Precision::Fp32);
    EXPECT_EQ(spec_names.size(), config::precisionFormats().size());
    EXPECT_EQ(config::resolvePrecision(Precision::Amp, true), Precision::AmpFp16);
    EXPECT_EQ(config::resolvePrecision(Precision::Amp, false), Precision::AmpBf16);
    EXPECT_TRUE(config::formatOf(Precision::AmpFp16).loss_scaler);
    EXPECT_FALSE(config::formatOf(Precision::AmpBf16).loss_scaler);
    EXPECT_TRUE(config::formatOf(Precision::PureFp16).negative_control);
    EXPECT_FALSE(config::formatOf(Precision::Fp8).fuses_seeds);
}

// A field only some formats use (fp8's) is another format's on every other arm: the
// editor greys it there and validation warns where it is set.
TEST(PrecisionFormats, AFormatsOwnFieldsAreOtherFormatsElsewhere) {
    EXPECT_FALSE(config::fieldIsOtherFormats("fp8_history", Precision::Fp8));
    EXPECT_TRUE(config::fieldIsOtherFormats("fp8_history", Precision::AmpBf16));
    EXPECT_TRUE(config::fieldIsOtherFormats("fp8_modules", Precision::Amp));
    EXPECT_FALSE(config::fieldIsOtherFormats("grad_clip", Precision::AmpBf16));
    ASSERT_NE(config::formatOwningField("fp8_recipe"), nullptr);
    EXPECT_STREQ(config::formatOwningField("fp8_recipe")->name, "fp8");
    EXPECT_EQ(config::formatOwningField("accumulation"), nullptr);
    // TF32 and FP32 islands follow the rows too.
    config::ExperimentSpec s;
    s.arms = {{"a", Precision::AmpBf16}, {"b", Precision::PureFp16}};
    s.arms[0].tf32 = true;
    s.arms[1].fp32_modules = "head";
    bool tf32 = false;
    for (const auto& e : config::validate(s)) {
        tf32 = tf32 || e.field == "arms[0].tf32";
    }
    EXPECT_TRUE(tf32);
    bool islands = false;
    for (const auto& w : config::warnings(s)) {
        islands = islands || w.field == "arms[1].fp32_modules";
    }
    EXPECT_TRUE(islands);
}

}  // namespace
}  // namespace ampbench
