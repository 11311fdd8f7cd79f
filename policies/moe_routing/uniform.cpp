// `uniform`: every token picks its experts uniformly at random (the even split that ASTRA-sim and SimAI assume, with
// the sampling noise of a real batch).
#include "models/moe/moe_routing.hpp"

namespace cs {
namespace {

class UniformRouting : public RoutingModel {
public:
  Routing route(const RoutingRequest& q) const override
  {
    auto rng = routing_rng(q);
    const std::vector<double> p(q.experts, 1.0 / q.experts);
    Routing out;
    draw_rows(rng, q, p, out);
    return out;
  }
};

} // namespace

CS_REGISTER_POLICY(RoutingModel, UniformRouting, "moe_routing", "uniform",
                   "each token picks its experts uniformly at random (seeded sampling noise)");

} // namespace cs
