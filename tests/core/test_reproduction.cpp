// A rerun against its original (analysis::compareRerun) and the command that makes one.
#include <gtest/gtest.h>

#include "core/analysis/Reproduction.h"
#include "tests/core/AnalysisFixtures.h"

using namespace ampbench;
using namespace ampbench::analysis;
using namespace ampbench::analysis::fixtures;

// A rerun against its original: bit for bit, within the arm's seed band, outside it,
// without a band, and unfinished.
TEST(Rerun, ComparisonNamesIdenticalWithinNoiseDifferentAndUnknown) {
    std::vector<RunData> arm;
    const double accuracies[] = {0.845, 0.850, 0.855};
    for (uint64_t s = 1; s <= 3; ++s) {
        RunShape shape;
        shape.seed = s;
        shape.accuracy = accuracies[s - 1];
        arm.push_back(makeRun(static_cast<int64_t>(s), shape));
    }
    std::vector<const RunData*> band{&arm[0], &arm[1], &arm[2]};
    const RunData& original = arm[1];

    RunData copy = original;
    copy.row.id = 10;
    copy.row.rerun_of = original.row.id;
    auto c = compareRerun(original, copy, band, true);
    EXPECT_EQ(c.agreement, RerunAgreement::Identical) << c.sentence;
    EXPECT_EQ(c.steps_identical, c.steps_compared);
    EXPECT_EQ(c.first_difference, 0);

    // Same seed, other step noise (another run id seeds it): inside the band.
    RunShape same;
    same.seed = 2;
    same.accuracy = 0.851;
    RunData near = makeRun(11, same);
    c = compareRerun(original, near, band, false);
    EXPECT_EQ(c.agreement, RerunAgreement::WithinNoise) << c.sentence;
    EXPECT_GT(c.first_difference, 0);
    EXPECT_GT(c.max_loss_difference, 0);
    EXPECT_LE(c.curve_units, 1.0);
    EXPECT_NE(c.sentence.find("without deterministic mode"), std::string::npos) << c.sentence;

    // A loss 0.2 higher all along is far outside a band about 0.04 wide.
    RunShape off = same;
    off.shift = 0.2;
    c = compareRerun(original, makeRun(12, off), band, true);
    EXPECT_EQ(c.agreement, RerunAgreement::Different) << c.sentence;
    EXPECT_GT(c.curve_units, 1.0);
    EXPECT_EQ(c.sentence.find("without deterministic mode"), std::string::npos) << c.sentence;

    // One seed: no band to judge by.
    c = compareRerun(original, near, {&original}, true);
    EXPECT_EQ(c.agreement, RerunAgreement::NoiseUnknown) << c.sentence;
    EXPECT_NE(c.sentence.find("one seed"), std::string::npos) << c.sentence;

    RunData cut = near;
    cut.row.status = run::RunStatus::Cancelled;
    cut.steps.resize(20);
    c = compareRerun(original, cut, band, true);
    EXPECT_EQ(c.agreement, RerunAgreement::Incomplete) << c.sentence;
    EXPECT_EQ(c.steps_compared, 20);
}

TEST(Rerun, CommandQuotesThePathForTheShell) {
    EXPECT_EQ(rerunCommand("/data/runs.db", 3), "ampbench-cli --db /data/runs.db rerun 3");
    EXPECT_EQ(rerunCommand("/data/my runs's.db", 3),
              "ampbench-cli --db '/data/my runs'\\''s.db' rerun 3");
}
