#include "models/moe/token_dispatcher.hpp"

#include <algorithm>
#include <map>

namespace cs {
namespace {

// The share of a token's copies to a holder of `held` of the `experts` experts that survive deduplication: the
// probability it picks any of them over the copies it sends them, under uniform top-k choice.
double dedup(double held, double experts, int top_k, double hit_cap)
{
  if (held <= 0)
    return 1.0;
  double miss = 1.0;
  for (int t = 0; t < top_k; ++t)
    miss *= std::max(0.0, experts - held - t) / (experts - t);
  const double hit = std::min(1.0 - miss, hit_cap), copies = top_k * held / experts;
  return copies > 0 ? std::min(1.0, hit / copies) : 1.0;
}

} // namespace

const TokenDispatcher& token_dispatcher(const std::string& name) { return registered_instance<TokenDispatcher>(name); }

std::vector<double> node_forwarded_traffic(const std::vector<double>& routed, const DispatchGroup& g)
{
  const int n = g.ranks;
  std::map<int, std::vector<int>> on_node; // node -> its EP ranks, in rank order
  for (int r = 0; r < n; ++r)
    on_node[g.machine[r]].push_back(r);
  const double E = g.experts, per_rank = E / n;
  const int nodes = static_cast<int>(on_node.size());
  const double node_cap =
      g.max_nodes_per_token > 0 && g.max_nodes_per_token < nodes ? double(g.max_nodes_per_token) / nodes : 1.0;
  const double per_gpu = dedup(per_rank, E, g.top_k, 1.0);
  std::vector<double> out(routed.size(), 0.0);
  auto at = [n](std::vector<double>& m, int i, int j) -> double& { return m[std::size_t(i) * n + j]; };
  for (int i = 0; i < n; ++i) {
    const auto& mine = on_node[g.machine[i]];
    const int lane = static_cast<int>(std::find(mine.begin(), mine.end(), i) - mine.begin());
    for (const auto& [node, ranks] : on_node) {
      if (node == g.machine[i]) { // NVLink, once per GPU
        for (int j : ranks)
          at(out, i, j) += routed[std::size_t(i) * n + j] * per_gpu;
        continue;
      }
      const double per_node = dedup(per_rank * ranks.size(), E, g.top_k, node_cap);
      const int peer = ranks[std::min<std::size_t>(lane, ranks.size() - 1)]; // the sender's rail on that node
      for (int j : ranks) {
        const double bytes = routed[std::size_t(i) * n + j];
        at(out, i, peer) += bytes * per_node; // RDMA, once per node
        if (j != peer)
          at(out, peer, j) += bytes * per_gpu; // forwarded over NVLink
      }
    }
  }
  return out;
}

} // namespace cs
