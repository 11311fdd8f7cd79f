// Double binary tree all-reduce (NCCL's Tree; Sanders et al. 2009), pipelined in chunks.
#include "models/collectives/collective_algorithm.hpp"

#include <cmath>

namespace cs {
namespace {

class Tree : public CollectiveAlgorithm {
public:
  bool supports(const std::string& kind, const ProtocolParams&, const GroupShape&) const override
  {
    return kind == "all-reduce";
  }
  double closed_form(const std::string&, const ProtocolParams& p, double S, const GroupShape& g) const override
  {
    // Reduce up and broadcast down, log2(n) levels each; NCCL's model gives trees half the link rate
    // (tuning.cc: "tree: bw *= 0.5").
    const double depth = std::ceil(std::log2(g.ranks));
    return p.base_latency + 2 * depth * step_latency(p, g) + S / (0.5 * payload_rate(p, ring_bandwidth(g)));
  }
  // Two complementary binary trees (heap order, and heap order over reversed ranks), each reducing and then
  // broadcasting half of the buffer, pipelined in 4 chunks; up and down use their own streams.
  CollectiveDone expand(CollectiveEmitter& e) const override
  {
    const int n = e.ranks();
    const int chunks = 4;
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
  // NCCL builds its trees over nodes; ours are rank-level and would contend on the NICs (docs/collectives.md).
  bool tuner_eligible(const GroupShape& g) const override { return g.nodes == 1; }
  // The form is 0.43x to 3.2x the pipelined flows over 2-8 A100 (docs/collectives.md): keep its flows.
  bool closed_form_exact() const override { return false; }
  int preference() const override { return 1; }
};

} // namespace

CS_REGISTER_COLLECTIVE_ALGORITHM(Tree, "tree", "double binary tree all-reduce, pipelined in 4 chunks (NCCL Tree)");

} // namespace cs
