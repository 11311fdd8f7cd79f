// `zipf`: skewed expert popularity that drifts over iterations, the imbalance and fluctuation FlexMoE (Nie et al.,
// SIGMOD'23) reports for real gates. Expert popularity follows a Zipf law over ranks; each layer starts from its own
// seeded order and every iteration a share of the experts trade ranks with their neighbour [recon: the drift process is
// ours; the paper shows the effect, not a generator]. Swaps are between neighbouring ranks, so popularity changes
// gradually, as it does in training, rather than a cold expert becoming the hottest at once.
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
        .field("drift", drift_, "share of experts that trade popularity ranks with a neighbour each iteration");
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
    std::vector<int> expert_at(q.experts); // popularity rank -> expert
    for (int e = 0; e < q.experts; ++e)
      expert_at[e] = e;
    std::shuffle(expert_at.begin(), expert_at.end(), order_rng);
    const int swaps = static_cast<int>(std::lround(drift_ * q.experts / 2.0));
    std::uniform_int_distribution<int> pick(0, std::max(0, q.experts - 2));
    for (int it = 0; it < q.iteration && q.experts > 1; ++it)
      for (int k = 0; k < swaps; ++k) {
        const int at = pick(order_rng);
        std::swap(expert_at[at], expert_at[at + 1]);
      }
    std::vector<int> rank_of(q.experts);
    for (int r = 0; r < q.experts; ++r)
      rank_of[expert_at[r]] = r;
    const std::vector<double> p = zipf_shares(rank_of, skew_);
    auto rng = routing_rng(q);
    Routing out;
    draw_rows(rng, q, p, out);
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
