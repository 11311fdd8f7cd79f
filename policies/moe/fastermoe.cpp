// `fastermoe` (He et al., PPoPP'22; laekov/fastmoe fmoe/fastermoe/shadow_policy.py): shadow experts and the smart
// schedule. Shadowing, greedy as in the code: experts sorted by load, the next hottest is replicated to every worker
// while 3 c B + 4 f B + k s (the layer's latency with k shadows: B the busiest worker's tokens, c one token's expert
// compute, f one token's transfer, s one expert's weights' transfer) keeps falling. Shadowed experts run on each
// worker's own tokens; their weights are broadcast before the layer and their gradients reduced after it. The smart
// schedule pipelines the all-to-alls with expert compute in `groups` chunks (FMOE_FASTER_GROUP_SIZE) [recon: chunks
// by token share rather than by worker group].
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
        .field("groups", groups_, "smart schedule: chunks the all-to-alls and experts are pipelined in (1 = off)");
    read_capacity_pad(r, pad_);
    r.require_positive("groups", groups_);
    r.require_at_most("groups", groups_, 64);
  }
  MoeStep plan(const MoeContext& c, const Routing& routing) override
  {
    ExpertPlacement placement = contiguous_placement(c.experts, c.ranks);
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
  bool shadowing_ = true;
  int groups_ = 2;
  bool pad_ = false;
};

} // namespace

CS_REGISTER_POLICY(MoePolicy, FasterMoe, "moe", "fastermoe",
                   "FasterMoE: shadow hot experts on every worker by its latency model, smart pipelined schedule");

} // namespace cs
