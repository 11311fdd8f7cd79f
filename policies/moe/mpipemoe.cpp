// `mpipemoe` (Zhang et al., IPDPS'23; MPMoE, TPDS'24): the layer's tokens are split into n partitions that pipeline
// dispatch(i+1), expert(i) and combine(i-1). n is chosen per step from {1, 2, 4, 8} by the latency model
// T(n) = sum_s t_s(n) + (n - 1) max_s t_s(n) + n x launch, t_s(n) the stage's time on 1/n of the tokens (policies.md
// section 5 writes it with t_s / n; pricing each partition keeps small GEMMs and per-collective latency) [recon].
// Buffers are reused across partitions, so the routed-token buffers held for backward are 1/n of the unpipelined
// layer's; `memory_reuse` trades more: `recommunicate` keeps no dispatch buffer and resends it in backward, `recompute`
// keeps no expert intermediate and reruns the expert forward, `adaptive` picks whichever costs less time on this
// hardware.
#include "models/moe/moe_policy.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace cs {
namespace {

class MPipeMoe : public MoePolicy {
public:
  void configure(ObjectReader& r) override
  {
    r.field("partitions", partitions_, "pipelined partitions (0 = chosen per step from 1, 2, 4, 8)")
        .field("launch_overhead", launch_, "fixed cost per partition and stage (kernel launch, a2a set-up)")
        .choice("memory_reuse", reuse_,
                {{"none", Reuse::NONE},
                 {"buffers", Reuse::BUFFERS},
                 {"recommunicate", Reuse::RECOMMUNICATE},
                 {"recompute", Reuse::RECOMPUTE},
                 {"adaptive", Reuse::ADAPTIVE}},
                "what is given up for memory: buffers (shared across partitions), plus resending the dispatch or "
                "recomputing the experts in backward, or adaptive");
    read_capacity_pad(r, pad_);
    r.require_non_negative("partitions", partitions_);
    r.require_at_most("partitions", partitions_, 64);
    r.require_non_negative("launch_overhead", launch_.value);
    r.require_at_most("launch_overhead", launch_.value, 1);
  }
  MoeStep plan(const MoeContext& c, const Routing& routing) override
  {
    MoeStep s = route_through(c, routing, contiguous_placement(c.experts, c.ranks), {}, pad_);
    // The stages of one partition of n: its dispatch, the slowest GPU's experts over 1/n of their tokens (small
    // GEMMs cost what they cost), its combine.
    auto stages = [&](int n) {
      std::vector<double> part(s.dispatch.size());
      for (std::size_t i = 0; i < part.size(); ++i)
        part[i] = s.dispatch[i] / n;
      double expert = 0;
      for (const auto& row : s.tokens)
        expert = std::max(expert, expert_seconds_of(c, row, 1.0 / n));
      const double a2a = c.alltoall_seconds(part);
      return std::array<double, 3>{a2a, expert, a2a};
    };
    auto latency = [&](int n) {
      const auto t = stages(n);
      return t[0] + t[1] + t[2] + (n - 1) * std::max({t[0], t[1], t[2]}) + n * launch_.value;
    };
    int best = partitions_ > 0 ? partitions_ : 1;
    if (partitions_ == 0)
      for (int n : {2, 4, 8})
        if (latency(n) < latency(best))
          best = n;
    const double a2a = stages(1)[0], expert = stages(1)[1];
    s.partitions = best;
    Reuse reuse = reuse_;
    if (reuse == Reuse::ADAPTIVE) // resending costs one more all-to-all; recomputing one more expert forward
      reuse = a2a <= expert ? Reuse::RECOMMUNICATE : Reuse::RECOMPUTE;
    s.activation_scale = reuse == Reuse::NONE ? 1.0 : 1.0 / best;
    if (reuse == Reuse::RECOMMUNICATE) {
      s.recommunicate_share = 1.0;
      s.activation_scale *= 0.5; // the dispatched copy is not kept, only the combined one
    } else if (reuse == Reuse::RECOMPUTE) {
      s.extra_backward_s.assign(c.ranks, 0.0);
      for (int r = 0; r < c.ranks; ++r)
        s.extra_backward_s[r] = expert_seconds_of(c, s.tokens[r]);
      s.activation_scale *= 0.5; // the experts' inner activations are not kept
    }
    return s;
  }

private:
  enum class Reuse { NONE, BUFFERS, RECOMMUNICATE, RECOMPUTE, ADAPTIVE };
  int partitions_ = 0;
  Seconds launch_{20e-6};
  Reuse reuse_ = Reuse::BUFFERS;
  bool pad_ = false;
};

} // namespace

CS_REGISTER_POLICY(MoePolicy, MPipeMoe, "moe", "mpipemoe",
                   "MPipeMoE: pipelined partitions of dispatch, experts and combine, adaptive n, memory reuse [recon]");

} // namespace cs
