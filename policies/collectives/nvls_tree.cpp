// NVLS-tree all-reduce across nodes (NCCL's NVLSTree, 2.18+) [recon]: each node reduces through its NVSwitch, the
// GPUs of one rail run a double binary tree over the nodes on their NICs, and each node multicasts the result.
#include "models/collectives/collective_algorithm.hpp"

#include <algorithm>
#include <cmath>

namespace cs {
namespace {

constexpr int kChunks = 4; // pipelined like NCCL's chunks, so the switch and the network stages overlap

class NvlsTree : public CollectiveAlgorithm {
public:
  bool supports(const std::string& kind, const ProtocolParams& p, const GroupShape& g) const override
  {
    return kind == "all-reduce" && g.nvls && g.nodes > 1 && g.per_node > 4 && g.ranks == g.nodes * g.per_node &&
           p.name == "simple";
  }
  // NVLS latency plus a tree's 2 log2(nodes) network steps; then the slower of the switch stages (a port carries
  // S (g+1)/g each way) and the rail's tree (a double binary tree sends each node's 1/g share up to twice per
  // direction, once when there are two nodes).
  double closed_form(const std::string&, const ProtocolParams& p, double S, const GroupShape& g) const override
  {
    const int G = g.per_node;
    const double levels = std::ceil(std::log2(g.nodes));
    const double intra = S * (G + 1) / G / (g.intra_bw * kNvlsEfficiency * nvls_size_efficiency(S));
    const double inter = (g.nodes == 2 ? 1.0 : 2.0) * S / G / payload_rate(p, per_gpu_inter_bandwidth(g));
    return kNvlsLatency + 2 * levels * step_latency(p, g) + std::max(intra, inter);
  }
  CollectiveDone expand(CollectiveEmitter& e) const override;
  // Pipelined stages and the trees' uneven loads make the form an estimate: the analytical backend keeps the flows.
  bool closed_form_exact() const override { return false; }
  int preference() const override { return 3; }
};

CollectiveDone NvlsTree::expand(CollectiveEmitter& e) const
{
  const auto nodes = e.ranks_by_machine();
  const int N = static_cast<int>(nodes.size()), G = static_cast<int>(nodes[0].size());
  const double S = e.req.bytes, chunk = S / kChunks;
  const GroupShape g = group_shape(e.platform, e.req.hosts);
  const double eff = kNvlsEfficiency * nvls_size_efficiency(S);
  const double half_latency = std::max(0.0, kNvlsLatency / 2 - g.intra_lat);
  const double switch_bytes = chunk * (G + 1) / G / 2, piece = chunk / G / 2;
  CollectiveDone done(e.ranks());
  // Switch stage (reduce or multicast) of one chunk on one node: a ring shift carrying half the NVLS traffic.
  auto switch_stage = [&](int node, int channel, bool first, const std::vector<std::vector<int>>& after) {
    std::vector<int> sent(G);
    for (int i = 0; i < G; ++i) {
      sent[i] =
          e.send(nodes[node][i], nodes[node][(i + 1) % G], channel, switch_bytes, 1, eff, first ? half_latency : 0.0);
      for (int a : after[i])
        e.graph.add_dependency(a, sent[i]);
    }
    return sent;
  };
  for (int c = 0; c < kChunks; ++c) {
    // ready[node][rail]: the tasks after which that GPU holds its node's reduced share of this chunk.
    std::vector<std::vector<std::vector<int>>> ready(N, std::vector<std::vector<int>>(G));
    for (int n = 0; n < N; ++n) {
      const auto red = switch_stage(n, 0, c == 0, std::vector<std::vector<int>>(G));
      for (int i = 0; i < G; ++i)
        ready[n][i] = {red[i], red[(i + G - 1) % G]};
    }
    std::vector<std::vector<std::vector<int>>> result(N, std::vector<std::vector<int>>(G));
    for (int tree = 0; tree < 2; ++tree) {
      auto node_at = [&](int pos) { return tree == 0 ? pos : N - 1 - pos; };
      for (int rail = 0; rail < G; ++rail) {
        std::vector<int> up(N, -1), down(N, -1);
        for (int pos = N - 1; pos >= 1; --pos) {
          const int from = node_at(pos), to = node_at((pos - 1) / 2);
          up[pos] = e.send(nodes[from][rail], nodes[to][rail], 1 + 2 * tree, piece, 1);
          for (int a : ready[from][rail])
            e.graph.add_dependency(a, up[pos]);
          for (int child : {2 * pos + 1, 2 * pos + 2})
            if (child < N)
              e.graph.add_dependency(up[child], up[pos]);
        }
        std::vector<int> root_in(ready[node_at(0)][rail]);
        for (int child : {1, 2})
          if (child < N)
            root_in.push_back(up[child]);
        for (int a : root_in)
          result[node_at(0)][rail].push_back(a);
        for (int pos = 0; pos < N; ++pos)
          for (int child : {2 * pos + 1, 2 * pos + 2}) {
            if (child >= N)
              continue;
            down[child] = e.send(nodes[node_at(pos)][rail], nodes[node_at(child)][rail], 2 + 2 * tree, piece, 1);
            for (int a : pos == 0 ? root_in : std::vector<int>{down[pos]})
              e.graph.add_dependency(a, down[child]);
            result[node_at(child)][rail].push_back(down[child]);
          }
      }
    }
    for (int n = 0; n < N; ++n) {
      const auto cast = switch_stage(n, 5, c == 0, result[n]);
      if (c == kChunks - 1)
        for (int i = 0; i < G; ++i)
          done[nodes[n][(i + 1) % G]] = {cast[i], cast[(i + 1) % G]};
    }
  }
  return done;
}

} // namespace

CS_REGISTER_COLLECTIVE_ALGORITHM(NvlsTree, "nvls-tree",
                                 "NVLS inside nodes and a double binary tree of rails across them (NCCL NVLSTree)");

} // namespace cs
