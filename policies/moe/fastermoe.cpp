// `fastermoe` (He et al., PPoPP'22; laekov/fastmoe fmoe/fastermoe/shadow_policy.py): shadow experts and the smart
// schedule. Shadowing, greedy as in the code: experts sorted by load, the next hottest is replicated to every worker
// while 3 c B + 4 f B + k s (the layer's latency with k shadows: B the busiest worker's tokens, c one token's expert
// compute, f one token's transfer, s one expert's weights' transfer) keeps falling. Shadowed experts run on each
// worker's own tokens; their weights are broadcast before the layer and their gradients reduced after it. The smart
// schedule pipelines the all-to-alls with expert compute in `groups` chunks (FMOE_FASTER_GROUP_SIZE) [recon: chunks
// by token share rather than by worker group]. The topology-aware gate caps the share of a sample's tokens that leave
// its machine (`topology_gate`).
#include "models/moe/moe_policy.hpp"

#include <algorithm>
#include <numeric>

namespace cs {
namespace {

class FasterMoe : public MoePolicy {
public:
  void configure(ObjectReader& r) override
  {
    r.field("shadowing", shadowing_, "replicate hot experts to every worker when the latency model says it pays")
        .field("groups", groups_, "smart schedule: chunks the all-to-alls and experts are pipelined in (1 = off)")
        .field("topology_gate", gate_,
               "topology-aware gate: the most of a sample's tokens that may go to experts on other machines (1 = off)");
    read_capacity_pad(r, pad_);
    r.require(gate_ >= 0 && gate_ <= 1, "topology_gate", "topology_gate must be in [0, 1]");
    r.require_positive("groups", groups_);
    r.require_at_most("groups", groups_, 64);
  }
  bool reads_samples() const override { return gate_ < 1; } // the gate limits each sample's tokens
  MoeStep plan(const MoeContext& c, const Routing& given) override
  {
    ExpertPlacement placement = contiguous_placement(c.experts, c.ranks);
    const Routing routing = gate_ < 1 ? topology_gated(c, given, placement) : given;
    MoeStep s = route_through(c, routing, placement, {}, pad_);
    if (shadowing_ && c.ranks > 1) {
      std::vector<double> load(c.experts, 0.0);
      for (const auto& row : routing.tokens)
        for (int e = 0; e < c.experts; ++e)
          load[e] += row[e];
      std::vector<int> order(c.experts);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return load[a] > load[b]; });
      auto latency = [&](const MoeStep& step, int shadows) {
        const auto loads = rank_loads(step);
        const double busiest = *std::max_element(loads.begin(), loads.end());
        return 3.0 * c.expert_seconds(std::max(1.0, busiest)) + 4.0 * c.alltoall_seconds(step.dispatch) +
               shadows * c.broadcast_seconds(c.expert_weight_bytes);
      };
      double best = latency(s, 0);
      int shadows = 0;
      for (int e : order) {
        ExpertPlacement trial = placement;
        trial[e].resize(c.ranks);
        std::iota(trial[e].begin(), trial[e].end(), 0);
        MoeStep next = route_through(c, routing, trial, {}, pad_);
        const double t = latency(next, shadows + 1);
        if (t >= best)
          break;
        best = t;
        placement = std::move(trial);
        s = std::move(next);
        ++shadows;
      }
      s.shadow_bytes = shadows * c.expert_weight_bytes;
    }
    s.partitions = groups_;
    return s;
  }

private:
  // The topology-aware gate: a sample's tokens bound for other machines' experts beyond the cap go to its own
  // machine's experts instead, evenly [recon: the gate re-scores; here the excess is spread over the local experts].
  Routing topology_gated(const MoeContext& c, const Routing& in, const ExpertPlacement& placement) const
  {
    Routing out = in;
    for (std::size_t i = 0; i < out.tokens.size(); ++i) {
      auto& row = out.tokens[i];
      const int home = c.machine[static_cast<int>(i) / c.samples_per_rank];
      double away = 0, total = 0;
      std::vector<int> local;
      for (int e = 0; e < c.experts; ++e) {
        total += row[e];
        if (c.machine[placement[e][0]] == home)
          local.push_back(e);
        else
          away += row[e];
      }
      const double cap = gate_ * total;
      if (away <= cap || local.empty())
        continue;
      for (int e = 0; e < c.experts; ++e)
        if (c.machine[placement[e][0]] != home)
          row[e] *= cap / away;
      for (int e : local)
        row[e] += (away - cap) / local.size();
    }
    return out;
  }

  double gate_ = 1.0;
  bool shadowing_ = true;
  int groups_ = 2;
  bool pad_ = false;
};

} // namespace

CS_REGISTER_POLICY(MoePolicy, FasterMoe, "moe", "fastermoe",
                   "FasterMoE: shadow hot experts on every worker by its latency model, smart pipelined schedule");

} // namespace cs
