// Double binary tree all-reduce (NCCL's Tree; Sanders et al. 2009), pipelined in chunks. Inside one node the trees
// are over ranks; across nodes, as NCCL builds them, over nodes, each node a chain of its GPUs behind one head GPU
// per channel.
#include "models/collectives/collective_algorithm.hpp"

#include <algorithm>
#include <cmath>

namespace cs {
namespace {

constexpr int kTreeChunks = 4; // one node's rank-level trees
// Across nodes the pipeline is deep (chain, tree levels, and back). NCCL (enqueue.cc) starts tree chunks at 512 KiB
// and halves them until each channel has at least 8 x depth chunks (down to 128 KiB), 4 x depth (64 KiB) or depth
// (32 KiB); we cap the count to bound the graph and the chunks' path latencies, which a stream pays in turn.
constexpr int kMaxNodeTreeChunks = 16;

/** Chunks of one tree and channel's share (`bytes`) across nodes for a tree `depth` GPUs deep. */
int node_tree_chunks(double bytes, int depth)
{
  double chunk = 512 * 1024;
  for (auto [per_depth, floor] : {std::pair{8, 131072.0}, std::pair{4, 65536.0}, std::pair{1, 32768.0}})
    while (bytes / chunk < per_depth * depth && chunk > floor)
      chunk /= 2;
  return static_cast<int>(std::clamp(std::ceil(bytes / chunk), 1.0, double(kMaxNodeTreeChunks)));
}

/** NCCL's tree depth across nodes: a node's chain, then the levels between nodes. */
int node_tree_depth(int per_node, int nodes) { return per_node + static_cast<int>(std::ceil(std::log2(nodes))); }

/** One tree (heap order over node positions, or its mirror) of one channel, for one chunk: up each node's chain to
 *  its head, up the node tree, down it, down each chain. */
struct NodeTreeChunk {
  CollectiveEmitter& e;
  const std::vector<std::vector<int>>& nodes;
  bool mirror;
  int head; // the channel's head GPU (local index); its chain runs head, head+1, ... (mod g)
  int stream;
  double piece;

  int node_at(int pos) const { return mirror ? static_cast<int>(nodes.size()) - 1 - pos : pos; }
  int chain(int node, int i) const { return nodes[node][(head + i) % nodes[node].size()]; }
  // Only the first chunk pays the protocol's step cost: later chunks' handshakes overlap the data in flight.
  bool first = true;
  int send(int from, int to, int dir, int step, double bytes)
  {
    return first ? e.send(from, to, stream + dir, bytes, step) : e.send(from, to, stream + dir, bytes, step, -1, 0.0);
  }

  /** Up each node's chain to its head, `bytes` a hop; per node, the task after which its head holds the chain's
   *  sum. */
  std::vector<std::vector<int>> chain_up(bool first_chunk, double bytes)
  {
    first = first_chunk;
    const int N = static_cast<int>(nodes.size()), G = static_cast<int>(nodes[0].size());
    std::vector<std::vector<int>> head_has(N);
    for (int n = 0; n < N; ++n) // the tail first
      for (int i = G - 1, prev = -1; i >= 1; --i) {
        const int t = send(chain(n, i), chain(n, i - 1), 0, first_chunk && i == G - 1 ? 0 : 1, bytes);
        if (prev >= 0)
          e.graph.add_dependency(prev, t);
        prev = t;
        if (i == 1)
          head_has[n] = {t};
      }
    return head_has;
  }

  /** The rest once the heads hold their chains' sums: returns per rank the transfer that delivers the result. */
  std::vector<std::vector<int>> run(bool first_chunk, const std::vector<std::vector<int>>& head_has)
  {
    first = first_chunk;
    const int N = static_cast<int>(nodes.size()), G = static_cast<int>(nodes[0].size());
    std::vector<std::vector<int>> result(e.ranks());
    std::vector<int> up(N, -1);
    for (int pos = N - 1; pos >= 1; --pos) {
      const int from = node_at(pos), to = node_at((pos - 1) / 2);
      // With one GPU per node there is no chain, and the leaves' first sends start the collective (its base cost).
      const bool leaf = 2 * pos + 1 >= N;
      up[pos] = send(chain(from, 0), chain(to, 0), 0, first_chunk && G == 1 && leaf ? 0 : 1, piece);
      for (int a : head_has[from])
        e.graph.add_dependency(a, up[pos]);
      for (int child : {2 * pos + 1, 2 * pos + 2})
        if (child < N)
          e.graph.add_dependency(up[child], up[pos]);
    }
    std::vector<std::vector<int>> reduced(N); // tasks after which a node's head holds the result
    reduced[node_at(0)] = head_has[node_at(0)];
    for (int child : {1, 2})
      if (child < N)
        reduced[node_at(0)].push_back(up[child]);
    for (int pos = 0; pos < N; ++pos) {
      const int n = node_at(pos);
      for (int child : {2 * pos + 1, 2 * pos + 2})
        if (child < N) {
          const int t = send(chain(n, 0), chain(node_at(child), 0), 1, 1, piece);
          for (int a : reduced[n])
            e.graph.add_dependency(a, t);
          reduced[node_at(child)] = {t};
        }
      result[chain(n, 0)] = reduced[n];
      std::vector<int> after = reduced[n];
      for (int i = 1; i < G; ++i) { // down the chain
        const int t = send(chain(n, i - 1), chain(n, i), 1, 1, piece);
        for (int a : after)
          e.graph.add_dependency(a, t);
        after = {t};
        result[chain(n, i)] = {t};
      }
    }
    return result;
  }
};

// NCCL's multi-node tree: two complementary trees over nodes (half the buffer each), one per channel through its
// own NIC, pipelined in chunks. A channel's two trees share each node's chain up to the head (same GPUs, same
// chunks, same start), so that part goes as one transfer of both halves: the same bytes over the same links at
// the same time, which max-min shares as it shared the two (a protocol with a per-channel rate cap keeps them
// apart, since one transfer would get one cap).
CollectiveDone expand_over_nodes(CollectiveEmitter& e)
{
  const auto nodes = e.ranks_by_machine();
  const int G = static_cast<int>(nodes[0].size());
  const GroupShape shape = group_shape(e.platform, e.req.hosts);
  const int channels = e.choice.protocol.single_channel ? 1 : shape.channels;
  const double share = e.req.bytes / 2 / channels;
  const int chunks = node_tree_chunks(share, node_tree_depth(G, static_cast<int>(nodes.size())));
  const bool shared_chain = G > 1 && e.choice.protocol.rate_cap <= 0;
  CollectiveDone done(e.ranks());
  for (int c = 0; c < channels; ++c) {
    std::vector<NodeTreeChunk> trees;
    for (int tree = 0; tree < 2; ++tree)
      trees.push_back({e, nodes, tree == 1, c * G / channels, 10 + 2 * (2 * c + tree), share / chunks});
    std::vector<std::vector<int>> last[2];
    for (int k = 0; k < chunks; ++k) {
      std::vector<std::vector<int>> both;
      if (shared_chain)
        both = trees[0].chain_up(k == 0, 2 * share / chunks);
      for (int tree = 0; tree < 2; ++tree)
        last[tree] = trees[tree].run(k == 0, shared_chain ? both : trees[tree].chain_up(k == 0, share / chunks));
    }
    for (int tree = 0; tree < 2; ++tree)
      for (int r = 0; r < e.ranks(); ++r)
        done[r].insert(done[r].end(), last[tree][r].begin(), last[tree][r].end());
  }
  return done;
}

class Tree : public CollectiveAlgorithm {
public:
  bool supports(const std::string& kind, const ProtocolParams&, const GroupShape& g) const override
  {
    return kind == "all-reduce" && (g.nodes == 1 || g.ranks == g.nodes * g.per_node);
  }
  double closed_form(const std::string&, const ProtocolParams& p, double S, const GroupShape& g) const override
  {
    // Reduce up and broadcast down; NCCL's model gives trees half the link rate (tuning.cc: "tree: bw *= 0.5").
    // One node: log2(n) levels of ranks. Several: each node's chain, then log2(nodes) levels between nodes, as
    // NCCL's tree latency 2 ((n/nodes - 1) intraLat + log2(nodes) interLat).
    const double rate = 0.5 * payload_rate(p, ring_bandwidth(g));
    if (g.nodes == 1)
      return p.base_latency + 2 * std::ceil(std::log2(g.ranks)) * step_latency(p, g) + S / rate;
    // The chunk pipeline's fill: the first chunk crosses every hop (up and down) before the data streams.
    const double levels = std::ceil(std::log2(g.nodes)), hops = 2 * (g.per_node - 1 + levels);
    const int channels = p.single_channel ? 1 : g.channels;
    const double share = S / 2 / channels,
                 chunk = share / node_tree_chunks(share, node_tree_depth(g.per_node, g.nodes));
    const double fill = (hops - 1) * chunk / payload_rate(p, per_gpu_inter_bandwidth(g));
    const double intra = p.step_overhead + g.intra_lat, inter = p.step_overhead + g.inter_lat;
    return p.base_latency + 2 * ((g.per_node - 1) * intra + levels * inter) + fill + S / rate;
  }
  // Two complementary binary trees (heap order, and heap order over reversed ranks), each reducing and then
  // broadcasting half of the buffer, pipelined in 4 chunks; up and down use their own streams.
  CollectiveDone expand(CollectiveEmitter& e) const override
  {
    if (group_shape(e.platform, e.req.hosts).nodes > 1)
      return expand_over_nodes(e);
    const int n = e.ranks();
    const int chunks = kTreeChunks;
    const double piece = e.req.bytes / 2 / chunks;
    CollectiveDone done(n);
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
  // NCCL's tree inside one node is a chain with a ring's latency and half its bandwidth, so its tuner runs rings
  // there; our rank-level trees stay for forcing. Across nodes it builds them over nodes, as expand_over_nodes does.
  bool tuner_eligible(const GroupShape& g) const override { return g.nodes > 1; }
  // The form is 0.43x to 3.2x the pipelined flows over 2-8 A100 (docs/collectives.md): keep its flows.
  bool closed_form_exact() const override { return false; }
  int preference() const override { return 1; }
};

} // namespace

CS_REGISTER_COLLECTIVE_ALGORITHM(Tree, "tree", "double binary tree all-reduce, pipelined in 4 chunks (NCCL Tree)");

} // namespace cs
