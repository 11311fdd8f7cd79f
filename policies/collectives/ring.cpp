// Ring collectives (NCCL's Ring; Patarasuk & Yuan 2009 for the all-reduce): all-reduce, reduce-scatter, all-gather
// and a pipelined broadcast, one ring per channel through distinct NICs.
#include "models/collectives/collective_algorithm.hpp"

#include <algorithm>
#include <map>

namespace cs {
namespace {

// Channel c enters each node at local rank c * per_node / channels and leaves from the one before it, so the
// channels cross node boundaries through distinct NICs.
std::vector<std::vector<int>> ring_orders(const std::vector<int>& machine_of_rank, int channels)
{
  std::map<int, std::vector<int>> by_machine;
  for (int r = 0; r < static_cast<int>(machine_of_rank.size()); ++r)
    by_machine[machine_of_rank[r]].push_back(r);
  std::vector<std::vector<int>> orders(channels);
  for (int c = 0; c < channels; ++c)
    for (const auto& [m, ranks] : by_machine) {
      int g = static_cast<int>(ranks.size());
      int start = (c * g) / channels;
      for (int i = 0; i < g; ++i)
        orders[c].push_back(ranks[(start + i) % g]);
    }
  return orders;
}

// Pipelined chain from the root along channel 0's ring, in 8 chunks.
CollectiveDone broadcast(CollectiveEmitter& e, const std::vector<int>& order)
{
  const int n = e.ranks(), chunks = 8;
  CollectiveDone done(n);
  const int root_pos = static_cast<int>(std::find(order.begin(), order.end(), e.req.root) - order.begin());
  std::vector<int> last_in(n, -1);
  for (int c = 0; c < chunks; ++c)
    for (int h = 0; h < n - 1; ++h) {
      int from = order[(root_pos + h) % n], to = order[(root_pos + h + 1) % n];
      int t = e.send(from, to, 0, e.req.bytes / chunks, h == 0 && c == 0 ? 0 : 1);
      if (h > 0)
        e.graph.add_dependency(last_in[from], t);
      last_in[to] = t;
    }
  for (int r = 0; r < n; ++r)
    if (last_in[r] >= 0)
      done[r].push_back(last_in[r]);
  return done;
}

// Steps of a ring collective other than the broadcast: 2(n-1) for the all-reduce, n-1 for the reduce-scatter and the
// all-gather.
int ring_steps(const std::string& kind, int n) { return kind == "all-reduce" ? 2 * (n - 1) : n - 1; }

class Ring : public CollectiveAlgorithm {
public:
  bool supports(const std::string& kind, const ProtocolParams&, const GroupShape&) const override
  {
    return kind != "all-to-all" && kind != "p2p";
  }
  double closed_form(const std::string& kind, const ProtocolParams& p, double S, const GroupShape& g) const override
  {
    const int n = g.ranks;
    const double step = step_latency(p, g) + p.ring_fill;
    const double bw = payload_rate(p, ring_bandwidth(g));
    if (kind == "broadcast") // pipelined along the ring in 8 chunks: n + 6 chunk-steps end to end
      return p.base_latency + (n + 6) * (step_latency(p, g) + S / 8 / bw);
    return p.base_latency + ring_steps(kind, n) * step + ring_steps(kind, n) / double(n) * S / bw;
  }
  double unseen_by_tuner(const std::string& kind, const ProtocolParams& p, double, const GroupShape& g) const override
  {
    return kind == "broadcast" ? 0.0 : ring_steps(kind, g.ranks) * p.ring_fill;
  }
  CollectiveDone expand(CollectiveEmitter& e) const override
  {
    const int n = e.ranks();
    std::vector<int> machines(n);
    for (int r = 0; r < n; ++r)
      machines[r] = e.machine(r);
    const GroupShape shape = group_shape(e.platform, e.req.hosts);
    const int channels = e.choice.protocol.single_channel ? 1 : shape.channels;
    const auto orders = ring_orders(machines, channels);
    if (e.req.kind == "broadcast")
      return broadcast(e, orders[0]);
    return aggregated(e, orders, shape);
  }
  int preference() const override { return 0; }

private:
  // Step by step, a 1 MiB all-reduce over 128 x 8 GPUs is 2.1M transfers. NCCL's ring runs its steps in lockstep
  // (a step waits for the predecessor's previous one), so every step costs the slowest neighbour pair. Here the
  // steps are cut into at most kSuperSteps super-steps: one transfer per rank, channel and super-step carries its
  // steps' bytes, its overhead is their protocol overheads and path latencies at the slowest pair (less the one hop
  // the network charges), and it waits for the predecessor's previous super-step, so contention on one link still
  // holds the ring back, at a coarser grain. A join on the last super-steps ends the collective for every rank
  // (none is done before the slowest). Where links are not shared this is the closed form.
  static constexpr int kSuperSteps = 8;

  static CollectiveDone aggregated(CollectiveEmitter& e, const std::vector<std::vector<int>>& orders,
                                   const GroupShape& shape)
  {
    const int n = e.ranks();
    const int channels = static_cast<int>(orders.size());
    const ProtocolParams& p = e.choice.protocol;
    const int steps = ring_steps(e.req.kind, n);
    const int supers = std::min(steps, kSuperSteps);
    const double chunk = e.req.bytes / n / channels;
    const double hop = step_latency(p, shape) - p.step_overhead;
    std::vector<int> last;
    for (int c = 0; c < channels; ++c) {
      const auto& order = orders[c];
      std::vector<double> own_hop(n);
      for (int i = 0; i < n; ++i)
        own_hop[i] = e.platform.topology.route_latency(e.req.hosts[order[i]], e.req.hosts[order[(i + 1) % n]]);
      std::vector<int> previous(n, -1); // by ring position
      for (int g = 0; g < supers; ++g) {
        const int k = (g + 1) * steps / supers - g * steps / supers;
        std::vector<int> current(n);
        for (int i = 0; i < n; ++i) {
          const double overhead = (g == 0 ? p.base_latency : 0.0) + k * (p.step_overhead + p.ring_fill) +
                                  std::max(0.0, k * hop - own_hop[i]);
          current[i] = e.send(order[i], order[(i + 1) % n], c, chunk * k, g, -1, overhead);
          if (g > 0)
            e.graph.add_dependency(previous[(i + n - 1) % n], current[i]);
        }
        previous = current;
      }
      last.insert(last.end(), previous.begin(), previous.end());
    }
    return CollectiveDone(n, std::vector<int>{e.barrier(0, last)});
  }
};

} // namespace

CS_REGISTER_COLLECTIVE_ALGORITHM(Ring, "ring", "NCCL Ring: n-1 (2(n-1) for all-reduce) steps to the next rank");

} // namespace cs
