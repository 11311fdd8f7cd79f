// The all-to-alls of one group, one after another, each rank starting as it finished the one before: their closed
// form where the fluid replay prices them (oversubscribed fabrics, folded copies).
#pragma once

#include "models/collectives/all_to_all_v.hpp"

#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace cs {

/** A group's all-to-alls in the order they are lowered, as a chain [recon]. On SimGrid a rank starts the next
 *  all-to-all when it is done with the one before plus its own work, which is the same on every rank of a balanced
 *  group, so the ranks start it as far apart as they finished the last. The spread carries on and changes from one to
 *  the next: on 64 ranks over two leaves, at 2:1 the fifth of a chain takes 1.97x the first and the chain settles into
 *  a cycle of two near 1.7x by the ninth, at 4:1 about 0.99x (docs/scale.md). Each step is the fluid replay with each
 *  rank ready as the step before left it. A chain replays its first kSteps steps; from then on each matrix takes its
 *  mean time over the second half of them. Chains need not settle on one state (at 2:1 a cycle of two; in a pipeline
 *  longer ones), so their mean is what a long run sees: holding the eighth step's spread instead moved pipelined steps
 *  by up to 5.6%, and holding the 64th's (a mean miss of 4.3% against 4.7% over docs/scale.md's pipelined rows) took
 *  a planner search behind 4:1 leaves 81 s against 37. Replays are shared by groups whose flows share links alike
 *  (fluid_all_to_all_v_signature) and start alike, so a fabric's symmetric groups cost one chain. */
class AllToAllChains {
public:
  static constexpr int kSteps = 16;

  AllToAllChains(const PlatformSpec& platform, std::vector<int> copy_offsets);

  /** The next all-to-all of `hosts`, moving what `sent` gives (`matrix` names those sizes: equal names, equal
   *  sizes; `sent` is asked once per name and group, and again for each replay): seconds from its last rank ready
   *  to its last rank done; 0 where no pair leaves its machine. */
  double next(const std::vector<int>& hosts, const void* matrix, const std::function<std::vector<double>()>& sent,
              const ProtocolParams& protocol);

private:
  struct Window { // a matrix's steps in the second half of the chain's horizon, [kSteps/2, kSteps)
    double seconds = 0;
    int steps = 0;
  };
  struct Chain {
    int state = 0; // spreads_ index: how far apart the ranks start (0: together)
    int steps = 0;
    std::map<std::size_t, Window> window; // by signature
  };
  struct Step {
    double seconds = 0;
    int next_state = 0;
  };
  int state_of(std::vector<double> spread);

  const PlatformSpec& platform_;
  std::vector<int> offsets_;
  std::vector<const std::vector<double>*> spreads_; // per state, each rank's start (state 0: all at 0)
  std::map<std::vector<double>, int> state_ids_;    // spreads by value: alike groups reach the same states
  std::map<std::vector<int>, Chain> chains_;        // by group
  // Per (matrix, group): its replay's signature; none where no pair leaves its machine.
  std::map<std::pair<const void*, const std::vector<int>*>, std::optional<std::size_t>> signatures_;
  std::map<std::tuple<std::size_t, int, bool>, Step> steps_; // (signature, state, capped)
};

} // namespace cs
