// Recursive halving-doubling all-reduce (Rabenseifner; Thakur et al. 2005): for power-of-two groups.
#include "models/collectives/collective_algorithm.hpp"

#include <cmath>

namespace cs {
namespace {

class RecursiveHalvingDoubling : public CollectiveAlgorithm {
public:
  // LL128 is NCCL's for its rings and trees only.
  bool supports(const std::string& kind, const ProtocolParams& p, const GroupShape& g) const override
  {
    return kind == "all-reduce" && g.ranks > 0 && (g.ranks & (g.ranks - 1)) == 0 && p.name != "ll128";
  }
  // log2(n) pairwise exchanges per phase; the large exchanges pair ranks across nodes when the group spans several.
  double closed_form(const std::string&, const ProtocolParams& p, double S, const GroupShape& g) const override
  {
    const int n = g.ranks;
    const double bw = payload_rate(p, g.nodes > 1 ? per_gpu_inter_bandwidth(g) : g.intra_bw);
    return p.base_latency + 2 * std::log2(n) * step_latency(p, g) + 2.0 * (n - 1) / n * S / bw;
  }
  CollectiveDone expand(CollectiveEmitter& e) const override
  {
    const int n = e.ranks();
    const int lg = static_cast<int>(std::lround(std::log2(n)));
    CollectiveDone done(n);
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
  bool tuner_eligible(const GroupShape&) const override { return false; } // NCCL has no rhd
  int preference() const override { return 2; }
};

} // namespace

CS_REGISTER_COLLECTIVE_ALGORITHM(RecursiveHalvingDoubling, "rhd",
                                 "recursive halving then doubling all-reduce (Rabenseifner), power-of-two groups");

} // namespace cs
