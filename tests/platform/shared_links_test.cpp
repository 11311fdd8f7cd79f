// Flows standing for copies of themselves: how many cross each link, what the slowest gets, what the analytical
// backend makes of a transfer that stands for them, and routes found through the switches alone.
#include "platform/platform_spec.hpp"
#include "platform/shared_links.hpp"
#include "sim/exec/executor.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>
#include <numeric>

namespace {

using cs::testing::device;

// 8 nodes x 8 GPUs, 4 nodes a leaf, leaves 2:1 oversubscribed: each leaf's uplink carries 32 x 48.5 / 2 GB/s.
cs::PlatformSpec two_leaves()
{
  cs::ClusterParams c;
  c.nodes = 8;
  c.gpus_per_node = 8;
  c.network.kind = cs::NetworkKind::FAT_TREE;
  c.network.nics_per_node = 8;
  c.network.levels = {cs::FabricLevel{2.0, 4, cs::Seconds{-1}}, cs::FabricLevel{1.0, 0, cs::Seconds{-1}}};
  return cs::build_platform_spec(c, device("h100-sxm5"));
}

std::vector<int> offsets(int n)
{
  std::vector<int> out(n);
  std::iota(out.begin(), out.end(), 0);
  return out;
}

constexpr double kNic = 50e9 * 0.97, kLeafUp = 32 * kNic / 2;

} // namespace

TEST(SharedLinks, CopiesShareTheUplinkAndNotTheirNics)
{
  const auto p = two_leaves();
  const auto& t = p.topology;
  // GPU 0 of node 0 to GPU 0 of node 4 (another leaf), with the node's eight GPUs doing the same.
  const cs::SharedLinks eight(t, cs::copied_flows(t, 0, 32, offsets(8)));
  const auto& route = t.route(0, 32);
  ASSERT_EQ(route.size(), 4u);
  EXPECT_EQ(eight.flows_on(route[0]), 1.0); // its own NIC
  EXPECT_EQ(eight.flows_on(route[1]), 8.0); // leaf0's uplink, up
  EXPECT_EQ(eight.flows_on(route[2]), 8.0); // leaf1's, down
  EXPECT_EQ(eight.flows_on(route[3]), 1.0);
  EXPECT_DOUBLE_EQ(eight.slowest_rate(), kNic); // 8 x 48.5 GB/s fit in the uplink
  // All 32 GPUs of leaf 0 to their peers under leaf 1: twice what the uplink carries.
  const cs::SharedLinks all(t, cs::copied_flows(t, 0, 32, offsets(32)));
  EXPECT_EQ(all.flows_on(route[1]), 32.0);
  EXPECT_DOUBLE_EQ(all.slowest_rate(), kLeafUp / 32);
  // Copies past the last GPU are left out; none cross a link the flows do not use.
  EXPECT_EQ(cs::copied_flows(t, 0, 32, {0, 31, 40}).size(), 2u);
  EXPECT_EQ(all.flows_on(cs::LinkUse{route[1].link, false}), 0.0);
}

TEST(SharedLinks, RingChannelsLoadTheFabricButEachItsOwnNic)
{
  const auto p = two_leaves();
  const auto& t = p.topology;
  // One rank per node on all 8 nodes: 8 edges between machines, 2 of them (0 -> 4's leaf and the wrap) cross leaves.
  const std::vector<int> hosts{0, 8, 16, 24, 32, 40, 48, 56};
  const auto flows = cs::ring_flows(t, hosts, {0}, 4);
  ASSERT_EQ(flows.size(), 8u);
  const cs::SharedLinks shared(t, flows);
  const auto& cross = t.route(24, 32);
  EXPECT_EQ(shared.flows_on(cross[1]), 4.0); // four channels up leaf0's uplink
  EXPECT_EQ(shared.flows_on(cross[0]), 1.0); // but one flow on the NIC the route starts from
  EXPECT_DOUBLE_EQ(shared.slowest_rate(), kNic);
  // Intra-node neighbours add no flow.
  EXPECT_TRUE(cs::ring_flows(t, {0, 1, 2, 3}, {0}, 1).empty());
}

TEST(SharedLinks, TheAnalyticalBackendGivesATransferItsCopiesShare)
{
  const auto p = two_leaves();
  auto seconds = [&](std::vector<int> beside) {
    cs::TaskGraph g;
    const int s = g.add_stream(0, "comm");
    g.add_transfer(s, 0, 32, 1e9, "send", {});
    g.set_flow_copies(cs::FlowCopies{std::move(beside), {}, {}});
    g.finalize();
    return cs::run_analytical(g, p, {}).makespan;
  };
  std::vector<int> leaf(31);
  std::iota(leaf.begin(), leaf.end(), 1);
  const double alone = seconds({}), eight = seconds({1, 2, 3, 4, 5, 6, 7}), thirty_two = seconds(leaf);
  EXPECT_NEAR(alone, 1e9 / kNic + 4e-6, 1e-9); // four links' latencies
  EXPECT_DOUBLE_EQ(eight, alone);              // the uplink holds eight NICs' worth
  EXPECT_NEAR(thirty_two, 1e9 / (kLeafUp / 32) + 4e-6, 1e-9);
}

TEST(SharedLinks, RoutesThroughTheSwitchesMirrorEachOther)
{
  // Every pair's route, found from the source's switch, is the reverse of the route back.
  cs::ClusterParams c;
  c.nodes = 12;
  c.gpus_per_node = 8;
  c.network.kind = cs::NetworkKind::FAT_TREE;
  c.network.nics_per_node = 8;
  c.network.levels = {cs::FabricLevel{1.0, 2, cs::Seconds{-1}}, cs::FabricLevel{3.0, 2, cs::Seconds{-1}},
                      cs::FabricLevel{1.0, 0, cs::Seconds{-1}}};
  const auto p = cs::build_platform_spec(c, device("h100-sxm5"));
  const auto& t = p.topology;
  for (int a = 0; a < t.host_count(); a += 5)
    for (int b = 0; b < t.host_count(); b += 3) {
      const auto there = t.route(a, b), back = t.route(b, a);
      ASSERT_EQ(there.size(), back.size()) << a << " " << b;
      for (std::size_t i = 0; i < there.size(); ++i) {
        EXPECT_EQ(there[i].link, back[back.size() - 1 - i].link) << a << " " << b;
        EXPECT_NE(there[i].up, back[back.size() - 1 - i].up) << a << " " << b;
      }
      EXPECT_EQ(there.size(), a == b ? 0u : t.hop_level(a, b) == 0 ? 2u : 2u * t.hop_level(a, b)) << a << " " << b;
    }
}
