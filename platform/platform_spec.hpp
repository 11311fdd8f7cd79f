// A platform described in plain data, built from the scenario's `cluster:` block: topology plus host resources.
#pragma once

#include "models/devices/device_catalog.hpp"
#include "platform/link_availability.hpp"
#include "platform/topology.hpp"

#include "platform/cluster_params.hpp"
#include <map>

namespace cs {

/** Resources of every host (all hosts of a platform are alike). */
struct HostResources {
  int cores = 1;
  double core_speed = 1; // FLOP/s per core (CPU hosts); GPUs run kernels whose durations come from cost models
  double memory_bytes = 0;
  double disk_bandwidth = 0; // bytes/s, 0 = no disk
};

struct PlatformSpec {
  Topology topology;
  HostResources host;
  const DeviceSpec* device = nullptr; // the GPU (or CPU node) every host is
  bool cpu_cluster = false;
  int machines = 0; // GPU nodes or CPU hosts
  int hosts_per_machine = 1;
  int nics_per_machine = 1;
  bool nvls = false; // NVSwitch with in-switch reduction (NVLink SHARP)
  NetworkModel network_model = NetworkModel::IDEAL;
  bool fabric_non_blocking = false;           // switch uplinks carry all below them, spread ideally (no ECMP)
  std::map<int, LinkAvailability> background; // link index -> share left by background traffic (both directions)
};

/** Builds the topology of `cluster` (GPU nodes with intra-node links, NICs and a fat-tree / rail-optimised /
 *  star fabric; or CPU racks under a ToR/aggregation/core tree). Link values default from `device`.
 *  Throws InputError-free std::invalid_argument on shapes the builder cannot make; scenario checks run first. */
PlatformSpec build_platform_spec(const ClusterParams& cluster, const DeviceSpec& device);

/** Applies `network.background` to the links it names (by tier or name). Throws InputError (file:line:col) for a
 *  malformed CSV, and std::invalid_argument naming an unknown tier or link. CSV paths are relative to `base_dir`. */
void apply_background_traffic(PlatformSpec& platform, const NetworkParams& network, const std::string& base_dir);

} // namespace cs
