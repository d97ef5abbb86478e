// Step time across the ranks of a data-parallel run, read from the events rank 0
// recorded at its end.
#include <gtest/gtest.h>

#include "core/analysis/RankSpread.h"

using namespace ampbench;

namespace {

run::EventRecord info(const std::string& message, double value) {
    return {300, run::EventKind::Info, message, value};
}

}  // namespace

TEST(RankSpread, EachRanksMedianAndTheSpread) {
    const auto t = analysis::rankStepTimes({
        info("data-parallel: 2 ranks over gloo, each a shard of micro-batch 32", 0),
        info("rank 0: median step 4.00 ms (max 21.12), peak 397 MiB, 300 steps", 4.0),
        {300, run::EventKind::Warning, "rank 1: median step 9 ms", 9.0},  // not a summary
        info("rank 1: median step 5.00 ms (max 22.07), peak 397 MiB, 300 steps", 5.0),
    });
    ASSERT_EQ(t.ranks, (std::vector<int>{0, 1}));
    EXPECT_EQ(t.median_ms, (std::vector<double>{4.0, 5.0}));
    EXPECT_DOUBLE_EQ(t.min_ms, 4.0);
    EXPECT_DOUBLE_EQ(t.max_ms, 5.0);
    EXPECT_DOUBLE_EQ(t.spread(), 0.25);
}

TEST(RankSpread, ARunOfOneRankHasNone) {
    EXPECT_TRUE(analysis::rankStepTimes({info("optimizer: LibTorch torch::optim", 0)}).empty());
    EXPECT_TRUE(analysis::rankStepTimes({info("rank 0: median step 4.00 ms", 4.0)}).empty());
    EXPECT_EQ(analysis::RankStepTimes{}.spread(), 0.0);
}
