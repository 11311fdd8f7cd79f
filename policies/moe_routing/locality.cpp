// `locality`: the tokens of one sample prefer a few experts (the routing locality NetMoE, Liu et al., ICLR'25,
// exploits). Each sample draws its preferred experts by the layer's popularity; a share of its tokens goes to them,
// the rest by popularity [recon: a generator with the property the paper measures, not the paper's data].
#include "models/moe/moe_routing.hpp"

#include <algorithm>

namespace cs {
namespace {

class LocalityRouting : public RoutingModel {
public:
  void configure(ObjectReader& r) override
  {
    r.field("preferred", preferred_, "experts each sample prefers (0 = 2 x top_k)")
        .field("strength", strength_, "share of a sample's tokens that go to its preferred experts")
        .field("skew", skew_, "Zipf exponent of expert popularity across samples (0 = uniform)");
    r.require_non_negative("preferred", preferred_);
    r.require_at_most("preferred", preferred_, 1 << 16);
    r.require(strength_ >= 0 && strength_ <= 1, "strength", "strength must be in [0, 1]");
    r.require_non_negative("skew", skew_);
    r.require_at_most("skew", skew_, 10);
  }
  Routing route(const RoutingRequest& q) const override
  {
    std::vector<int> rank_of(q.experts);
    for (int e = 0; e < q.experts; ++e)
      rank_of[e] = e;
    const std::vector<double> popular = zipf_shares(rank_of, skew_);
    const int keep = std::min(q.experts, preferred_ > 0 ? preferred_ : 2 * q.top_k);
    auto rng = routing_rng(q);
    Routing out;
    out.tokens.resize(static_cast<std::size_t>(q.ranks) * q.samples_per_rank);
    std::vector<double> row, extra;
    for (auto& tokens : out.tokens) {
      // Preferred experts: `keep` distinct draws by popularity (weighted sampling without replacement).
      std::vector<double> w = popular;
      std::vector<double> p(q.experts, 0.0);
      for (int k = 0; k < keep; ++k) {
        std::discrete_distribution<int> pick(w.begin(), w.end());
        const int e = pick(rng);
        p[e] += strength_ / keep;
        w[e] = 0;
      }
      for (int e = 0; e < q.experts; ++e)
        p[e] += (1 - strength_) * popular[e];
      draw_multinomial(rng, q.tokens_per_sample * q.top_k, p, tokens);
    }
    return out;
  }

private:
  int preferred_ = 0;
  double strength_ = 0.8;
  double skew_ = 0.0;
};

} // namespace

CS_REGISTER_POLICY(RoutingModel, LocalityRouting, "moe_routing", "locality",
                   "each sample's tokens prefer a few experts (the locality NetMoE exploits) [recon]");

} // namespace cs
