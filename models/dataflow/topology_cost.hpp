// The hierarchical cost of moving bytes between hosts: a weight per topology level, and policy-compliant path length.
#pragma once

#include "models/dataflow/cluster_layout.hpp"
#include "platform/topology.hpp"

#include <string>
#include <vector>

namespace cs {

/** Level weights c0 <= c1 <= c2 <= c3 (same host, rack, pod, through the core) as in the Hit-scheduler's TAA model,
 *  and, for PAT, the length in hops of the path a flow must take when inter-rack traffic has to traverse a chain of
 *  middlebox switches. Plain data; built once per run. */
class TopologyCost {
public:
  /** Throws std::invalid_argument naming a middlebox that is not a switch of the topology. */
  TopologyCost(const Topology& topology, std::vector<double> level_costs, const std::vector<std::string>& middleboxes);

  int level(int a, int b) const;
  /** Cost per byte between hosts a and b by level. */
  double weight(int a, int b) const { return level_costs_[level(a, b)]; }
  /** Hops of the policy-compliant path from a to b: through every middlebox in order when the hosts are in
   *  different racks, else the direct path. */
  int policy_hops(int a, int b) const;
  /** Hops between two hosts whose lowest common level is `level`. */
  int level_hops(int level) const { return level_hops_[level]; }
  bool has_policy() const { return !middlebox_distance_.empty(); }
  const ClusterLayout& layout() const { return layout_; }
  const std::vector<double>& level_costs() const { return level_costs_; }

private:
  ClusterLayout layout_;
  std::vector<double> level_costs_;
  std::vector<int> level_hops_;                      // hops between two hosts at level 0..3
  std::vector<std::vector<int>> middlebox_distance_; // per middlebox: hops to every host
  std::vector<int> between_middleboxes_;             // hops from middlebox i to i+1
};

} // namespace cs
