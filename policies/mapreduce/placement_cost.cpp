#include "policies/mapreduce/task_scheduler.hpp"

#include <algorithm>

namespace cs {

int map_locality(const CandidateTask& t, int host, const TopologyCost& cost)
{
  int best = 3;
  for (int h : t.data_hosts)
    best = std::min(best, cost.level(h, host));
  return best;
}

double placement_cost(const CandidateTask& t, int host, const TopologyCost& cost)
{
  if (t.map)
    return t.bytes * cost.level_costs()[map_locality(t, host, cost)];
  double c = 0;
  for (std::size_t i = 0; i < t.data_hosts.size(); ++i)
    c += t.data_bytes[i] * cost.weight(t.data_hosts[i], host);
  return c;
}

double policy_cost(const CandidateTask& t, int host, const TopologyCost& cost)
{
  if (t.map) {
    int best = -1;
    for (int h : t.data_hosts)
      if (int hops = cost.policy_hops(h, host); best < 0 || hops < best)
        best = hops;
    return t.bytes * std::max(best, 0);
  }
  double c = 0;
  for (std::size_t i = 0; i < t.data_hosts.size(); ++i)
    c += t.data_bytes[i] * cost.policy_hops(t.data_hosts[i], host);
  return c;
}

} // namespace cs
