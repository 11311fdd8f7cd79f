#include "policies/cluster/cluster_scheduling.hpp"

#include <algorithm>

namespace cs {

std::vector<int> ClusterGpus::whole_free_on(int node) const
{
  std::vector<int> out;
  for (int g = node * gpus_per_node; g < (node + 1) * gpus_per_node; ++g)
    if (free_milli[g] == 1000)
      out.push_back(g);
  return out;
}

int ClusterGpus::best_fit_share(int milli) const
{
  int best = -1;
  for (int g = 0; g < static_cast<int>(free_milli.size()); ++g)
    if (free_milli[g] >= milli && (best < 0 || free_milli[g] < free_milli[best]))
      best = g;
  return best;
}

std::vector<int> ClusterGpus::take(const std::vector<int>& nodes, int gpus) const
{
  std::vector<int> out;
  for (int n : nodes)
    for (int g : whole_free_on(n)) {
      if (static_cast<int>(out.size()) == gpus)
        return out;
      out.push_back(g);
    }
  return static_cast<int>(out.size()) == gpus ? out : std::vector<int>{};
}

int ClusterGpus::best_fit_node(const std::vector<int>& nodes, int gpus) const
{
  int best = -1;
  for (int n : nodes)
    if (free_whole[n] >= gpus && (best < 0 || free_whole[n] < free_whole[best]))
      best = n;
  return best;
}

std::vector<int> ClusterGpus::fullest_first(std::vector<int> nodes) const
{
  std::stable_sort(nodes.begin(), nodes.end(), [&](int a, int b) { return free_whole[a] > free_whole[b]; });
  return nodes;
}

} // namespace cs
