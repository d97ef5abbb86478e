// The batch prefetcher: the same seed gives the same batches, and its thread does its
// ATen work on one CPU thread (runs packed on a GPU each have one), leaving the
// thread count of the run that owns it as the run set it.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <atomic>
#include <memory>

#include "core/data/Prefetcher.h"

using ampbench::data::Batch;
using ampbench::data::Dataset;
using ampbench::data::InputShape;
using ampbench::data::Prefetcher;

namespace {

/// Rows 0..n-1 whose input is the row's index; notes the intra-op thread count its
/// caller had while it gathered.
class CountingRows final : public Dataset {
  public:
    explicit CountingRows(int64_t n) : rows_(at::arange(n, at::kFloat).view({n, 1})) {}
    InputShape shape() const override { return {}; }
    int64_t trainSize() const override { return rows_.size(0); }
    int64_t valSize() const override { return 0; }
    Batch trainBatch(const at::Tensor& idx) const override {
        threads_seen = at::get_num_threads();
        return {rows_.index_select(0, idx), idx.clone()};
    }
    Batch valBatch(int64_t, int64_t) const override { return {}; }
    bool synthetic() const override { return false; }
    mutable std::atomic<int> threads_seen{0};

  private:
    at::Tensor rows_;
};

}  // namespace

TEST(Prefetcher, ItsThreadGathersOnOneCpuThreadAndLeavesTheRunsCountAlone) {
    const int before = at::get_num_threads();
    at::set_num_threads(2);  // the run's own count, as applyCpuThreads sets it
    auto rows = std::make_shared<CountingRows>(100);
    {
        Prefetcher p(rows, 10, /*seed=*/7, /*depth=*/2, /*pin_memory=*/false);
        const Batch b = p.next();
        ASSERT_EQ(b.input.size(0), 10);
        EXPECT_EQ(rows->threads_seen.load(), 1)
            << "the loader's ATen work ran with an OpenMP team of its own";
        EXPECT_EQ(at::get_num_threads(), 2) << "the run's own thread count changed";
    }
    at::set_num_threads(before);
}

TEST(Prefetcher, TheSameSeedGivesTheSameBatches) {
    auto rows = std::make_shared<CountingRows>(50);
    Prefetcher a(rows, 8, 3, 2, false), b(rows, 8, 3, 2, false), c(rows, 8, 4, 2, false);
    bool differs = false;
    for (int i = 0; i < 12; ++i) {  // past the end of an epoch: reshuffled alike
        const Batch x = a.next(), y = b.next(), z = c.next();
        EXPECT_TRUE(at::equal(x.target, y.target)) << "batch " << i;
        EXPECT_TRUE(at::equal(x.input.view({-1}).to(at::kLong), x.target)) << "batch " << i;
        differs = differs || !at::equal(x.target, z.target);
    }
    EXPECT_TRUE(differs) << "another seed drew the same batches";
}
