// A pair's idle beside its all-to-alls, as the task graph interleaves the two passes' blocks.
#include "sim/plan/paired_pass_bound.hpp"

#include <gtest/gtest.h>

namespace {

cs::StageCost stage_of(int moe_layers, int dense_layers, double dense_s)
{
  cs::StageCost c;
  for (int l = 0; l < dense_layers; ++l)
    c.segments.push_back({"layer", l, dense_s, 2 * dense_s, 0, 0, false});
  for (int l = 0; l < moe_layers; ++l) {
    cs::Segment s{"moe_layer", dense_layers + l, dense_s, 2 * dense_s, 0, 0, false};
    s.moe = true;
    c.segments.push_back(s);
  }
  for (const auto& s : c.segments) {
    c.forward_s += s.forward_s;
    c.backward_s += s.backward_s;
  }
  return c;
}

} // namespace

TEST(PairedPassBound, EachBlockWaitsForItsOwnPassesAllToAll)
{
  // One MoE layer each side, dense parts 1 s forward and 2 s backward, experts 1 s, all-to-alls 2 s. The blocks run
  // B: join | F: dense (0-1) | B: experts (2-3, after its combine gradient) | F: experts (3-4, after its dispatch) |
  // B: join and dense (5-7, after its dispatch gradient) | F: join (7, after its combine): 7 s for 5 of compute.
  const cs::StageCost moe = stage_of(1, 0, 1.0);
  EXPECT_DOUBLE_EQ(cs::paired_idle_seconds(moe, moe, 1.0, 1.0, 2.0), 2.0);
  // All-to-alls shorter than the blocks beside them hide whole.
  EXPECT_DOUBLE_EQ(cs::paired_idle_seconds(moe, moe, 1.0, 1.0, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(cs::paired_idle_seconds(moe, moe, 1.0, 1.0, 0.0), 0.0);
  // Stages without MoE layers wait for nothing.
  const cs::StageCost dense = stage_of(0, 3, 1.0);
  EXPECT_DOUBLE_EQ(cs::paired_idle_seconds(dense, dense, 1.0, 1.0, 5.0), 0.0);
  // Longer all-to-alls idle more; more layers beside them hide more of each.
  const double two = cs::paired_idle_seconds(stage_of(2, 0, 1.0), stage_of(2, 0, 1.0), 1.0, 1.0, 3.0);
  EXPECT_GT(two, cs::paired_idle_seconds(moe, moe, 1.0, 1.0, 3.0));
  EXPECT_GT(cs::paired_idle_seconds(moe, moe, 1.0, 1.0, 3.0), 2.0);
  // A forward of dense layers beside a backward of MoE layers: the forward is cut to fill the backward's waits.
  EXPECT_LT(cs::paired_idle_seconds(stage_of(0, 4, 1.0), moe, 1.0, 1.0, 2.0), 2.0 * 2);
}
