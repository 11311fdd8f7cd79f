#include "policies/collectives/all_to_all.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace cs {

double all_to_all_time(bool hierarchical, const ProtocolParams& p, double S, const GroupShape& g)
{
  const int n = g.ranks;
  const double step = step_latency(p, g);
  const double intra = (g.per_node - 1) * S / n;                   // bytes per GPU to its node's peers
  const double inter_node = g.per_node * (n - g.per_node) * S / n; // bytes per node leaving it
  const double intra_t = intra / payload_rate(p, g.intra_bw);
  const double inter_t = g.nodes > 1 ? inter_node / payload_rate(p, g.nics * g.nic_bw) : 0.0;
  if (!hierarchical)
    return p.base_latency + step + std::max(intra_t, inter_t);
  // Two phases: regroup inside the node by destination rail, then rail-to-rail across nodes.
  const double phase1 = (g.per_node - 1) * S / g.per_node / payload_rate(p, g.intra_bw);
  return p.base_latency + 2 * step + phase1 + inter_t;
}

namespace {

// Between nodes: a node's k - 1 pair volumes are laid end to end and cut into g equal rail shares, so every NIC
// carries the same bytes with at most k - 1 + g flows per node. A flow goes from rail r to rail r; since every
// receiver is at a different offset j in its senders' lists, it too receives exactly one share per rail.
void inter_node_shares(CollectiveEmitter& e, bool hierarchical, const std::map<int, std::vector<int>>& by_machine,
                       const std::map<int, int>& ready, std::map<int, std::vector<int>>& into_machine,
                       const std::function<int(int)>& next_slot)
{
  std::vector<int> machines;
  for (const auto& [m, ranks] : by_machine)
    machines.push_back(m);
  const int n = e.ranks(), k = static_cast<int>(machines.size()), g = n / k;
  const double pair_bytes = double(g) * g * e.req.bytes / n;
  const double share = (k - 1) * pair_bytes / g;
  for (int ia = 0; ia < k; ++ia)
    for (int j = 0; j < k - 1; ++j) {
      const int ib = (ia + 1 + j) % k;
      const auto& src = by_machine.at(machines[ia]);
      const auto& dst = by_machine.at(machines[ib]);
      const double lo = j * pair_bytes, hi = (j + 1) * pair_bytes;
      for (int r = static_cast<int>(std::floor(lo / share)); r < g && r * share < hi; ++r) {
        const double bytes = std::min(hi, (r + 1) * share) - std::max(lo, r * share);
        if (bytes <= 0)
          continue;
        int t = e.send(src[r], dst[r], next_slot(src[r]), bytes, hierarchical ? 1 : 0);
        if (hierarchical)
          e.graph.add_dependency(ready.at(machines[ia]), t);
        into_machine[machines[ib]].push_back(t);
      }
    }
}

} // namespace

CollectiveDone expand_all_to_all(CollectiveEmitter& e, bool hierarchical)
{
  const int n = e.ranks();
  const double S = e.req.bytes;
  std::map<int, std::vector<int>> by_machine;
  for (int r = 0; r < n; ++r)
    by_machine[e.machine(r)].push_back(r);
  const int k = static_cast<int>(by_machine.size());
  const int g = n / k;
  constexpr int kSlots = 8; // concurrent sends per GPU; more flows to the same port would only share it
  std::map<int, std::vector<int>> into_machine;
  std::vector<int> slot(n, 0);
  auto next_slot = [&](int r) { return 1 + (slot[r]++ % kSlots); };
  // Inside each node: one flow per GPU pair (S/n direct; S/g per peer in the hierarchical first phase).
  std::map<int, std::vector<int>> phase1;
  for (const auto& [m, ranks] : by_machine)
    for (int a : ranks)
      for (int b : ranks)
        if (a != b) {
          int t = e.send(a, b, next_slot(a), hierarchical ? S / g : S / n, 0);
          into_machine[m].push_back(t);
          phase1[m].push_back(t);
        }
  std::map<int, int> ready;
  if (hierarchical)
    for (const auto& [m, ranks] : by_machine)
      ready[m] = e.barrier(ranks[0], phase1[m]);
  if (k > 1)
    inter_node_shares(e, hierarchical, by_machine, ready, into_machine, next_slot);
  CollectiveDone done(n);
  for (const auto& [m, ranks] : by_machine) {
    int arrived = e.barrier(ranks[0], into_machine[m]);
    for (int r : ranks)
      done[r] = {arrived};
  }
  return done;
}

} // namespace cs
