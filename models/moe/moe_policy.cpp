#include "models/moe/moe_policy.hpp"

#include <algorithm>

namespace cs {

ExpertPlacement contiguous_placement(int experts, int ranks)
{
  ExpertPlacement p(experts);
  const int per = std::max(1, experts / ranks);
  for (int e = 0; e < experts; ++e)
    p[e] = {std::min(ranks - 1, e / per)};
  return p;
}

MoeStep route_through(const MoeContext& c, const Routing& routing, const ExpertPlacement& placement,
                      const std::vector<int>& sample_rank, bool pad)
{
  const int n = c.ranks, E = c.experts;
  MoeStep s;
  s.tokens.assign(n, std::vector<double>(E, 0.0));
  s.dispatch.assign(static_cast<std::size_t>(n) * n, 0.0);
  s.extra_forward_s.assign(n, 0.0);
  s.extra_backward_s.assign(n, 0.0);
  // What each rank sends each expert, before capacity: a row per rank. Where the routing has one row per rank
  // (per-rank draws or one sample a rank) the rows are read where they are; otherwise summed into one block, not a
  // vector each (this runs for every MoE layer, microbatch and group of a step).
  std::vector<const double*> sent(n, nullptr);
  std::vector<double> summed;
  if (sample_rank.empty() && c.samples_per_rank == 1 && routing.tokens.size() == static_cast<std::size_t>(n)) {
    for (int src = 0; src < n; ++src)
      sent[src] = routing.tokens[src].data();
  } else {
    summed.assign(static_cast<std::size_t>(n) * E, 0.0);
    for (std::size_t i = 0; i < routing.tokens.size(); ++i) {
      const int src = sample_rank.empty() ? static_cast<int>(i) / c.samples_per_rank : sample_rank[i];
      double* row = &summed[static_cast<std::size_t>(src) * E];
      for (int e = 0; e < E; ++e)
        row[e] += routing.tokens[i][e];
    }
    for (int src = 0; src < n; ++src)
      sent[src] = &summed[static_cast<std::size_t>(src) * E];
  }
  const double even = c.samples_per_rank * c.tokens_per_sample * c.top_k / E; // one rank's even share per expert
  const double capacity = c.capacity_factor > 0 ? c.capacity_factor * even : -1;
  for (int src = 0; src < n; ++src)
    for (int e = 0; e < E; ++e) {
      double t = sent[src][e];
      s.routed += t;
      if (capacity >= 0) {
        s.dropped += std::max(0.0, t - capacity);
        t = pad ? capacity : std::min(t, capacity);
      }
      const auto& holders = placement[e];
      if (std::find(holders.begin(), holders.end(), src) != holders.end()) {
        s.tokens[src][e] += t;
        continue;
      }
      const double share = t / holders.size();
      for (int dst : holders) {
        s.tokens[dst][e] += share;
        s.dispatch[static_cast<std::size_t>(src) * n + dst] += share * c.token_bytes;
      }
    }
  return s;
}

double expert_seconds_of(const MoeContext& c, const std::vector<double>& tokens, double scale)
{
  double t = 0;
  for (double x : tokens)
    t += x > 0 ? c.expert_seconds(x * scale) : 0.0;
  return t;
}

std::vector<double> rank_loads(const MoeStep& step)
{
  std::vector<double> out;
  for (const auto& row : step.tokens) {
    double sum = 0;
    for (double t : row)
      sum += t;
    out.push_back(sum);
  }
  return out;
}

void read_capacity_pad(ObjectReader& r, bool& pad)
{
  r.field("capacity_pad", pad,
          "with model.moe.capacity_factor: send and compute full capacity buffers (GShard, DeepSpeed) instead of "
          "the tokens kept (Megatron-Core)");
}

} // namespace cs
