// The cluster a scenario runs on (`cluster:`): GPU nodes and their fabric, or CPU racks under a tree; read here.
#pragma once

#include "base/yaml_reader.hpp"
#include "platform/stragglers.hpp"

#include <string>
#include <vector>

namespace cs {

/** GPUs' links inside a node. Zero bandwidth/latency mean "take the device catalog's value". */
struct IntraNodeParams {
  std::string kind = "nvswitch"; // nvswitch | nvlink-mesh | pcie
  Rate bandwidth;                // per GPU and direction
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
  std::string kind = "constant";  // constant | on-off | csv
  double load = 0.5;              // share taken (constant, and on-off while on)
  Seconds on{1e-3}, off{1e-3};    // on-off phases
  std::string file;               // csv: "time_s,load" rows, relative to the scenario file
  Seconds period;                 // csv: repeat every period (0 = no repeat)
};

struct NetworkParams {
  std::string kind = "fat-tree"; // fat-tree | rail-optimized | star (GPU clusters); tree (CPU clusters)
  std::string model = "ideal";   // ideal (max-min, no TCP factors) | lv08 (SimGrid's TCP-calibrated model)
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
  std::string routing = "ideal";
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

  bool is_cpu_cluster() const { return racks > 0; }
};

/** Whether every pair of GPUs sees an idle, non-blocking fabric: no background load, no oversubscribed level, flows
 *  spread ideally over uplinks (not hashed by ECMP). Closed forms and symmetric-replica shortcuts assume it. */
bool uniform_fabric(const NetworkParams& network);

/** Reads `cluster:` (and documents it in describe mode): shapes that cannot be built are errors at their key. */
void read_cluster(ObjectReader r, ClusterParams& cluster);

} // namespace cs
