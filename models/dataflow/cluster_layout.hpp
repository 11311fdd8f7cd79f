// Which rack and pod each host of a CPU cluster is in, read off the topology's hop-level groups.
#pragma once

#include "platform/topology.hpp"

#include <vector>

namespace cs {

struct ClusterLayout {
  std::vector<int> rack_of; // by host
  std::vector<int> pod_of;
  std::vector<std::vector<int>> hosts_in_rack;
  int hosts() const { return static_cast<int>(rack_of.size()); }
  int racks() const { return static_cast<int>(hosts_in_rack.size()); }

  static ClusterLayout of(const Topology& topology);
};

} // namespace cs
