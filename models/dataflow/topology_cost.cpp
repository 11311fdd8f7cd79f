#include "models/dataflow/topology_cost.hpp"

#include <stdexcept>

namespace cs {

TopologyCost::TopologyCost(const Topology& topology, std::vector<double> level_costs,
                           const std::vector<std::string>& middleboxes)
    : layout_(ClusterLayout::of(topology)), level_costs_(std::move(level_costs)), level_hops_(4, 0)
{
  // In a tree every host pair of one level is the same number of hops apart: read it off host 0.
  const auto from0 = topology.hop_distances(topology.hosts()[0]);
  for (int h = 1; h < topology.host_count(); ++h) {
    int lvl = topology.hop_level(0, h);
    if (level_hops_[lvl] == 0)
      level_hops_[lvl] = from0[topology.hosts()[h]];
  }
  std::vector<int> vertices;
  for (const auto& name : middleboxes) {
    int v = topology.find_vertex(name);
    if (v < 0 || topology.vertex(v).is_host)
      throw std::invalid_argument("middlebox '" + name + "' is not a switch of this cluster");
    vertices.push_back(v);
    auto dist = topology.hop_distances(v);
    std::vector<int> to_host(topology.host_count());
    for (int h = 0; h < topology.host_count(); ++h)
      to_host[h] = dist[topology.hosts()[h]];
    middlebox_distance_.push_back(std::move(to_host));
  }
  for (std::size_t i = 0; i + 1 < vertices.size(); ++i)
    between_middleboxes_.push_back(topology.hop_distances(vertices[i])[vertices[i + 1]]);
}

int TopologyCost::level(int a, int b) const
{
  if (a == b)
    return 0;
  if (layout_.rack_of[a] == layout_.rack_of[b])
    return 1;
  if (layout_.pod_of[a] == layout_.pod_of[b])
    return 2;
  return 3;
}

int TopologyCost::policy_hops(int a, int b) const
{
  const int lvl = level(a, b);
  if (lvl <= 1 || middlebox_distance_.empty())
    return level_hops_[lvl];
  int hops = middlebox_distance_.front()[a] + middlebox_distance_.back()[b];
  for (int d : between_middleboxes_)
    hops += d;
  return hops;
}

} // namespace cs
