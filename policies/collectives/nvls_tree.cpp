// NVLS-tree all-reduce across nodes (NCCL's NVLSTree, 2.18+) [recon]: each node reduces through its NVSwitch, the
// GPUs of one rail run a double binary tree over the nodes on their NICs, and each node multicasts the result.
#include "models/collectives/collective_algorithm.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace cs {
namespace {

constexpr int kNvlsChunks = 4; // pipelined like NCCL's chunks, so the switch and the network stages overlap
// NCCL's chunk on a network channel (its logs print "P2P Chunksize set to 131072" on H100 nodes, nccl#1357).
constexpr double kNcclChunk = 131072;

class NvlsTree : public CollectiveAlgorithm {
public:
  bool supports(const std::string& kind, const ProtocolParams& p, const GroupShape& g) const override
  {
    return kind == "all-reduce" && g.nvls && g.nodes > 1 && g.per_node > 4 && g.ranks == g.nodes * g.per_node &&
           p.name == "simple";
  }
  // NVLS latency plus a tree's 2 log2(nodes) network steps; then the slowest of the switch stages (a port carries
  // S (g+1)/g each way), the rail's tree (a double binary tree sends each node's 1/g share up to twice per
  // direction, once when there are two nodes) and NCCL's per-head bandwidth cap.
  double closed_form(const std::string& kind, const ProtocolParams& p, double S, const GroupShape& g) const override
  {
    const int G = g.per_node;
    const double levels = std::ceil(std::log2(g.nodes));
    const double intra = S * (G + 1) / G / (g.intra_bw * g.nvls_efficiency * nvls_size_efficiency(S));
    const double inter = (g.nodes == 2 ? 1.0 : 2.0) * S / G / payload_rate(p, per_gpu_inter_bandwidth(g));
    const double capped = busbw_factor(kind, g.ranks) * S / nvls_tree_busbw_cap(g.nodes, heads(g));
    return kNvlsLatency + 2 * levels * step_latency(p, g) + std::max({intra, inter, capped});
  }
  // NCCL's NVLS heads: GPUs with a NIC of their own, one channel each.
  static int heads(const GroupShape& g) { return std::min(g.nics, g.per_node); }
  CollectiveDone expand(CollectiveEmitter& e) const override;
  // Pipelined stages and the trees' uneven loads make the form an estimate: the analytical backend keeps the flows.
  bool closed_form_exact() const override { return false; }
  int preference() const override { return 3; }
};

using PerGpu = std::vector<std::vector<std::vector<int>>>; // [node][local rank] -> tasks
using Sends = std::vector<std::vector<std::vector<int>>>;  // [tree][rail][position in the tree] -> send
// Emits (or, planning, only counts) one transfer: from rank, to rank, channel, payload, efficiency, fixed overhead.
using Sender = std::function<int(int, int, int, double, double, double)>;

// One chunk of every rail's double binary tree: up-sends reduce the rail's share towards each tree's root, down-sends
// return the result. With `dependent`, each stage waits for the stage before it in this chunk; without, the stages
// of the fluid bulk run side by side. A parent's second child gets its own stream, so a fluid bulk's two down-sends
// run together. Fills up, down and result[node][rail] (what that GPU's share is complete after).
void rail_trees(CollectiveEmitter& e, const std::vector<std::vector<int>>& nodes, double piece, bool dependent,
                const Sender& send, const PerGpu& ready, Sends& up, Sends& down, PerGpu& result)
{
  const int N = static_cast<int>(nodes.size()), G = static_cast<int>(nodes[0].size());
  auto depend_on = [&](int task, const std::vector<int>& on) {
    if (dependent)
      for (int a : on)
        e.graph.add_dependency(a, task);
  };
  for (int tree = 0; tree < 2; ++tree) {
    auto node_at = [&](int pos) { return tree == 0 ? pos : N - 1 - pos; };
    for (int rail = 0; rail < G; ++rail) {
      auto& u = up[tree][rail];
      auto& d = down[tree][rail];
      for (int pos = N - 1; pos >= 1; --pos) {
        u[pos] = send(nodes[node_at(pos)][rail], nodes[node_at((pos - 1) / 2)][rail], 1 + 2 * tree, piece, -1, -1);
        depend_on(u[pos], ready[node_at(pos)][rail]);
        for (int child : {2 * pos + 1, 2 * pos + 2})
          if (child < N)
            depend_on(u[pos], {u[child]});
      }
      // What the root's reduction waits for: its own share and its children's.
      std::vector<int> root_in = ready[node_at(0)][rail];
      for (int child : {1, 2})
        if (child < N)
          root_in.push_back(u[child]);
      result[node_at(0)][rail] = root_in;
      for (int pos = 0; pos < N; ++pos)
        for (int child : {2 * pos + 1, 2 * pos + 2}) {
          if (child >= N)
            continue;
          const int channel = child == 2 * pos + 1 ? 2 + 2 * tree : 6 + tree;
          d[child] = send(nodes[node_at(pos)][rail], nodes[node_at(child)][rail], channel, piece, -1, -1);
          depend_on(d[child], pos == 0 ? root_in : std::vector<int>{d[pos]});
          result[node_at(child)][rail] = {d[child]};
        }
    }
  }
}

// One chunk of the whole all-reduce: each node's switch reduce, the rails' trees, each node's multicast. Returns, per
// node, the multicast sends.
std::vector<std::vector<int>> nvls_tree_chunk(CollectiveEmitter& e, const std::vector<std::vector<int>>& nodes,
                                              double chunk, bool dependent, double switch_eff, double first_overhead,
                                              const Sender& send)
{
  const int N = static_cast<int>(nodes.size()), G = static_cast<int>(nodes[0].size());
  const double switch_bytes = chunk * (G + 1) / G / 2;
  // Switch stage (reduce or multicast) on one node: a ring shift carrying half the NVLS traffic.
  auto switch_stage = [&](int node, int channel, const std::vector<std::vector<int>>& after) {
    std::vector<int> sent(G);
    for (int i = 0; i < G; ++i) {
      sent[i] = send(nodes[node][i], nodes[node][(i + 1) % G], channel, switch_bytes, switch_eff, first_overhead);
      if (dependent)
        for (int a : after[i])
          e.graph.add_dependency(a, sent[i]);
    }
    return sent;
  };
  PerGpu ready(N, std::vector<std::vector<int>>(G)), result = ready;
  for (int n = 0; n < N; ++n) {
    const auto red = switch_stage(n, 0, ready[n]);
    for (int i = 0; i < G; ++i)
      ready[n][i] = {red[i], red[(i + G - 1) % G]};
  }
  Sends up(2, std::vector<std::vector<int>>(G, std::vector<int>(N, -1))), down = up;
  rail_trees(e, nodes, chunk / G / 2, dependent, send, ready, up, down, result);
  std::vector<std::vector<int>> cast(N);
  for (int n = 0; n < N; ++n)
    cast[n] = switch_stage(n, 5, result[n]);
  return cast;
}

} // namespace

CollectiveDone NvlsTree::expand(CollectiveEmitter& e) const
{
  const auto nodes = e.ranks_by_machine();
  const int N = static_cast<int>(nodes.size()), G = static_cast<int>(nodes[0].size());
  const double S = e.req.bytes;
  const GroupShape g = group_shape(e.platform, e.req.hosts);
  const double eff = g.nvls_efficiency * nvls_size_efficiency(S);
  const double half_latency = std::max(0.0, kNvlsLatency / 2 - g.intra_lat);
  const Sender emit = [&](int from, int to, int channel, double payload, double efficiency, double overhead) {
    return e.send(from, to, channel, payload, 1, efficiency, overhead);
  };
  CollectiveDone done(e.ranks());
  auto finish = [&](const std::vector<std::vector<int>>& cast) {
    for (int n = 0; n < N; ++n)
      for (int i = 0; i < G; ++i)
        done[nodes[n][(i + 1) % G]] = {cast[n][i], cast[n][(i + 1) % G]};
    return done;
  };
  // NCCL streams each rail's tree in chunks of about kNcclChunk: in steady state every stage (switch reduce, each tree
  // level up and down, multicast) runs at once at the pipeline's rate, the busiest link's, and filling and draining
  // it costs a few chunks. Four chunks with true dependencies charged a quarter of the data per tree level instead
  // (a 2 GiB all-reduce over 16 nodes: 219 GB/s busbw, against the ~380 GB/s NVIDIA quotes at scale).
  const double tail = kNcclChunk * 2 * G; // two trees x G rails
  if (S / kNvlsChunks <= tail) {
    std::vector<std::vector<int>> cast;
    for (int c = 0; c < kNvlsChunks; ++c)
      cast = nvls_tree_chunk(e, nodes, S / kNvlsChunks, true, eff, c == 0 ? half_latency : 0.0, emit);
    return finish(cast);
  }
  // Larger: the bulk as one fluid chunk whose transfers all start together, each capped at the pipeline's rate so
  // that every link carries at most its capacity (planned from the routes, so an oversubscribed or shared link slows
  // the whole pipeline as it would NCCL's); then one NCCL-sized tail chunk with true dependencies, after the bulk on
  // every stream, pays the fill and drain through every level.
  const double bulk = S - tail;
  std::map<std::pair<int, bool>, double> load; // wire bytes per link direction
  const auto& topo = e.platform.topology;
  auto wire = [&](double payload, double efficiency) { // the bytes e.send puts on the links
    return payload / (efficiency > 0 ? efficiency : e.choice.protocol.efficiency);
  };
  const Sender plan = [&](int from, int to, int, double payload, double efficiency, double) {
    for (const auto& use : topo.route(e.req.hosts[from], e.req.hosts[to]))
      load[{use.link, use.up}] += wire(payload, efficiency);
    return -1;
  };
  nvls_tree_chunk(e, nodes, bulk, false, eff, 0.0, plan);
  // The bulk's period: its busiest link's, or NCCL's per-head cap if that is slower.
  double period = busbw_factor("all-reduce", e.ranks()) * bulk / nvls_tree_busbw_cap(N, NvlsTree::heads(g));
  for (const auto& [direction, bytes] : load)
    period = std::max(period, bytes / topo.links()[direction.first].bandwidth);
  const Sender paced = [&](int from, int to, int channel, double payload, double efficiency, double overhead) {
    return e.send(from, to, channel, payload, 1, efficiency, overhead, wire(payload, efficiency) / period);
  };
  nvls_tree_chunk(e, nodes, bulk, false, eff, half_latency, paced);
  return finish(nvls_tree_chunk(e, nodes, tail, true, eff, 0.0, emit));
}

CS_REGISTER_COLLECTIVE_ALGORITHM(NvlsTree, "nvls-tree",
                                 "NVLS inside nodes and a double binary tree of rails across them (NCCL NVLSTree)");

} // namespace cs
