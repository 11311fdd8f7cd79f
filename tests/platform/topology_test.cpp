#include "platform/platform_spec.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>
#include <set>

namespace {

using cs::testing::device;

cs::ClusterParams gpu_cluster(int nodes, const std::string& kind, int nics = 8)
{
  cs::ClusterParams c;
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.network.kind = cs::spelled(cs::kNetworkKinds, kind);
  c.network.nics_per_node = nics;
  return c;
}

std::vector<std::string> link_names(const cs::Topology& t, int a, int b)
{
  std::vector<std::string> out;
  for (const auto& u : t.route(a, b))
    out.push_back(t.links()[u.link].name + (u.up ? ":up" : ":down"));
  return out;
}

} // namespace

TEST(Topology, NvswitchNodeIsOneHopInside)
{
  auto p = cs::build_platform_spec(gpu_cluster(2, "fat-tree"), device("h100-sxm5"));
  const auto& t = p.topology;
  EXPECT_EQ(t.host_count(), 16);
  EXPECT_EQ(link_names(t, 0, 3), (std::vector<std::string>{"node0/gpu0/nvlink:up", "node0/gpu3/nvlink:down"}));
  EXPECT_DOUBLE_EQ(t.route_bandwidth(0, 3), 370.8e9); // what NCCL moves over NVLink4 (topo.h), not the 450 line rate
  EXPECT_EQ(t.hop_level(0, 3), 0);
}

TEST(Topology, FatTreeCrossesNicsAndLeaf)
{
  // 2 nodes x 8 NICs: 32 ports per leaf serve 4 nodes, so both nodes sit under leaf0.
  auto p = cs::build_platform_spec(gpu_cluster(2, "fat-tree"), device("h100-sxm5"));
  const auto& t = p.topology;
  EXPECT_EQ(link_names(t, 0, 9), (std::vector<std::string>{"node0/nic0:up", "node1/nic1:down"}));
  EXPECT_EQ(t.hop_level(0, 9), 1);
  EXPECT_DOUBLE_EQ(t.route_bandwidth(0, 9), 50e9 * 0.97); // 400 Gb/s at the default NIC efficiency
  EXPECT_DOUBLE_EQ(t.route_latency(0, 9), 2e-6);
}

TEST(Topology, TwoLevelFatTreeWithOversubscription)
{
  auto c = gpu_cluster(8, "fat-tree");
  c.network.levels = {cs::FabricLevel{2.0, 4, cs::Seconds{-1}}, cs::FabricLevel{1.0, 0, cs::Seconds{-1}}};
  auto p = cs::build_platform_spec(c, device("h100-sxm5"));
  const auto& t = p.topology;
  // node0 and node4 are under different leaves: NIC, leaf0 uplink, leaf1 uplink (down), NIC.
  EXPECT_EQ(link_names(t, 0, 32),
            (std::vector<std::string>{"node0/nic0:up", "leaf0/uplink:up", "leaf1/uplink:down", "node4/nic0:down"}));
  // A leaf has 4 nodes x 8 NICs x 48.5 GB/s = 1.552 TB/s down; oversubscription 2 leaves 776 GB/s up.
  for (const auto& l : t.links())
    if (l.name == "leaf0/uplink") {
      EXPECT_DOUBLE_EQ(l.bandwidth, 776e9);
    }
  EXPECT_EQ(t.hop_level(0, 32), 2);
  EXPECT_EQ(t.hop_level(0, 8), 1);
}

TEST(Topology, EcmpSplitsUplinksIntoPortsAndHashesEachPairOntoOne)
{
  auto c = gpu_cluster(8, "fat-tree");
  c.network.levels = {cs::FabricLevel{2.0, 4, cs::Seconds{-1}}, cs::FabricLevel{1.0, 0, cs::Seconds{-1}}};
  c.network.routing = cs::FabricRouting::ECMP;
  auto p = cs::build_platform_spec(c, device("h100-sxm5"));
  const auto& t = p.topology;
  // 776 GB/s of leaf uplink at 2:1 is 16 ports of one NIC's 48.5 GB/s, each its own link.
  int ports = 0;
  for (const auto& l : t.links())
    if (l.name.rfind("leaf0/uplink", 0) == 0) {
      ++ports;
      EXPECT_DOUBLE_EQ(l.bandwidth, 48.5e9);
      EXPECT_EQ(l.tier, "leaf-uplink");
    }
  EXPECT_EQ(ports, 16);
  // A pair crosses one port of each leaf, the same spine plane on both sides; pairs spread over the ports.
  std::set<std::string> used;
  for (int dst = 32; dst < 64; ++dst) {
    const auto path = link_names(t, 0, dst);
    ASSERT_EQ(path.size(), 4u);
    const auto up = path[1].substr(std::string("leaf0/uplink").size());
    const auto down = path[2].substr(std::string("leaf1/uplink").size());
    EXPECT_EQ(up.substr(0, up.find(':')), down.substr(0, down.find(':'))) << dst;
    used.insert(path[1]);
    EXPECT_EQ(link_names(t, 0, dst), path); // the same pair always takes the same port
  }
  EXPECT_GT(used.size(), 8u);
  EXPECT_LT(used.size(), 32u);
  // Inside a leaf nothing changes; another seed moves some pairs to other ports.
  EXPECT_EQ(link_names(t, 0, 9), (std::vector<std::string>{"node0/nic0:up", "node1/nic1:down"}));
  c.network.ecmp_seed = 7;
  auto q = cs::build_platform_spec(c, device("h100-sxm5"));
  int moved = 0;
  for (int dst = 32; dst < 64; ++dst)
    moved += link_names(q.topology, 0, dst) != link_names(t, 0, dst);
  EXPECT_GT(moved, 0);
}

TEST(Topology, ThreeLevelTreeHasPods)
{
  auto c = gpu_cluster(16, "fat-tree");
  c.network.levels = {cs::FabricLevel{1, 2, {-1}}, cs::FabricLevel{4, 2, {-1}}, cs::FabricLevel{1, 0, {-1}}};
  auto p = cs::build_platform_spec(c, device("h100-sxm5"));
  const auto& t = p.topology;
  // 16 nodes / 2 per leaf = 8 leaves; 2 leaves per pod = 4 pods under the core.
  auto path = link_names(t, 0, 15 * 8);
  EXPECT_EQ(path, (std::vector<std::string>{"node0/nic0:up", "leaf0/uplink:up", "pod0/uplink:up", "pod3/uplink:down",
                                            "leaf7/uplink:down", "node15/nic0:down"}));
  EXPECT_EQ(t.hop_level(0, 15 * 8), 3);
  EXPECT_EQ(t.hop_level(0, 2 * 8), 2);
}

TEST(Topology, RailOptimizedKeepsRailsApart)
{
  auto p = cs::build_platform_spec(gpu_cluster(4, "rail-optimized"), device("h100-sxm5"));
  const auto& t = p.topology;
  // Same rail: one leaf hop. Different rails: up to the spine and back.
  EXPECT_EQ(link_names(t, 3, 8 + 3), (std::vector<std::string>{"node0/nic3:up", "node1/nic3:down"}));
  EXPECT_EQ(link_names(t, 3, 8 + 4), (std::vector<std::string>{"node0/nic3:up", "rail3/leaf0/uplink:up",
                                                               "rail4/leaf0/uplink:down", "node1/nic4:down"}));
}

TEST(Topology, SharedNicPerNode)
{
  auto p = cs::build_platform_spec(gpu_cluster(2, "star", 1), device("a100-sxm4-80gb"));
  const auto& t = p.topology;
  EXPECT_EQ(link_names(t, 5, 8 + 2), (std::vector<std::string>{"node0/nic0:up", "node1/nic0:down"}));
}

TEST(Topology, CubeMeshUsesNvlinkOrPcie)
{
  auto c = gpu_cluster(1, "star");
  c.intra_node.kind = cs::IntraNode::NVLINK_MESH;
  auto p = cs::build_platform_spec(c, device("v100-sxm2"));
  const auto& t = p.topology;
  EXPECT_EQ(link_names(t, 0, 3), (std::vector<std::string>{"node0/nvlink0-3:up"}));
  EXPECT_DOUBLE_EQ(t.route_bandwidth(0, 3), 40e9); // two of the six links, at NCCL's 20 GB/s each
  EXPECT_DOUBLE_EQ(t.route_bandwidth(0, 1), 20e9);
  EXPECT_EQ(link_names(t, 0, 5), (std::vector<std::string>{"node0/gpu0/pcie:up", "node0/gpu5/pcie:down"}));
}

TEST(Topology, CpuTreeHostTorAggCore)
{
  cs::ClusterParams c;
  c.racks = 4;
  c.hosts_per_rack = 10;
  c.network.kind = cs::NetworkKind::TREE;
  c.network.host_link = cs::Rate{10e9 / 8};
  c.network.oversubscription = {5.0, 2.0};
  c.network.racks_per_agg = 2;
  auto p = cs::build_platform_spec(c, device("cpu-node"));
  const auto& t = p.topology;
  EXPECT_EQ(t.host_count(), 40);
  EXPECT_EQ(link_names(t, 0, 1), (std::vector<std::string>{"rack0/host0/link:up", "rack0/host1/link:down"}));
  EXPECT_EQ(link_names(t, 0, 10), (std::vector<std::string>{"rack0/host0/link:up", "rack0/uplink:up",
                                                            "rack1/uplink:down", "rack1/host0/link:down"}));
  EXPECT_EQ(link_names(t, 0, 39).size(), 6u);
  EXPECT_EQ(t.hop_level(0, 1), 1);
  EXPECT_EQ(t.hop_level(0, 10), 2);
  EXPECT_EQ(t.hop_level(0, 39), 3);
  for (const auto& l : t.links()) {
    if (l.name == "rack0/uplink") {
      EXPECT_DOUBLE_EQ(l.bandwidth, 10 * 1.25e9 / 5.0);
    }
    if (l.name == "agg0/uplink") {
      EXPECT_DOUBLE_EQ(l.bandwidth, 2 * 2.5e9 / 2.0);
    }
  }
  EXPECT_EQ(p.host.cores, 2);
  EXPECT_DOUBLE_EQ(p.host.disk_bandwidth, 1.38e9);
}

TEST(Topology, RoutesNeverTransitThroughHosts)
{
  auto c = gpu_cluster(4, "rail-optimized");
  auto p = cs::build_platform_spec(c, device("h100-sxm5"));
  const auto& t = p.topology;
  for (int a = 0; a < t.host_count(); ++a)
    for (int b = 0; b < t.host_count(); ++b) {
      if (a == b)
        continue;
      int intra = 0;
      for (const auto& u : t.route(a, b))
        intra += t.links()[u.link].tier == "nvlink";
      // NVLink appears only on intra-node routes, and then exactly twice (out of a, into b).
      EXPECT_EQ(intra, t.hop_level(a, b) == 0 ? 2 : 0) << a << "->" << b;
    }
}
