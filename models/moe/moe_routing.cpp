#include "models/moe/moe_routing.hpp"

#include "models/moe/binomial_sampler.hpp"

#include <cmath>

namespace cs {

namespace {
std::uint64_t mix(std::uint64_t x) // splitmix64's finaliser
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
} // namespace

std::mt19937_64 routing_rng(const RoutingRequest& q, std::uint64_t stream)
{
  std::uint64_t h = mix(q.seed);
  for (std::uint64_t v : {std::uint64_t(q.iteration), std::uint64_t(q.layer), std::uint64_t(q.microbatch),
                          std::uint64_t(q.group), stream})
    h = mix(h ^ v);
  return std::mt19937_64(h);
}

void draw_multinomial(std::mt19937_64& rng, double n, const std::vector<double>& p, std::vector<double>& out)
{
  out.assign(p.size(), 0.0);
  long long left = std::llround(n);
  double mass = 1.0;
  for (std::size_t e = 0; e < p.size() && left > 0; ++e) {
    if (e + 1 == p.size() || mass <= 0) {
      out[e] = double(left);
      break;
    }
    const double q = std::min(1.0, std::max(0.0, p[e] / mass));
    const long long x = draw_binomial(rng, left, q);
    out[e] = double(x);
    left -= x;
    mass -= p[e];
  }
}

namespace {

// RoutingRequest::rank_blocks: each rank's tokens over the blocks (a multinomial over the blocks' summed shares), then
// each block's total over its experts (the multinomial of a block given its total, summed over ranks, is one
// multinomial of the block's total); a rank's row takes its block count split as the block's experts' totals are.
void draw_block_sums(std::mt19937_64& rng, const RoutingRequest& q, const std::vector<double>& p, Routing& out)
{
  const int width = q.rank_blocks, blocks = q.experts / width;
  const std::size_t per_rank = static_cast<std::size_t>(q.samples_per_rank);
  std::vector<double> block_p(blocks, 0.0), total(blocks, 0.0);
  for (int e = 0; e < q.experts; ++e)
    block_p[e / width] += p[e];
  std::vector<std::vector<double>> sent(q.ranks);
  for (int r = 0; r < q.ranks; ++r) {
    draw_multinomial(rng, q.tokens_per_sample * q.top_k * double(per_rank), block_p, sent[r]);
    for (int b = 0; b < blocks; ++b)
      total[b] += sent[r][b];
  }
  std::vector<double> within(width), got;
  for (int b = 0; b < blocks; ++b) {
    if (total[b] <= 0 || block_p[b] <= 0)
      continue;
    for (int k = 0; k < width; ++k)
      within[k] = p[b * width + k] / block_p[b];
    draw_multinomial(rng, total[b], within, got);
    for (int r = 0; r < q.ranks; ++r)
      for (int k = 0; k < width; ++k)
        out.tokens[r * per_rank][b * width + k] = sent[r][b] * got[k] / total[b];
  }
}

} // namespace

void draw_rows(std::mt19937_64& rng, const RoutingRequest& q, const std::vector<double>& p, Routing& out)
{
  const std::size_t per_rank = static_cast<std::size_t>(q.samples_per_rank);
  out.tokens.assign(static_cast<std::size_t>(q.ranks) * per_rank, std::vector<double>(p.size(), 0.0));
  const double per_sample = q.tokens_per_sample * q.top_k;
  if (!q.rank_totals) {
    for (auto& row : out.tokens)
      draw_multinomial(rng, per_sample, p, row);
    return;
  }
  if (q.rank_blocks > 0 && q.experts % q.rank_blocks == 0) {
    draw_block_sums(rng, q, p, out);
    return;
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(q.ranks); ++r)
    draw_multinomial(rng, per_sample * double(per_rank), p, out.tokens[r * per_rank]);
}

std::vector<double> zipf_shares(const std::vector<int>& rank_of, double s)
{
  std::vector<double> p(rank_of.size());
  double sum = 0;
  for (std::size_t e = 0; e < p.size(); ++e)
    sum += p[e] = 1.0 / std::pow(rank_of[e] + 1.0, s);
  for (double& x : p)
    x /= sum;
  return p;
}

} // namespace cs
