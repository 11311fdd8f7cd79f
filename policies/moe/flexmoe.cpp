// `flexmoe` (Nie et al., SIGMOD'23) [recon, policies.md section 5: the mechanism is partly recollection]: experts get
// a variable number of replicas within a fixed number of expert slots per GPU, and an expert's tokens split evenly
// over its replicas. Once per iteration (per layer and group) a monitor compares the balance ratio (busiest GPU's
// tokens / mean) with a threshold; above it, a greedy planner tries expand (a replica of the busiest GPU's hottest
// expert on the least loaded GPU, in a free slot or in one freed by shrinking an expert with spare replicas) and
// migrate (move that expert there when no slot frees), and commits a step only when the predicted saving over the
// next `horizon` iterations exceeds moving the expert's weights, gradients and optimizer state over the network. The
// moves run beside training on their own streams (they take link bandwidth, not compute) and the new placement is
// used at once [recon].
#include "models/moe/moe_policy.hpp"

#include <algorithm>
#include <map>

namespace cs {
namespace {

class FlexMoe : public MoePolicy {
public:
  int extra_expert_slots() const override { return spare_; }

  void configure(ObjectReader& r) override
  {
    r.field("threshold", threshold_, "balance ratio (max / mean GPU tokens) above which the planner runs")
        .field("horizon", horizon_, "iterations over which a step's saving must repay its transfer")
        .field("spare_slots", spare_, "expert slots per GPU beyond experts / ep (room for replicas)")
        .field("max_steps", max_steps_, "placement steps the planner may commit per layer and iteration");
    read_capacity_pad(r, pad_);
    r.require(threshold_ >= 1, "threshold", "threshold must be at least 1");
    r.require_at_most("threshold", threshold_, 1e6);
    r.require_positive("horizon", horizon_);
    r.require_at_most("horizon", horizon_, 1e6);
    r.require_non_negative("spare_slots", spare_);
    r.require_at_most("spare_slots", spare_, 1024);
    r.require_non_negative("max_steps", max_steps_);
    r.require_at_most("max_steps", max_steps_, 1024);
  }
  MoeStep plan(const MoeContext& c, const Routing& routing) override
  {
    auto& state = states_[{c.layer, c.group}];
    if (state.placement.empty())
      state.placement = contiguous_placement(c.experts, c.ranks);
    std::vector<MoeStep::Move> moves;
    if (c.microbatch == 0 && state.iteration != c.iteration) {
      state.iteration = c.iteration;
      improve(c, routing, state.placement, moves);
    }
    MoeStep s = route_through(c, routing, state.placement, {}, pad_);
    s.placement_changes = static_cast<int>(moves.size());
    for (const auto& m : moves)
      s.moved_bytes += m.bytes;
    s.moves = std::move(moves);
    return s;
  }

private:
  struct State {
    ExpertPlacement placement;
    int iteration = -1;
  };

  // One microbatch's expert time (forward and backward, about 3x forward) of the slower of two GPUs: a step's benefit
  // is measured on the pair it touches, so that a second hot GPU does not hide the gain of relieving the first.
  double pair_seconds(const MoeContext& c, const MoeStep& s, int a, int b) const
  {
    double worst = 0;
    for (int r : {a, b})
      worst = std::max(worst, expert_seconds_of(c, s.tokens[r]));
    return 3.0 * worst;
  }

  void improve(const MoeContext& c, const Routing& routing, ExpertPlacement& placement,
               std::vector<MoeStep::Move>& moves)
  {
    const int slots = c.experts / c.ranks + spare_;
    for (int step = 0; step < max_steps_; ++step) {
      const MoeStep now = route_through(c, routing, placement, {}, pad_);
      const auto loads = rank_loads(now);
      const double mean = std::max(1e-9, [&] {
        double s = 0;
        for (double x : loads)
          s += x;
        return s / loads.size();
      }());
      const int hot = static_cast<int>(std::max_element(loads.begin(), loads.end()) - loads.begin());
      if (loads[hot] / mean <= threshold_)
        return;
      const int expert =
          static_cast<int>(std::max_element(now.tokens[hot].begin(), now.tokens[hot].end()) - now.tokens[hot].begin());
      // The least loaded GPU without a replica of it.
      int cold = -1;
      for (int r = 0; r < c.ranks; ++r) {
        const auto& h = placement[expert];
        if (std::find(h.begin(), h.end(), r) == h.end() && (cold < 0 || loads[r] < loads[cold]))
          cold = r;
      }
      if (cold < 0)
        return;
      ExpertPlacement trial = placement;
      int held = 0, spare_expert = -1;
      for (int e = 0; e < c.experts; ++e)
        for (int r : trial[e])
          if (r == cold) {
            ++held;
            if (trial[e].size() > 1 && (spare_expert < 0 || now.tokens[cold][e] < now.tokens[cold][spare_expert]))
              spare_expert = e;
          }
      if (held >= slots && spare_expert >= 0) { // shrink: free a slot on the cold GPU
        auto& h = trial[spare_expert];
        h.erase(std::find(h.begin(), h.end(), cold));
      }
      if (held < slots || spare_expert >= 0) { // expand
        trial[expert].push_back(cold);
      } else if (placement[expert].size() > 1) {
        return; // no slot and nothing to shrink: the expert is already spread
      } else {  // migrate: swap the hot expert with the cold GPU's coldest
        int swap = -1;
        for (int e = 0; e < c.experts; ++e)
          if (trial[e].size() == 1 && trial[e][0] == cold && (swap < 0 || now.tokens[cold][e] < now.tokens[cold][swap]))
            swap = e;
        if (swap < 0)
          return;
        trial[swap] = {hot};
        trial[expert] = {cold};
      }
      const MoeStep next = route_through(c, routing, trial, {}, pad_);
      const double gain = (pair_seconds(c, now, hot, cold) - pair_seconds(c, next, hot, cold)) * horizon_;
      const double cost = c.move_seconds(c.expert_state_bytes);
      if (gain <= cost)
        return;
      // The state comes from a GPU that holds the expert (its first replica).
      moves.push_back({placement[expert][0], cold, c.expert_state_bytes});
      placement = std::move(trial);
    }
  }

  double threshold_ = 1.2;
  double horizon_ = 50;
  int spare_ = 1;
  int max_steps_ = 8;
  bool pad_ = false;
  std::map<std::pair<int, int>, State> states_;
};

} // namespace

CS_REGISTER_POLICY(MoePolicy, FlexMoe, "moe", "flexmoe",
                   "FlexMoE: replicate, shrink and migrate experts when a cost-benefit check pays [recon]");

} // namespace cs
