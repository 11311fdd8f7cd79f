// The fluid replay of an all-to-all-v's flows: max-min fair sharing worked out by hand on small cases, the
// per-flow overhead and latency, SimGrid's latency weighting, and copies of the group on the links between switches.
#include "models/collectives/fluid_all_to_all_v.hpp"

#include "models/devices/device_catalog.hpp"
#include "platform/platform_spec.hpp"

#include <gtest/gtest.h>

namespace {

// `nodes` H100 machines of 8 GPUs, `per_leaf` machines a leaf, leaves joined `over`:1.
cs::PlatformSpec fabric(int nodes, int per_leaf, double over)
{
  cs::ClusterParams c;
  c.device = "h100-sxm5";
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.network.nics_per_node = 8;
  c.network.levels = {cs::FabricLevel{over, per_leaf, cs::Seconds{-1}}, cs::FabricLevel{}};
  return cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find("h100-sxm5"));
}

double link_rate(const cs::Topology& t, const std::string& tier)
{
  for (const auto& l : t.links())
    if (l.tier == tier)
      return l.bandwidth;
  return 0;
}

} // namespace

TEST(FluidAllToAllV, OnePairWaitsItsOverheadAndLatencyThenMovesAtTheLinkRate)
{
  const auto p = fabric(1, 1, 1);
  const auto& t = p.topology;
  cs::FluidAllToAllParams f;
  f.efficiency = 0.5;
  f.overhead = 3e-6;
  const std::vector<double> m{0, 1e6, 0, 0};
  const double nvlink = link_rate(t, "nvlink");
  ASSERT_GT(nvlink, 0);
  EXPECT_NEAR(cs::fluid_all_to_all_v_seconds(m, t, {0, 1}, {0}, f), 3e-6 + t.route_latency(0, 1) + 1e6 / (0.5 * nvlink),
              1e-12);
  f.rate_cap = nvlink / 4; // a channel's cap, on the wire
  EXPECT_NEAR(cs::fluid_all_to_all_v_seconds(m, t, {0, 1}, {0}, f),
              3e-6 + t.route_latency(0, 1) + 1e6 / (0.5 * nvlink / 4), 1e-12);
}

TEST(FluidAllToAllV, SharesAreMaxMinFair)
{
  // One machine: GPU l sends b to every n > l, all at once. GPU 0's port and GPU 7's carry seven flows each and fix
  // them at C/7; GPU 1's port and GPU 6's split what is left over five flows (6C/35), GPU 2's and 5's over three
  // (8C/35), and 3 -> 4 takes the rest (16C/35). Every flow moves at C/7 or faster, and GPU 0's seven move at C/7
  // throughout: the last ends at 7b/C.
  const auto p = fabric(1, 1, 1);
  const auto& t = p.topology;
  const double b = 1e6, c = link_rate(t, "nvlink");
  std::vector<double> m(64, 0.0);
  for (int l = 0; l < 8; ++l)
    for (int n = l + 1; n < 8; ++n)
      m[l * 8 + n] = b;
  cs::FluidAllToAllParams f;
  const std::vector<int> h{0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_NEAR(cs::fluid_all_to_all_v_seconds(m, t, h, {0}, f), t.route_latency(0, 1) + 7 * b / c, 1e-12);
  // The flows into GPU 6 from GPUs 1 to 5 alone: its port split five ways, 5b/C.
  std::vector<double> into6(64, 0.0);
  for (int l = 1; l < 6; ++l)
    into6[l * 8 + 6] = b;
  EXPECT_NEAR(cs::fluid_all_to_all_v_seconds(into6, t, h, {0}, f), t.route_latency(1, 6) + 5 * b / c, 1e-12);
}

TEST(FluidAllToAllV, AFlowsShareOfALinkGoesAsTheInverseOfItsRoutesLatency)
{
  // SimGrid's CM02 weighs each flow by 1 / its route's latency. GPU 0 receives b from GPU 8 (the same leaf) and b
  // from GPU 16 (the other leaf, a longer route); GPU 8 then sends L to GPU 24 on the same stream. GPU 8's first flow
  // has GPU 0's NIC alone until GPU 16's starts, then takes the share 1/near of 1/near + 1/far; when it ends, its
  // second flow starts. The step ends with that second flow, so the weighting decides it.
  const auto p = fabric(4, 2, 1);
  const auto& t = p.topology;
  const double b = 1e6, big = 8e6, c = link_rate(t, "nic");
  const double near = t.route_latency(8, 0), far = t.route_latency(16, 0), onward = t.route_latency(8, 24);
  ASSERT_LT(near, far);
  // Ranks: 0 = GPU 8, 1 = GPU 0, 2 = GPU 24, 3 = GPU 16; rank 0's ring order is 1 then 2.
  std::vector<double> m(16, 0.0);
  m[0 * 4 + 1] = b;
  m[0 * 4 + 2] = big;
  m[3 * 4 + 1] = b;
  cs::FluidAllToAllParams f;
  f.slots = 1;
  const double left = b - c * (far - near);
  const double first_ends = far + left * (1 / near + 1 / far) / (c / near);
  EXPECT_NEAR(cs::fluid_all_to_all_v_seconds(m, t, {8, 0, 24, 16}, {0}, f), first_ends + onward + big / c, 1e-12);
}

TEST(FluidAllToAllV, CopiesOfTheGroupTakeTheirShareOfTheUplinksOnly)
{
  // Eight machines, four a leaf, leaves joined 4:1. A group of one GPU on machine 0 sending to one on machine 4
  // (across the leaves); its copies at offsets 8, 16 and 24 (machines 1 to 3 to 5 to 7) cross the same uplink, each
  // from a NIC of its own. The leaf's uplink carries 32 NICs' worth / 4 = 8 NICs: four flows fit, so the copies
  // cost nothing; with every GPU of the first leaf sending to its peer on the second (32 flows) each gets a quarter.
  const auto p = fabric(8, 4, 4);
  const auto& t = p.topology;
  const double b = 1e6, nic = link_rate(t, "nic");
  const std::vector<double> m{0, b, 0, 0};
  cs::FluidAllToAllParams f;
  const double alone = cs::fluid_all_to_all_v_seconds(m, t, {0, 32}, {0}, f);
  EXPECT_NEAR(alone, t.route_latency(0, 32) + b / nic, 1e-12);
  EXPECT_NEAR(cs::fluid_all_to_all_v_seconds(m, t, {0, 32}, {0, 8, 16, 24}, f), alone, 1e-12);
  std::vector<int> many{0};
  for (int o = 1; o < 32; ++o)
    many.push_back(o); // every GPU of the first leaf sends to its peer on the second: 32 flows on 8 NICs' worth
  const double crowded = cs::fluid_all_to_all_v_seconds(m, t, {0, 32}, many, f);
  EXPECT_NEAR(crowded, t.route_latency(0, 32) + 4 * b / nic, 1e-9 * crowded);
}

TEST(FluidAllToAllV, EachRanksFlowsGoInRingOrderOnItsStreams)
{
  // Two ranks on one machine with one stream each: a pair of flows each way runs as one flow per direction, and a
  // rank with three peers on one stream sends them one after another.
  const auto p = fabric(1, 1, 1);
  const auto& t = p.topology;
  const double b = 1e6, c = link_rate(t, "nvlink"), lat = t.route_latency(0, 1);
  cs::FluidAllToAllParams one;
  one.slots = 1;
  std::vector<double> m(16, 0.0);
  m[0 * 4 + 1] = m[0 * 4 + 2] = m[0 * 4 + 3] = b;
  EXPECT_NEAR(cs::fluid_all_to_all_v_seconds(m, t, {0, 1, 2, 3}, {0}, one), 3 * (lat + b / c), 1e-12);
  cs::FluidAllToAllParams three;
  three.slots = 3;
  EXPECT_NEAR(cs::fluid_all_to_all_v_seconds(m, t, {0, 1, 2, 3}, {0}, three), lat + 3 * b / c, 1e-12);
}
