#include "platform/platform_spec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace cs {
namespace {

double level_latency(const NetworkParams& n, std::size_t level)
{
  if (level < n.levels.size() && n.levels[level].latency.value >= 0)
    return n.levels[level].latency.value;
  return n.latency.value;
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// DGX-1 (V100) hybrid cube-mesh: NVLink count between GPU pairs; 0 = no NVLink (traffic goes over PCIe).
// Reconstructed from public `nvidia-smi topo -m` dumps of DGX-1V: each GPU uses all 6 of its links.
constexpr std::array<std::array<int, 8>, 8> kCubeMesh = {{
    {0, 1, 1, 2, 2, 0, 0, 0},
    {1, 0, 2, 1, 0, 2, 0, 0},
    {1, 2, 0, 2, 0, 0, 1, 0},
    {2, 1, 2, 0, 0, 0, 0, 1},
    {2, 0, 0, 0, 0, 1, 1, 2},
    {0, 2, 0, 0, 1, 0, 2, 1},
    {0, 0, 1, 0, 1, 2, 0, 2},
    {0, 0, 0, 1, 2, 1, 2, 0},
}};

// Intra-node wiring of one GPU node: every GPU pair gets a direct edge, so intra-node paths are one hop.
void wire_node(Topology& t, const ClusterParams& cluster, const DeviceSpec& d, int node, const std::vector<int>& gpus)
{
  const auto& intra = cluster.intra_node;
  const int g_count = static_cast<int>(gpus.size());
  auto per_gpu_links = [&](const char* tier, double bw, double lat) {
    std::vector<int> links;
    for (int g = 0; g < g_count; ++g)
      links.push_back(t.add_link(fmt::format("node{}/gpu{}/{}", node, g, tier), bw, lat, tier));
    return links;
  };
  const double pcie_bw = d.pcie_bandwidth;
  const double pcie_lat = d.pcie_latency;
  if (intra.kind == IntraNode::NVSWITCH || intra.kind == IntraNode::PCIE) {
    bool nv = intra.kind == IntraNode::NVSWITCH;
    double bw = intra.bandwidth.value > 0 ? intra.bandwidth.value : (nv ? d.nvlink_achievable : pcie_bw);
    double lat = intra.latency.value > 0 ? intra.latency.value : (nv ? d.nvlink_latency : pcie_lat);
    auto links = per_gpu_links(nv ? "nvlink" : "pcie", bw, lat);
    for (int a = 0; a < g_count; ++a)
      for (int b = a + 1; b < g_count; ++b)
        t.add_edge(gpus[a], gpus[b], {LinkUse{links[a], true}, LinkUse{links[b], false}});
    return;
  }
  // nvlink-mesh: 8 GPUs, direct NVLinks per kCubeMesh, other pairs through the PCIe host bridge.
  double per_link = (intra.bandwidth.value > 0 ? intra.bandwidth.value : d.nvlink_achievable) / 6.0;
  double lat = intra.latency.value > 0 ? intra.latency.value : d.nvlink_latency;
  auto pcie = per_gpu_links("pcie", pcie_bw, pcie_lat);
  for (int a = 0; a < g_count; ++a)
    for (int b = a + 1; b < g_count; ++b) {
      int count = kCubeMesh[a][b];
      if (count > 0) {
        int l = t.add_link(fmt::format("node{}/nvlink{}-{}", node, a, b), per_link * count, lat, "nvlink");
        t.add_edge(gpus[a], gpus[b], l);
      } else {
        t.add_edge(gpus[a], gpus[b], {LinkUse{pcie[a], true}, LinkUse{pcie[b], false}});
      }
    }
}

// The leaf level: per rail (rail-optimised) or per group of nodes (ToR-style; default radix 32 ports), each GPU on
// its NIC's leaf. Returns the leaf switches and, per leaf, the NIC bandwidth below it.
struct Leaves {
  std::vector<int> switches;
  std::vector<double> down;
  int nodes_per_leaf = 1, rails = 1, gpus_per_nic = 1;
  int of(int node, int gpu) const { return (node / nodes_per_leaf) * rails + (rails > 1 ? gpu / gpus_per_nic : 0); }
};

Leaves wire_leaves(Topology& t, const ClusterParams& cluster, const std::vector<std::vector<int>>& gpu)
{
  const auto& net = cluster.network;
  const int nodes = cluster.nodes, gpn = cluster.gpus_per_node, nics = net.nics_per_node;
  const int levels = static_cast<int>(net.levels.size());
  // NIC links: the leaf-facing port of each NIC.
  const double nic_lat = level_latency(net, 0);
  std::vector<std::vector<int>> nic(nodes);
  for (int n = 0; n < nodes; ++n)
    for (int k = 0; k < nics; ++k)
      nic[n].push_back(
          t.add_link(fmt::format("node{}/nic{}", n, k), net.nic_bandwidth.value * net.nic_efficiency, nic_lat, "nic"));
  const bool rail = net.kind == NetworkKind::RAIL_OPTIMIZED, star = net.kind == NetworkKind::STAR;
  Leaves leaves;
  leaves.gpus_per_nic = gpn / nics;
  leaves.rails = rail ? nics : 1;
  leaves.nodes_per_leaf =
      star ? nodes : (net.levels[0].radix > 0 ? net.levels[0].radix : std::max(1, rail ? 32 : 32 / nics));
  if (star || levels == 1)
    leaves.nodes_per_leaf = nodes;
  const int leaf_groups = ceil_div(nodes, leaves.nodes_per_leaf);
  for (int j = 0; j < leaf_groups; ++j)
    for (int r = 0; r < leaves.rails; ++r)
      leaves.switches.push_back(
          t.add_switch(rail ? fmt::format("rail{}/leaf{}", r, j) : (star ? "switch" : fmt::format("leaf{}", j))));
  leaves.down.assign(leaves.switches.size(), 0.0);
  for (int n = 0; n < nodes; ++n)
    for (int g = 0; g < gpn; ++g) {
      const int leaf = leaves.of(n, g);
      t.add_edge(gpu[n][g], leaves.switches[leaf], nic[n][g / leaves.gpus_per_nic]);
      if (g % leaves.gpus_per_nic == 0)
        leaves.down[leaf] += net.nic_bandwidth.value * net.nic_efficiency;
    }
  return leaves;
}

// Pods (level 1 of a 3-level tree) group leaf groups; the top switch joins everything. Returns each leaf's pod.
std::vector<int> wire_upper_levels(Topology& t, const NetworkParams& net, const Leaves& leaves)
{
  const int levels = static_cast<int>(net.levels.size());
  const int leaf_groups = static_cast<int>(leaves.switches.size()) / leaves.rails;
  int groups_per_pod = leaf_groups;
  if (levels == 3 && net.levels[1].radix > 0)
    groups_per_pod = net.levels[1].radix;
  const int pods = ceil_div(leaf_groups, groups_per_pod);
  std::vector<int> pod_of_leaf(leaves.switches.size(), 0);
  if (levels < 2 || net.kind == NetworkKind::STAR || leaves.switches.size() <= 1)
    return pod_of_leaf;
  const int top = t.add_switch(levels == 3 && pods > 1 ? "core" : "spine");
  // A switch's uplinks: one aggregate link (ideal spreading), or under ECMP one link per port of the NIC's speed
  // (as many as carry that capacity), which flows hash onto.
  const double port = net.nic_bandwidth.value * net.nic_efficiency;
  auto uplink = [&](const std::string& name, double bw, double lat, const char* tier, int stage) {
    if (net.routing != FabricRouting::ECMP)
      return t.add_link(name, bw, lat, tier);
    const int ports = std::max(1, static_cast<int>(std::lround(bw / port)));
    return t.add_link_bundle(name, bw, ports, lat, tier, stage);
  };
  std::vector<int> pod_switch;
  std::vector<double> pod_down(pods, 0.0);
  if (levels == 3 && pods > 1)
    for (int q = 0; q < pods; ++q)
      pod_switch.push_back(t.add_switch(fmt::format("pod{}", q)));
  for (std::size_t l = 0; l < leaves.switches.size(); ++l) {
    const int q = static_cast<int>(l) / leaves.rails / groups_per_pod;
    pod_of_leaf[l] = q;
    const double bw = leaves.down[l] / net.levels[0].oversubscription;
    const int up = uplink(t.vertex(leaves.switches[l]).name + "/uplink", bw, level_latency(net, 1), "leaf-uplink", 1);
    t.add_edge(leaves.switches[l], pod_switch.empty() ? top : pod_switch[q], up);
    pod_down[q] += bw;
  }
  for (int q = 0; q < static_cast<int>(pod_switch.size()); ++q) {
    const int up = uplink(fmt::format("pod{}/uplink", q), pod_down[q] / net.levels[1].oversubscription,
                          level_latency(net, 2), "pod-uplink", 2);
    t.add_edge(pod_switch[q], top, up);
  }
  return pod_of_leaf;
}

PlatformSpec build_gpu(const ClusterParams& cluster, const DeviceSpec& d)
{
  PlatformSpec p;
  p.device = &d;
  p.machines = cluster.nodes;
  p.hosts_per_machine = cluster.gpus_per_node;
  p.network_model = cluster.network.model;
  p.nics_per_machine = cluster.network.nics_per_node;
  p.nvls = cluster.intra_node.nvls;
  p.host = HostResources{1, 1.0, d.memory_bytes, 0};
  Topology& t = p.topology;
  const int nodes = cluster.nodes, gpn = cluster.gpus_per_node;
  std::vector<std::vector<int>> gpu(nodes);
  for (int n = 0; n < nodes; ++n)
    for (int g = 0; g < gpn; ++g)
      gpu[n].push_back(t.add_host(fmt::format("node{}/gpu{}", n, g), n, g));
  for (int n = 0; n < nodes; ++n)
    wire_node(t, cluster, d, n, gpu[n]);
  if (nodes == 1 && cluster.network.kind != NetworkKind::STAR && cluster.network.levels.empty())
    return p;
  t.set_ecmp_seed(static_cast<std::uint64_t>(cluster.network.ecmp_seed));
  p.fabric_non_blocking = uniform_fabric(cluster.network);
  const Leaves leaves = wire_leaves(t, cluster, gpu);
  const auto pod_of_leaf = wire_upper_levels(t, cluster.network, leaves);
  for (int n = 0; n < nodes; ++n)
    for (int g = 0; g < gpn; ++g) {
      const int leaf = leaves.of(n, g);
      t.vertex(gpu[n][g]).groups = {n, leaf, pod_of_leaf[leaf], 0};
    }
  return p;
}

PlatformSpec build_cpu(const ClusterParams& cluster, const DeviceSpec& d)
{
  PlatformSpec p;
  p.device = &d;
  p.cpu_cluster = true;
  p.machines = cluster.racks * cluster.hosts_per_rack;
  p.hosts_per_machine = 1;
  p.network_model = cluster.network.model;
  p.host.cores = cluster.host.cores > 0 ? cluster.host.cores : d.cores;
  p.host.core_speed = cluster.host.core_speed > 0 ? cluster.host.core_speed : d.core_speed;
  p.host.memory_bytes = cluster.host.memory.value > 0 ? cluster.host.memory.value : d.memory_bytes;
  p.host.disk_bandwidth = cluster.host.disk_bandwidth.value > 0 ? cluster.host.disk_bandwidth.value : d.disk_bandwidth;
  Topology& t = p.topology;
  const auto& net = cluster.network;
  const double lat = net.latency.value;
  auto over = [&](std::size_t i) { return i < net.oversubscription.size() ? net.oversubscription[i] : 1.0; };
  const int racks_per_agg = net.racks_per_agg > 0 ? std::min(net.racks_per_agg, cluster.racks) : cluster.racks;
  const int aggs = ceil_div(cluster.racks, racks_per_agg);
  const double tor_bw =
      net.tor_uplink.value > 0 ? net.tor_uplink.value : cluster.hosts_per_rack * net.host_link.value / over(0);
  const double agg_bw = net.agg_uplink.value > 0 ? net.agg_uplink.value : racks_per_agg * tor_bw / over(1);

  std::vector<int> agg_switch;
  int core = -1;
  if (cluster.racks > 1)
    for (int a = 0; a < aggs; ++a)
      agg_switch.push_back(t.add_switch(fmt::format("agg{}", a)));
  if (aggs > 1) {
    core = t.add_switch("core");
    for (int a = 0; a < aggs; ++a)
      t.add_edge(agg_switch[a], core, t.add_link(fmt::format("agg{}/uplink", a), agg_bw, lat, "agg-uplink"));
  }
  for (int r = 0; r < cluster.racks; ++r) {
    int tor = t.add_switch(fmt::format("rack{}/tor", r));
    if (!agg_switch.empty())
      t.add_edge(tor, agg_switch[r / racks_per_agg],
                 t.add_link(fmt::format("rack{}/uplink", r), tor_bw, lat, "tor-uplink"));
    for (int h = 0; h < cluster.hosts_per_rack; ++h) {
      int index = r * cluster.hosts_per_rack + h;
      int v = t.add_host(fmt::format("rack{}/host{}", r, h), index, 0);
      t.vertex(v).groups = {index, r, r / racks_per_agg, 0};
      t.add_edge(v, tor, t.add_link(fmt::format("rack{}/host{}/link", r, h), net.host_link.value, lat, "host-link"));
    }
  }
  return p;
}

} // namespace

PlatformSpec build_platform_spec(const ClusterParams& cluster, const DeviceSpec& device)
{
  return cluster.is_cpu_cluster() ? build_cpu(cluster, device) : build_gpu(cluster, device);
}

} // namespace cs

namespace cs {

void apply_background_traffic(PlatformSpec& platform, const NetworkParams& network, const std::string& base_dir)
{
  const auto& links = platform.topology.links();
  for (const auto& b : network.background) {
    LinkAvailability a;
    if (b.kind == BackgroundKind::CONSTANT) {
      a.points = {{0.0, 1.0 - b.load}};
    } else if (b.kind == BackgroundKind::ON_OFF) {
      a.points = {{0.0, 1.0 - b.load}, {b.on.value, 1.0}};
      a.period = b.on.value + b.off.value;
    } else {
      std::string path = b.file.empty() || b.file[0] == '/' || base_dir.empty() ? b.file : base_dir + "/" + b.file;
      a = availability_from_csv(path, b.period.value);
    }
    int matched = 0;
    for (std::size_t l = 0; l < links.size(); ++l) {
      bool hit = !b.tier.empty() ? links[l].tier == b.tier
                                 : std::find(b.links.begin(), b.links.end(), links[l].name) != b.links.end();
      if (hit) {
        platform.background[static_cast<int>(l)] = a;
        ++matched;
      }
    }
    if (!b.tier.empty() && matched == 0)
      throw std::invalid_argument("no link of tier '" + b.tier + "' on this platform");
    for (const auto& name : b.links)
      if (std::none_of(links.begin(), links.end(), [&](const PhysicalLink& l) { return l.name == name; }))
        throw std::invalid_argument("no link named '" + name + "' on this platform");
  }
}

} // namespace cs
