// What the MoE layers of a training run did, step by step, summed for its metrics.
#pragma once

#include <map>
#include <utility>

namespace cs {

struct MoeStats {
  double routed = 0, dropped = 0;              // token-expert assignments, all steps
  double imbalance_sum = 0, imbalance_max = 0; // busiest rank's expert tokens / mean, per step
  long long steps = 0;
  std::map<int, std::pair<double, long long>> layer_imbalance; // per layer: sum of imbalances, steps
  int placement_changes = 0;
  double moved_bytes = 0;
  double partitions_sum = 0;
  double activation_scale_min = 1; // the policy's routed-token buffers held, relative to unpipelined
  int extra_expert_slots = 0;      // the policy's expert slots per GPU and layer beyond experts / ep
};

} // namespace cs
