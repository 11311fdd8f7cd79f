// `zipf`: skewed expert popularity that drifts over iterations, the imbalance and fluctuation FlexMoE (Nie et al.,
// SIGMOD'23) reports for real gates. Expert popularity follows a Zipf law over ranks; each layer starts from its own
// seeded order and every iteration swaps the ranks of a share of random expert pairs [recon: the drift process is
// ours; the paper shows the effect, not a generator].
#include "models/moe/moe_routing.hpp"

#include <algorithm>
#include <cmath>

namespace cs {
namespace {

class ZipfRouting : public RoutingModel {
public:
  void configure(ObjectReader& r) override
  {
    r.field("skew", skew_, "Zipf exponent over expert popularity ranks (0 = uniform; 1.0 ~ FlexMoE's hot experts)")
        .field("drift", drift_, "share of experts whose popularity rank is swapped with another's each iteration");
    r.require_non_negative("skew", skew_);
    r.require_at_most("skew", skew_, 10);
    r.require(drift_ >= 0 && drift_ <= 1, "drift", "drift must be in [0, 1]");
  }
  Routing route(const RoutingRequest& q) const override
  {
    // The popularity order of this layer at this iteration: its seeded start, then the swaps of each iteration.
    RoutingRequest start = q;
    start.iteration = start.microbatch = start.group = 0;
    auto order_rng = routing_rng(start, 1);
    std::vector<int> rank_of(q.experts);
    for (int e = 0; e < q.experts; ++e)
      rank_of[e] = e;
    std::shuffle(rank_of.begin(), rank_of.end(), order_rng);
    const int swaps = static_cast<int>(std::lround(drift_ * q.experts / 2.0));
    std::uniform_int_distribution<int> pick(0, q.experts - 1);
    for (int it = 0; it < q.iteration; ++it)
      for (int k = 0; k < swaps; ++k)
        std::swap(rank_of[pick(order_rng)], rank_of[pick(order_rng)]);
    const std::vector<double> p = zipf_shares(rank_of, skew_);
    auto rng = routing_rng(q);
    Routing out;
    out.tokens.resize(static_cast<std::size_t>(q.ranks) * q.samples_per_rank);
    for (auto& row : out.tokens)
      draw_multinomial(rng, q.tokens_per_sample * q.top_k, p, row);
    return out;
  }

private:
  double skew_ = 1.0;
  double drift_ = 0.1;
};

} // namespace

CS_REGISTER_POLICY(RoutingModel, ZipfRouting, "moe_routing", "zipf",
                   "Zipf-skewed expert popularity that drifts over iterations (FlexMoE's imbalance) [recon]");

} // namespace cs
