// Layers per pipeline stage: even, and balanced by cost around the output layer.
#include "models/workloads/pipeline_training.hpp"

#include <gtest/gtest.h>
#include <numeric>

namespace {

int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

TEST(PipelinePartition, EvenSplitsGiveTheRemainderToTheFirstStages)
{
  EXPECT_EQ(cs::partition_layers(24, 4, 1, 1.0, 5.0, false), (std::vector<int>{6, 6, 6, 6}));
  EXPECT_EQ(cs::partition_layers(23, 4, 1, 1.0, 5.0, false), (std::vector<int>{6, 6, 6, 5}));
}

TEST(PipelinePartition, BalancedLightensTheOutputStage)
{
  // 24 layers of 1 s over 4 stages, output layer 3 s: the last stage keeps 4 layers (4 + 3 = 7 s), the others
  // share 20 (7, 7, 6): the slowest stage takes 7 s instead of the even split's 6 + 3 = 9 s.
  auto p = cs::partition_layers(24, 4, 1, 1.0, 3.0, true);
  EXPECT_EQ(p, (std::vector<int>{7, 7, 6, 4}));
  EXPECT_EQ(sum(p), 24);
  // No output cost: balanced is even.
  EXPECT_EQ(cs::partition_layers(24, 4, 1, 1.0, 0.0, true), (std::vector<int>{6, 6, 6, 6}));
  // A huge output layer still leaves every stage at least one layer.
  p = cs::partition_layers(8, 4, 1, 1.0, 100.0, true);
  EXPECT_EQ(p.back(), 1);
  EXPECT_EQ(sum(p), 8);
  for (int n : p)
    EXPECT_GE(n, 1);
  // Interleaved (v = 2): the last device (stages 3 and 7) keeps 4 layers, 2 per chunk; the others 7, 7, 6.
  EXPECT_EQ(cs::partition_layers(24, 4, 2, 1.0, 3.0, true), (std::vector<int>{4, 4, 3, 2, 3, 3, 3, 2}));
}

} // namespace
