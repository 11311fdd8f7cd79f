#include "sim/goodput/checkpoint_traffic.hpp"

#include "base/units.hpp"
#include "models/devices/device_catalog.hpp"
#include "platform/platform_spec.hpp"
#include "sim/exec/executor.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>

namespace cs {
namespace {

// One flow per GPU of the first `gpus`, to the host `destination(gpu)` picks; the makespan.
double simulate_flows(const PlatformSpec& platform, int gpus, double bytes_per_gpu,
                      const std::function<int(int)>& destination)
{
  TaskGraph graph;
  graph.reserve(static_cast<std::size_t>(gpus));
  for (int gpu = 0; gpu < gpus; ++gpu)
    graph.add_transfer(graph.add_stream(gpu, "checkpoint"), gpu, destination(gpu), bytes_per_gpu, "checkpoint", {});
  graph.finalize();
  // The analytical backend: SimGrid's engine starts once per process, and the step may already have used it.
  return run_backend(Backend::ANALYTICAL, graph, platform).makespan;
}

// The storage behind one link of its bandwidth, on the fabric's top switch (core or spine). A fabric of one level
// (a star, a single leaf, rails without a spine) has no top: a storage switch then joins every switch.
int attach_storage(Topology& t, const ClusterParams& cluster, double bandwidth)
{
  int top = -1;
  for (const char* name : {"core", "spine"})
    if (top < 0)
      top = t.find_vertex(name);
  const int storage = t.add_host("storage", cluster.nodes, 0);
  const int link = t.add_link("storage", bandwidth, cluster.network.latency.value, "storage");
  if (top >= 0) {
    t.add_edge(top, storage, link);
  } else {
    const int hub = t.add_switch("storage-switch");
    t.add_edge(hub, storage, link);
    for (int v = 0; v < static_cast<int>(t.vertices().size()); ++v)
      if (!t.vertex(v).is_host && v != hub) // unbounded: the NICs and the storage link bound the write
        t.add_edge(v, hub, t.add_link(t.vertex(v).name + "/storage", units::kMaxRate, 0.0, "storage-uplink"));
  }
  return t.host_count() - 1;
}

// Per node, its host memory: a host vertex joined to each of the node's GPUs by that GPU's own PCIe link.
std::vector<int> attach_host_memory(Topology& t, const ClusterParams& cluster, const DeviceSpec& device)
{
  std::vector<int> hosts;
  for (int n = 0; n < cluster.nodes; ++n) {
    const int memory = t.add_host(fmt::format("node{}/host-memory", n), n, cluster.gpus_per_node);
    hosts.push_back(t.host_count() - 1);
    for (int g = 0; g < cluster.gpus_per_node; ++g) {
      const int gpu = t.hosts().at(static_cast<std::size_t>(n * cluster.gpus_per_node + g));
      t.add_edge(gpu, memory,
                 t.add_link(fmt::format("node{}/gpu{}/pcie-host", n, g), device.pcie_bandwidth, device.pcie_latency,
                            "pcie-host"));
    }
  }
  return hosts;
}

// The scenario's platform with its background load: checkpoint flows share the fabric as the step's do.
PlatformSpec platform_of(const Scenario& s)
{
  PlatformSpec platform = build_platform_spec(s.cluster, *DeviceCatalog::builtin().find(s.cluster.device));
  apply_background_traffic(platform, s.cluster.network, s.source.base_dir());
  return platform;
}

// Every NIC link also carries the load `schedule` gives it, beside the load it already had.
void add_nic_load(PlatformSpec& platform, const std::function<LinkAvailability(const PhysicalLink&)>& schedule)
{
  const auto& links = platform.topology.links();
  for (std::size_t l = 0; l < links.size(); ++l) {
    if (links[l].tier != "nic")
      continue;
    const LinkAvailability added = schedule(links[l]);
    const auto old = platform.background.find(static_cast<int>(l));
    platform.background[static_cast<int>(l)] = old == platform.background.end() ? added : product(old->second, added);
  }
}

// Nodes whose flows stand for every node's: on a uniform fabric every node's flows meet their own NICs and PCIe
// links and a fair share of the storage link (nothing above the NICs holds them back), so `group` nodes are simulated
// and the storage keeps their share of its bandwidth; otherwise every node.
int simulated_nodes(const ClusterParams& cluster, int group)
{
  return uniform_fabric(cluster.network) && cluster.nodes > group ? group : cluster.nodes;
}

} // namespace

double simulate_checkpoint_write(const Scenario& s, double bytes_per_gpu, double nic_share)
{
  PlatformSpec platform = platform_of(s);
  const int nodes = simulated_nodes(s.cluster, 1);
  const int storage_host =
      attach_storage(platform.topology, s.cluster, s.cluster.storage.bandwidth.value * nodes / s.cluster.nodes);
  if (nic_share < 1)
    add_nic_load(platform, [nic_share](const PhysicalLink&) {
      LinkAvailability a;
      a.points = {{0.0, std::max(0.01, nic_share)}};
      return a;
    });
  return simulate_flows(platform, nodes * s.cluster.gpus_per_node, bytes_per_gpu,
                        [storage_host](int) { return storage_host; });
}

double simulate_peer_copy(const Scenario& s, double bytes_per_gpu)
{
  if (s.cluster.nodes < 2)
    return 0;
  const PlatformSpec platform = platform_of(s);
  const int nodes = s.cluster.nodes, per_node = s.cluster.gpus_per_node;
  return simulate_flows(platform, simulated_nodes(s.cluster, 2) * per_node, bytes_per_gpu, [nodes, per_node](int gpu) {
    return checkpoint_peer(gpu / per_node, nodes) * per_node + gpu % per_node;
  });
}

double simulate_host_copy(const Scenario& s, double bytes_per_gpu)
{
  PlatformSpec platform = platform_of(s);
  const auto memory =
      attach_host_memory(platform.topology, s.cluster, *DeviceCatalog::builtin().find(s.cluster.device));
  const int per_node = s.cluster.gpus_per_node;
  return simulate_flows(platform, per_node, bytes_per_gpu, // PCIe links are each node's own: one node stands for all
                        [&memory, per_node](int gpu) { return memory.at(static_cast<std::size_t>(gpu / per_node)); });
}

void load_nics_with_write(PlatformSpec& platform, const Scenario& s, double bytes_per_gpu, double write_s)
{
  if (write_s <= 0)
    return;
  const double per_nic = bytes_per_gpu * s.cluster.gpus_per_node / s.cluster.network.nics_per_node;
  // Both directions carry it in the model's view of background load; a write is one-way, but a step's NIC traffic
  // (rings, pipelines) goes both ways at once, so each of its transfers meets the write on its NIC.
  add_nic_load(platform, [&](const PhysicalLink& nic) {
    LinkAvailability a;
    a.points = {{0.0, 1.0 - std::min(0.99, per_nic / write_s / nic.bandwidth)}, {write_s, 1.0}};
    return a;
  });
}

} // namespace cs
