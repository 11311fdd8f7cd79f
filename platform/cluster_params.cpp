#include "platform/cluster_params.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace cs {
namespace {

void read_level(ObjectReader& r, FabricLevel& l)
{
  r.field("oversubscription", l.oversubscription,
          "downlink / uplink capacity ratio of a switch at this level (1 = non-blocking)")
      .field("radix", l.radix,
             "children per switch at this level (0 = default: 32 NIC ports at the leaf, all below at the top)")
      .field("latency", l.latency, "per-hop latency of the links up into this level (default: network.latency)");
  if (!r.describing() && l.oversubscription < 1.0)
    r.fail_at("oversubscription", "oversubscription must be >= 1");
  r.require_non_negative("radix", l.radix);
  r.require_at_most("radix", l.radix, 1 << 16);
  r.require_at_most("oversubscription", l.oversubscription, 1000);
}

void read_background(ObjectReader& r, BackgroundParams& b)
{
  r.field("tier", b.tier, "apply to every link of this tier (nic, leaf-uplink, pod-uplink, host-link, tor-uplink, ...)")
      .field("links", b.links, "or to these links by name (as in trace.json and docs/architecture.md)")
      .choice("kind", b.kind, kBackgroundKinds, "load over time")
      .field("load", b.load, "share of the bandwidth background traffic takes, in [0, 1)")
      .field("on", b.on, "on-off: how long the load lasts")
      .field("off", b.off, "on-off: how long the link is free")
      .field("file", b.file, "csv: 'time_s,load' rows (path relative to the scenario)")
      .field("period", b.period, "csv: repeat the series every period (0 = once, the last load then holds)");
  if (r.describing())
    return;
  if (b.tier.empty() == b.links.empty())
    r.fail(r.node(), "a background entry needs either 'tier' or 'links'");
  if (!(b.load >= 0 && b.load < 1))
    r.fail_at("load", "load must be in [0, 1)");
  if (b.kind == BackgroundKind::ON_OFF && (!(b.on.value > 0) || !(b.off.value > 0)))
    r.fail_at(b.on.value > 0 ? "off" : "on", "on-off needs positive 'on' and 'off'");
  if (b.kind == BackgroundKind::CSV && b.file.empty())
    r.fail_at("kind", "kind csv needs a 'file'");
  if (b.period.value < 0)
    r.fail_at("period", "period must not be negative");
}

void read_network(ObjectReader r, NetworkParams& n)
{
  r.choice("kind", n.kind, kNetworkKinds,
           "fabric shape: fat-tree, rail-optimized or star for GPU clusters; tree for CPU clusters")
      .choice("model", n.model, kNetworkModels,
              "flow model: ideal = max-min sharing with exact size/bandwidth + latency; lv08 = SimGrid's "
              "TCP-calibrated factors")
      .field("nic_bandwidth", n.nic_bandwidth, "bandwidth of one NIC port, per direction")
      .field("nic_efficiency", n.nic_efficiency, "share of the line rate a NIC delivers (0.97: 48.5 of 50 GB/s on NDR)")
      .field("nics_per_node", n.nics_per_node, "NICs per GPU node (equal to gpus_per_node gives one NIC per GPU)")
      .list<FabricLevel>("levels", n.levels, "switch levels above the NICs, leaf first (2 or 3 for fat-tree)",
                         read_level)
      .field("latency", n.latency, "per-hop link latency")
      .field("host_link", n.host_link, "CPU cluster: host to ToR link bandwidth")
      .field("tor_uplink", n.tor_uplink, "CPU cluster: ToR to aggregation bandwidth (default from oversubscription)")
      .field("agg_uplink", n.agg_uplink, "CPU cluster: aggregation to core bandwidth (default from oversubscription)")
      .field("oversubscription", n.oversubscription, "CPU cluster: [ToR, aggregation] oversubscription ratios")
      .field("racks_per_agg", n.racks_per_agg, "CPU cluster: racks under one aggregation switch (0 = all)")
      .list<BackgroundParams>("background", n.background, "time-varying background load on links", read_background)
      .choice("routing", n.routing, kRoutings,
              "GPU fat-tree: ideal = flows spread evenly over a switch's uplinks; ecmp = each uplink port is a link "
              "and a flow hashes onto one (collisions share a port)")
      .field("ecmp_seed", n.ecmp_seed, "routing: ecmp: salt of the per-flow hash (which flows collide)");
  r.finish();
  r.require_positive("nic_bandwidth", n.nic_bandwidth.value);
  r.require_positive("nics_per_node", n.nics_per_node);
  if (!r.describing() && !(n.nic_efficiency > 0 && n.nic_efficiency <= 1))
    r.fail_at("nic_efficiency", "nic_efficiency must be in (0, 1]");
  r.require_non_negative("latency", n.latency.value);
  r.require_positive("host_link", n.host_link.value);
  r.require_non_negative("tor_uplink", n.tor_uplink.value);
  r.require_non_negative("agg_uplink", n.agg_uplink.value);
  r.require_non_negative("racks_per_agg", n.racks_per_agg);
  r.require_non_negative("ecmp_seed", n.ecmp_seed);
  r.require_at_most("nics_per_node", n.nics_per_node, 1024);
  if (r.describing())
    return;
  if (n.levels.empty() || n.levels.size() > 3)
    r.fail_at("levels", fmt::format("network.levels must list 1 to 3 switch levels, got {}", n.levels.size()));
  for (double o : n.oversubscription)
    if (o < 1.0)
      r.fail_at("oversubscription", "oversubscription ratios must be >= 1");
}

} // namespace

namespace {

void read_intra_node(ObjectReader intra, IntraNodeParams& p)
{
  intra.choice("kind", p.kind, kIntraNodeKinds, "intra-node interconnect")
      .field("bandwidth", p.bandwidth, "per-GPU bandwidth per direction (default from the device catalog)")
      .field("latency", p.latency, "per-hop latency (default from the device catalog)")
      .field("nvls", p.nvls, "NVSwitch in-switch reduction (NVLink SHARP; H100, H200, B200, GB200)");
  intra.finish();
  intra.require_non_negative("bandwidth", p.bandwidth.value);
  intra.require_non_negative("latency", p.latency.value);
}

void read_host(ObjectReader& host, HostParams& h)
{
  host.field("cores", h.cores, "cores per host")
      .field("memory", h.memory, "memory per host")
      .field("disk_bandwidth", h.disk_bandwidth, "disk read/write bandwidth per host")
      .field("core_speed", h.core_speed, "FLOP/s per core");
  host.finish();
}

// Slow devices and nodes must exist (CPU clusters: a node is a host).
void check_straggler_indices(const ObjectReader& r, const StragglerParams& s, int devices, int nodes)
{
  for (std::size_t i = 0; i < s.slow.size(); ++i) {
    const YAML::Node at = r.node()["slow"][i];
    for (int d : s.slow[i].devices)
      if (d >= devices)
        r.fail(at, fmt::format("device {} does not exist (the cluster has {})", d, devices));
    for (int n : s.slow[i].nodes)
      if (n >= nodes)
        r.fail(at, fmt::format("node {} does not exist (the cluster has {})", n, nodes));
  }
}

} // namespace

bool uniform_fabric(const NetworkParams& network)
{
  return network.background.empty() && network.routing == FabricRouting::IDEAL &&
         std::all_of(network.levels.begin(), network.levels.end(),
                     [](const FabricLevel& level) { return level.oversubscription == 1.0; });
}

// A CPU cluster (racks of hosts): its bounds, its default device and its tree network.
void check_cpu_cluster(ObjectReader& r, ClusterParams& cluster)
{
  r.require_positive("hosts_per_rack", cluster.hosts_per_rack);
  // Measured on the HiT MapReduce scenario (analytical backend, 2 cores): 16,384 hosts took 8.1 s and 2.3 GB,
  // 131,072 hosts more than 120 s and 21 GB. The product is taken in 64 bits so that it cannot wrap.
  const long long hosts = static_cast<long long>(cluster.racks) * cluster.hosts_per_rack;
  r.require(hosts <= (1 << 14), "hosts_per_rack",
            fmt::format("racks x hosts_per_rack = {} hosts, more than the 16384 clustersim accepts (see Bounds in "
                        "docs/scenarios.md)",
                        hosts));
  if (r.has("nodes") || r.has("gpus"))
    r.fail_at(r.has("nodes") ? "nodes" : "gpus", "a CPU cluster (racks) takes hosts_per_rack, not nodes or gpus");
  if (!r.has("device"))
    cluster.device = "cpu-node";
  const YAML::Node network = r.node()["network"];
  if (!network.IsDefined() || !network.IsMap() || !network["kind"].IsDefined())
    cluster.network.kind = NetworkKind::TREE;
  else if (cluster.network.kind != NetworkKind::TREE)
    r.child("network", "").fail_at("kind", "a CPU cluster's network.kind must be 'tree'");
  if (cluster.network.routing != FabricRouting::IDEAL)
    r.child("network", "")
        .fail_at("routing", "routing: ecmp is for GPU fat-trees; a CPU tree has one uplink per switch");
}

void read_cluster(ObjectReader r, ClusterParams& cluster)
{
  r.field("device", cluster.device, "device catalog name (clustersim list devices)")
      .field("profile", cluster.profile,
             "device profile JSON for kernel costs (default: the one shipped in calibrate/profiles/)")
      .field("nodes", cluster.nodes, "GPU nodes")
      .field("gpus_per_node", cluster.gpus_per_node, "GPUs in each node")
      .field("gpus", cluster.gpus, "total GPUs (optional; must divide into nodes of gpus_per_node)");
  read_intra_node(r.child("intra_node", "links between the GPUs of a node"), cluster.intra_node);
  read_network(r.child("network", "the data-centre network"), cluster.network);
  r.field("racks", cluster.racks, "CPU cluster: number of racks (makes this a CPU cluster)")
      .field("hosts_per_rack", cluster.hosts_per_rack, "CPU cluster: hosts in each rack");
  ObjectReader host = r.child("host", "CPU cluster: one host's resources (defaults from the catalog's cpu-node)");
  read_host(host, cluster.host);
  ObjectReader stragglers = r.child("stragglers", "heterogeneity and stragglers: slow devices, the spread of "
                                                  "identical devices' speeds, random slowdowns, recorded step times "
                                                  "(docs/stragglers.md)");
  read_stragglers(stragglers, cluster.stragglers);
  stragglers.finish();
  ObjectReader failures = r.child("failures", "what fails and how often, and how long a restart takes "
                                              "(clustersim goodput; docs/goodput.md)");
  read_failures(failures, cluster.failures);
  r.field("spares", cluster.spares, "spare nodes kept beside the job's, swapped in for a failed node");
  ObjectReader storage = r.child("storage", "checkpoint storage");
  storage.field("bandwidth", cluster.storage.bandwidth, "sustained write bandwidth shared by every writer");
  storage.finish();
  storage.require_non_negative("bandwidth", cluster.storage.bandwidth.value);
  host.require_non_negative("cores", cluster.host.cores);
  host.require_non_negative("memory", cluster.host.memory.value);
  host.require_non_negative("disk_bandwidth", cluster.host.disk_bandwidth.value);
  host.require_non_negative("core_speed", cluster.host.core_speed);
  r.finish();
  if (r.describing())
    return;
  r.require_non_negative("racks", cluster.racks);
  r.require_at_most("racks", cluster.racks, 1 << 16);
  r.require_at_most("hosts_per_rack", cluster.hosts_per_rack, 4096);
  host.require_at_most("cores", cluster.host.cores, 4096);
  if (cluster.is_cpu_cluster()) {
    check_cpu_cluster(r, cluster);
    check_straggler_indices(stragglers, cluster.stragglers, cluster.racks * cluster.hosts_per_rack,
                            cluster.racks * cluster.hosts_per_rack);
    return;
  }
  if (cluster.network.kind == NetworkKind::TREE)
    r.child("network", "")
        .fail_at("kind", "network.kind 'tree' is for CPU clusters (racks); use fat-tree, rail-optimized or star");
  r.require_positive("gpus_per_node", cluster.gpus_per_node);
  r.require_non_negative("gpus", cluster.gpus);
  // Bounds (docs/scenarios.md, "Bounds"); the product is taken in 64 bits so that it cannot wrap.
  r.require_at_most("gpus_per_node", cluster.gpus_per_node, 1024);
  r.require_at_most("nodes", cluster.nodes, 1 << 17);
  r.require_at_most("gpus", cluster.gpus, 1 << 20);
  const long long total = static_cast<long long>(cluster.nodes) * cluster.gpus_per_node;
  r.require(total <= (1 << 20), "nodes",
            fmt::format("nodes x gpus_per_node = {} GPUs, more than the 1048576 clustersim accepts (see Bounds in "
                        "docs/scenarios.md)",
                        total));
  if (cluster.gpus > 0) {
    if (cluster.gpus % cluster.gpus_per_node != 0)
      r.fail_at("gpus", fmt::format("cluster.gpus = {} does not divide into nodes of {} GPUs", cluster.gpus,
                                    cluster.gpus_per_node));
    if (r.has("nodes") && cluster.nodes * cluster.gpus_per_node != cluster.gpus)
      r.fail_at("gpus", fmt::format("cluster.gpus = {} but nodes x gpus_per_node = {}", cluster.gpus,
                                    cluster.nodes * cluster.gpus_per_node));
    cluster.nodes = cluster.gpus / cluster.gpus_per_node;
  }
  r.require_positive("nodes", cluster.nodes);
  if (cluster.network.kind == NetworkKind::RAIL_OPTIMIZED && cluster.network.nics_per_node != cluster.gpus_per_node)
    r.child("network", "")
        .fail_at("nics_per_node", "rail-optimized needs one NIC per GPU (nics_per_node = gpus_per_node)");
  if (cluster.network.nics_per_node > cluster.gpus_per_node)
    r.child("network", "").fail_at("nics_per_node", "more NICs than GPUs in a node is not supported");
  if (cluster.gpus_per_node % cluster.network.nics_per_node != 0)
    r.child("network", "").fail_at("nics_per_node", "nics_per_node must divide gpus_per_node");
  cluster.gpus = cluster.nodes * cluster.gpus_per_node;
  r.require_non_negative("spares", cluster.spares);
  r.require(
      cluster.spares <= cluster.nodes, "spares",
      fmt::format("{} spare nodes for a job of {} nodes: spares beyond the cluster", cluster.spares, cluster.nodes));
  check_straggler_indices(stragglers, cluster.stragglers, cluster.gpus, cluster.nodes);
}

} // namespace cs
