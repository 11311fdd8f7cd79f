// The cluster a scenario runs on (`cluster:`): GPU nodes and their fabric, or CPU racks under a tree; read here.
#pragma once

#include "base/yaml_reader.hpp"
#include "platform/failure_params.hpp"
#include "platform/stragglers.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace cs {

/** A choice's spellings and values, in the order `validate --keys` lists them. */
template <class E> using Spellings = std::vector<std::pair<std::string, E>>;

/** The spelling of `value` in `table` (the first, when two spell it). */
template <class E> const std::string& spelling(const Spellings<E>& table, E value)
{
  for (const auto& [name, v] : table)
    if (v == value)
      return name;
  return table.front().first;
}

/** The value spelt `name` in `table`; std::invalid_argument for another spelling. */
template <class E> E spelled(const Spellings<E>& table, const std::string& name)
{
  for (const auto& [spelling, v] : table)
    if (spelling == name)
      return v;
  throw std::invalid_argument("unknown choice '" + name + "'");
}

/** GPUs' links inside a node. */
enum class IntraNode { NVSWITCH, NVLINK_MESH, PCIE };
inline const Spellings<IntraNode> kIntraNodeKinds{
    {"nvswitch", IntraNode::NVSWITCH}, {"nvlink-mesh", IntraNode::NVLINK_MESH}, {"pcie", IntraNode::PCIE}};

/** The switch fabric: fat-tree, rail-optimized, star (GPU clusters); tree (CPU clusters). */
enum class NetworkKind { FAT_TREE, RAIL_OPTIMIZED, STAR, TREE };
inline const Spellings<NetworkKind> kNetworkKinds{{"fat-tree", NetworkKind::FAT_TREE},
                                                  {"rail-optimized", NetworkKind::RAIL_OPTIMIZED},
                                                  {"star", NetworkKind::STAR},
                                                  {"tree", NetworkKind::TREE}};

/** How flows share links: ideal (max-min, no TCP factors) | lv08 (SimGrid's TCP-calibrated model). */
enum class NetworkModel { IDEAL, LV08 };
inline const Spellings<NetworkModel> kNetworkModels{{"ideal", NetworkModel::IDEAL}, {"lv08", NetworkModel::LV08}};

/** How flows cross a fat-tree's switch levels above the leaves (see NetworkParams::routing). */
enum class FabricRouting { IDEAL, ECMP };
inline const Spellings<FabricRouting> kRoutings{{"ideal", FabricRouting::IDEAL}, {"ecmp", FabricRouting::ECMP}};

/** Background load over time: constant | on-off | csv. */
enum class BackgroundKind { CONSTANT, ON_OFF, CSV };
inline const Spellings<BackgroundKind> kBackgroundKinds{
    {"constant", BackgroundKind::CONSTANT}, {"on-off", BackgroundKind::ON_OFF}, {"csv", BackgroundKind::CSV}};

/** GPUs' links inside a node. Zero bandwidth/latency mean "take the device catalog's value". */
struct IntraNodeParams {
  IntraNode kind = IntraNode::NVSWITCH;
  Rate bandwidth; // per GPU and direction
  Seconds latency;
  bool nvls = false; // NVSwitch in-switch reduction (NVLink SHARP), H100/H200
};

/** One level of switches above the hosts (level 0 = leaf/ToR). */
struct FabricLevel {
  double oversubscription = 1.0; // downlink capacity / uplink capacity of a switch at this level
  int radix = 0;                 // children per switch at this level; 0 = default
  Seconds latency{-1};           // per-hop latency of the links into this level; negative = network.latency
};

/** Background load on some links (the multi-tenant setting): what share of their bandwidth other traffic takes. */
struct BackgroundParams {
  std::string tier;               // links of this tier (nic, leaf-uplink, tor-uplink, host-link, ...)
  std::vector<std::string> links; // or these links by name
  BackgroundKind kind = BackgroundKind::CONSTANT;
  double load = 0.5;           // share taken (constant, and on-off while on)
  Seconds on{1e-3}, off{1e-3}; // on-off phases
  std::string file;            // csv: "time_s,load" rows, relative to the scenario file
  Seconds period;              // csv: repeat every period (0 = no repeat)
};

struct NetworkParams {
  NetworkKind kind = NetworkKind::FAT_TREE;
  NetworkModel model = NetworkModel::IDEAL;
  Rate nic_bandwidth{400e9 / 8};
  double nic_efficiency = 0.97; // share of the line rate a NIC delivers
  int nics_per_node = 8;
  std::vector<FabricLevel> levels{FabricLevel{}, FabricLevel{}};
  Seconds latency{1e-6};
  // CPU-cluster tree (host -> ToR -> aggregation -> core).
  Rate host_link{10e9 / 8};
  Rate tor_uplink; // 0 = hosts_per_rack * host_link / oversubscription[0]
  Rate agg_uplink; // 0 = racks_per_agg * tor_uplink / oversubscription[1]
  std::vector<double> oversubscription{1.0, 1.0};
  int racks_per_agg = 0; // 0 = all racks under one aggregation switch
  std::vector<BackgroundParams> background;
  // GPU fat-trees: how flows cross the switch levels above the leaves. ideal = every flow spreads over all uplinks
  // (one aggregate link per switch); ecmp = each uplink port is its own link and a flow takes the port its
  // (source, destination) hash picks, so two flows can collide on one port while another stays idle.
  FabricRouting routing = FabricRouting::IDEAL;
  int ecmp_seed = 0; // salt of the ECMP hash (a switch setting, not the run's --seed)
};

struct HostParams {
  int cores = 0;         // 0 = catalog's cpu node
  Bytes memory;          // 0 = catalog
  Rate disk_bandwidth;   // 0 = catalog
  double core_speed = 0; // FLOP/s per core; 0 = catalog
};

struct ClusterParams {
  std::string device = "h100-sxm5";
  std::string profile; // device profile JSON for the kernel cost models; "" = the one shipped for the device
  int nodes = 1;
  int gpus_per_node = 8;
  int gpus = 0; // optional total; must equal nodes * gpus_per_node when given with nodes
  IntraNodeParams intra_node;
  NetworkParams network;
  // CPU clusters
  int racks = 0;
  int hosts_per_rack = 0;
  HostParams host;
  StragglerParams stragglers; // heterogeneity every workload sees
  // The long run (clustersim goodput): what fails and how often, the nodes kept spare, checkpoint storage.
  FailureParams failures;
  int spares = 0; // spare nodes beyond `nodes`, swapped in for a failed one
  StorageParams storage;

  bool is_cpu_cluster() const { return racks > 0; }
};

/** Whether every pair of GPUs sees an idle, non-blocking fabric: no background load, no oversubscribed level, flows
 *  spread ideally over uplinks (not hashed by ECMP). Closed forms and symmetric-replica shortcuts assume it. */
bool uniform_fabric(const NetworkParams& network);

/** Reads `cluster:` (and documents it in describe mode): shapes that cannot be built are errors at their key. */
void read_cluster(ObjectReader r, ClusterParams& cluster);

} // namespace cs
