// `topology-aware`: the closest placement the free GPUs allow: one node (best fit); else one rack (the rack with the
// fewest free GPUs that holds the gang, consolidated inside it); else the fewest racks, freest racks first.
#include "policies/cluster/cluster_scheduling.hpp"

#include <algorithm>
#include <map>

namespace cs {
namespace {

class TopologyAwarePlacement : public GangPlacement {
public:
  void configure(ObjectReader&) override {}
  std::vector<int> place(const ClusterGpus& c, int gpus) const override
  {
    std::map<int, std::vector<int>> racks; // rack -> its nodes
    for (int n = 0; n < c.nodes(); ++n)
      racks[c.rack_of_node[n]].push_back(n);
    std::vector<int> all;
    for (const auto& [rack, nodes] : racks)
      all.insert(all.end(), nodes.begin(), nodes.end());
    if (gpus <= c.gpus_per_node)
      if (const int n = c.best_fit_node(all, gpus); n >= 0)
        return c.take({n}, gpus);
    auto free_in = [&](const std::vector<int>& nodes) {
      int f = 0;
      for (int n : nodes)
        f += c.free_whole[n];
      return f;
    };
    int best = -1;
    for (const auto& [rack, nodes] : racks)
      if (const int f = free_in(nodes); f >= gpus && (best < 0 || f < free_in(racks[best])))
        best = rack;
    if (best >= 0)
      return c.take(c.fullest_first(racks[best]), gpus);
    std::vector<std::pair<int, int>> order; // (free, rack), freest first
    for (const auto& [rack, nodes] : racks)
      order.emplace_back(-free_in(nodes), rack);
    std::sort(order.begin(), order.end());
    std::vector<int> nodes;
    for (const auto& [f, rack] : order) {
      auto in_rack = c.fullest_first(racks[rack]);
      nodes.insert(nodes.end(), in_rack.begin(), in_rack.end());
    }
    return c.take(nodes, gpus);
  }
};

} // namespace

CS_REGISTER_POLICY(GangPlacement, TopologyAwarePlacement, "placement", "topology-aware",
                   "one node, else one rack (best fit), else the fewest racks: the closest the free GPUs allow");

} // namespace cs
