// `balanced`: forced balance, every expert gets exactly its even share of every sample's tokens (what benchmarks
// force, e.g. Megatron-Core's moe_router_force_load_balancing).
#include "models/moe/moe_routing.hpp"

namespace cs {
namespace {

class BalancedRouting : public RoutingModel {
public:
  Routing route(const RoutingRequest& q) const override
  {
    Routing out;
    const std::vector<double> row(q.experts, q.tokens_per_sample * q.top_k / q.experts);
    out.tokens.assign(static_cast<std::size_t>(q.ranks) * q.samples_per_rank, row);
    return out;
  }
  bool same_for_every_group() const override { return true; }
  bool same_for_every_step() const override { return true; }
};

} // namespace

CS_REGISTER_POLICY(RoutingModel, BalancedRouting, "moe_routing", "balanced",
                   "forced balance: every expert gets exactly its even share of each sample's tokens");

} // namespace cs
