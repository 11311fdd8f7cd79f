#include "models/dataflow/cluster_layout.hpp"

namespace cs {

ClusterLayout ClusterLayout::of(const Topology& topology)
{
  ClusterLayout l;
  for (int h = 0; h < topology.host_count(); ++h) {
    const auto& g = topology.vertex(topology.hosts()[h]).groups;
    const int rack = g.size() > 1 ? g[1] : 0;
    l.rack_of.push_back(rack);
    l.pod_of.push_back(g.size() > 2 ? g[2] : 0);
    if (static_cast<int>(l.hosts_in_rack.size()) <= rack)
      l.hosts_in_rack.resize(rack + 1);
    l.hosts_in_rack[rack].push_back(h);
  }
  return l;
}

} // namespace cs
