#include "models/collectives/collective_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

namespace cs {
namespace {

// Shared state of one expansion: where to put tasks and how a step's transfer is costed.
struct Emitter {
  TaskGraph& graph;
  StreamPool& pool;
  const PlatformSpec& platform;
  const CollectiveRequest& req;
  const CollectiveChoice& choice;
  std::uint16_t name;
  std::set<int> gated = {}; // streams whose first transfer here already waits for its rank's `ready`

  int machine(int rank) const
  {
    const Topology& t = platform.topology;
    return t.vertex(t.hosts().at(req.hosts[rank])).machine;
  }
  // A transfer of `payload` bytes in algorithm step `step`: protocol overhead, wire bytes and rate cap.
  int send(int from_rank, int to_rank, int channel, double payload, int step, double efficiency = -1)
  {
    const ProtocolParams& p = choice.protocol;
    double overhead = p.step_overhead + (step == 0 ? p.base_latency : 0.0);
    double eff = efficiency > 0 ? efficiency : p.efficiency;
    int stream = pool.get(req.hosts[from_rank], channel);
    int t = graph.add_transfer(stream, req.hosts[from_rank], req.hosts[to_rank], payload / eff, graph.names()[name],
                               req.labels, overhead, p.rate_cap);
    // Every stream's first transfer waits for the rank's input, not only step 0's: a leaf of a tree sends its
    // first chunk at step 1, and without this it would start while the previous collective still runs.
    if (!req.ready.empty() && req.ready[from_rank] >= 0 && gated.insert(stream).second)
      graph.add_dependency(req.ready[from_rank], t);
    return t;
  }
  int barrier(int rank, const std::vector<int>& after)
  {
    int t = graph.add_delay(pool.get(req.hosts[rank], 1000), 0.0, graph.names()[name], req.labels);
    for (int a : after)
      graph.add_dependency(a, t);
    return t;
  }
};

using Done = std::vector<std::vector<int>>;

// Rings: channel c enters each node at local rank c * per_node / channels and leaves from the one before it, so
// the channels cross node boundaries through distinct NICs.
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

Done ring(Emitter& e, const std::string& kind)
{
  const int n = static_cast<int>(e.req.hosts.size());
  std::vector<int> machines(n);
  for (int r = 0; r < n; ++r)
    machines[r] = e.machine(r);
  const GroupShape shape = group_shape(e.platform, e.req.hosts);
  const int channels = e.choice.protocol.single_channel ? 1 : shape.channels;
  const auto orders = ring_orders(machines, channels);
  Done done(n);
  const double S = e.req.bytes;
  if (kind == "broadcast") {
    // Pipelined chain from the root along channel 0's ring, in 8 chunks.
    const int chunks = 8;
    const auto& order = orders[0];
    int root_pos = static_cast<int>(std::find(order.begin(), order.end(), e.req.root) - order.begin());
    std::vector<int> last_in(n, -1);
    for (int c = 0; c < chunks; ++c)
      for (int h = 0; h < n - 1; ++h) {
        int from = order[(root_pos + h) % n], to = order[(root_pos + h + 1) % n];
        int t = e.send(from, to, 0, S / chunks, h == 0 && c == 0 ? 0 : 1);
        if (h > 0)
          e.graph.add_dependency(last_in[from], t);
        last_in[to] = t;
      }
    for (int r = 0; r < n; ++r)
      if (last_in[r] >= 0)
        done[r].push_back(last_in[r]);
    return done;
  }
  const int steps = kind == "all-reduce" ? 2 * (n - 1) : n - 1;
  const double chunk = S / n / channels;
  for (int c = 0; c < channels; ++c) {
    const auto& order = orders[c];
    std::vector<int> previous(n, -1); // by ring position
    for (int k = 0; k < steps; ++k) {
      std::vector<int> current(n);
      for (int i = 0; i < n; ++i) {
        int t = e.send(order[i], order[(i + 1) % n], c, chunk, k);
        if (k > 0)
          e.graph.add_dependency(previous[(i + n - 1) % n], t);
        current[i] = t;
      }
      previous = current;
    }
    for (int i = 0; i < n; ++i) {
      done[order[i]].push_back(previous[i]);
      done[order[i]].push_back(previous[(i + n - 1) % n]);
    }
  }
  return done;
}

Done rhd(Emitter& e)
{
  const int n = static_cast<int>(e.req.hosts.size());
  const int lg = static_cast<int>(std::lround(std::log2(n)));
  Done done(n);
  std::vector<int> received(n, -1); // per rank: the transfer it last received
  double size = e.req.bytes;
  auto exchange = [&](int distance, double bytes, int step) {
    std::vector<int> sent(n);
    for (int r = 0; r < n; ++r) {
      sent[r] = e.send(r, r ^ distance, 0, bytes, step);
      if (received[r] >= 0)
        e.graph.add_dependency(received[r], sent[r]);
    }
    for (int r = 0; r < n; ++r)
      received[r ^ distance] = sent[r];
  };
  int step = 0;
  for (int s = 0; s < lg; ++s) { // reduce-scatter by recursive halving
    size /= 2;
    exchange(n >> (s + 1), size, step++);
  }
  for (int s = lg - 1; s >= 0; --s) { // all-gather by recursive doubling
    exchange(n >> (s + 1), size, step++);
    size *= 2;
  }
  for (int r = 0; r < n; ++r)
    done[r] = {received[r]};
  return done;
}

Done tree(Emitter& e)
{
  // Two complementary binary trees (heap order, and heap order over reversed ranks), each reducing and then
  // broadcasting half of the buffer, pipelined in 4 chunks; up and down use their own streams.
  const int n = static_cast<int>(e.req.hosts.size());
  const int chunks = 4;
  const double piece = e.req.bytes / 2 / chunks;
  Done done(n);
  for (int tr = 0; tr < 2; ++tr) {
    auto rank_at = [&](int pos) { return tr == 0 ? pos : n - 1 - pos; };
    std::vector<std::vector<int>> up(chunks, std::vector<int>(n, -1)), down(chunks, std::vector<int>(n, -1));
    for (int c = 0; c < chunks; ++c) {
      for (int pos = n - 1; pos >= 1; --pos) {
        int t = e.send(rank_at(pos), rank_at((pos - 1) / 2), 2 * tr + 1, piece, c == 0 && pos == n - 1 ? 0 : 1);
        for (int child : {2 * pos + 1, 2 * pos + 2})
          if (child < n)
            e.graph.add_dependency(up[c][child], t);
        up[c][pos] = t;
      }
      for (int pos = 0; pos < n; ++pos)
        for (int child : {2 * pos + 1, 2 * pos + 2}) {
          if (child >= n)
            continue;
          int t = e.send(rank_at(pos), rank_at(child), 2 * tr + 2, piece, 1);
          if (pos == 0) {
            for (int k : {1, 2})
              if (k < n)
                e.graph.add_dependency(up[c][k], t);
          } else {
            e.graph.add_dependency(down[c][pos], t);
          }
          down[c][child] = t;
        }
    }
    for (int pos = 0; pos < n; ++pos)
      if (pos == 0) {
        for (int k : {1, 2})
          if (k < n)
            done[rank_at(0)].push_back(up[chunks - 1][k]);
      } else {
        done[rank_at(pos)].push_back(down[chunks - 1][pos]);
      }
  }
  return done;
}

Done nvls(Emitter& e)
{
  // Traffic-equivalent emulation of an in-switch reduction: every GPU port carries S (n + 1) / n each way at the
  // NVLS efficiency, in one ring-shift step (the switch itself is not a host on the platform).
  const int n = static_cast<int>(e.req.hosts.size());
  Done done(n);
  std::vector<int> sent(n);
  for (int r = 0; r < n; ++r)
    sent[r] = e.send(r, (r + 1) % n, 0, e.req.bytes * (n + 1) / n, 0, kNvlsEfficiency);
  for (int r = 0; r < n; ++r) {
    // The ring-shift has one step; the closed form's second step (multicast back) is its overhead.
    done[r] = {sent[r], sent[(r + n - 1) % n]};
  }
  return done;
}

Done all_to_all(Emitter& e, bool hierarchical)
{
  const int n = static_cast<int>(e.req.hosts.size());
  const double S = e.req.bytes;
  std::map<int, std::vector<int>> by_machine;
  for (int r = 0; r < n; ++r)
    by_machine[e.machine(r)].push_back(r);
  std::vector<int> machines;
  for (const auto& [m, ranks] : by_machine)
    machines.push_back(m);
  const int k = static_cast<int>(machines.size());
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
  // Between nodes: traffic aggregated per node pair (DESIGN.md section 2: never one flow per GPU pair at scale).
  // A node's k - 1 pair volumes are laid end to end and cut into g equal rail shares, so every NIC carries the
  // same bytes with at most k - 1 + g flows per node. A flow goes from rail r to rail r; since every receiver is
  // at a different offset j in its senders' lists, it too receives exactly one share per rail.
  if (k > 1) {
    const double pair_bytes = double(g) * g * S / n;
    const double share = (k - 1) * pair_bytes / g;
    for (int ia = 0; ia < k; ++ia)
      for (int j = 0; j < k - 1; ++j) {
        const int ib = (ia + 1 + j) % k;
        const auto& src = by_machine[machines[ia]];
        const auto& dst = by_machine[machines[ib]];
        const double lo = j * pair_bytes, hi = (j + 1) * pair_bytes;
        for (int r = static_cast<int>(std::floor(lo / share)); r < g && r * share < hi; ++r) {
          const double bytes = std::min(hi, (r + 1) * share) - std::max(lo, r * share);
          if (bytes <= 0)
            continue;
          const int rail = r;
          int t = e.send(src[rail], dst[rail], next_slot(src[rail]), bytes, hierarchical ? 1 : 0);
          if (hierarchical)
            e.graph.add_dependency(ready[machines[ia]], t);
          into_machine[machines[ib]].push_back(t);
        }
      }
  }
  Done done(n);
  for (const auto& [m, ranks] : by_machine) {
    int arrived = e.barrier(ranks[0], into_machine[m]);
    for (int r : ranks)
      done[r] = {arrived};
  }
  return done;
}

} // namespace

int add_closed_form_collective(TaskGraph& graph, int stream, const std::string& kind, double bytes,
                               const PlatformSpec& platform, const std::vector<int>& group_hosts, int after,
                               TaskLabels labels)
{
  const double seconds =
      group_hosts.size() < 2 ? 0.0 : choose_collective(kind, "auto", bytes, group_shape(platform, group_hosts)).seconds;
  const int t = graph.add_delay(stream, seconds, kind + "/closed-form", labels);
  if (after >= 0)
    graph.add_dependency(after, t);
  return t;
}

std::vector<std::vector<int>> expand_collective(TaskGraph& graph, StreamPool& pool, const PlatformSpec& platform,
                                                const CollectiveRequest& req, const CollectiveChoice& choice)
{
  const int n = static_cast<int>(req.hosts.size());
  if (n == 0)
    throw std::invalid_argument("a collective needs at least one rank");
  Emitter e{graph, pool,   platform,
            req,   choice, graph.intern(req.kind + "/" + choice.algorithm + "/" + choice.protocol.name)};
  if (n == 1) {
    Done done(1);
    done[0] = {
        e.barrier(0, req.ready.empty() || req.ready[0] < 0 ? std::vector<int>{} : std::vector<int>{req.ready[0]})};
    return done;
  }
  const std::string& a = choice.algorithm;
  if (req.kind == "p2p") {
    Done done(n);
    int t = e.send(0, 1, 0, req.bytes, 0);
    done[0] = {t};
    done[1] = {t};
    return done;
  }
  if (a == "ring")
    return ring(e, req.kind);
  if (a == "rhd") {
    if (req.kind != "all-reduce")
      throw std::invalid_argument("rhd is expanded for all-reduce only");
    return rhd(e);
  }
  if (a == "tree")
    return tree(e);
  if (a == "nvls")
    return nvls(e);
  if (a == "direct" || a == "hierarchical")
    return all_to_all(e, a == "hierarchical");
  throw std::invalid_argument("no expansion for algorithm '" + a + "'");
}

} // namespace cs
