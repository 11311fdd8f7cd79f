// Builds the task graph of an nccl-tests-like sweep: one collective per message size, run back to back.
#pragma once

#include "models/collectives/collective_model.hpp"
#include "sim/scenario/scenario.hpp"

#include <vector>

namespace cs {

struct CollectiveSweep {
  TaskGraph graph;
  std::vector<int> hosts;           // ranks
  std::vector<double> sizes;        // bytes, nccl-tests' "size"
  std::vector<CollectiveChoice> choices;
  std::vector<int> start_marker;    // per size: the task after which it starts (-1 for the first)
  std::vector<int> end_marker;      // per size: a zero-length task that ends with the slowest rank
};

/** Sizes from min_bytes to max_bytes, multiplied by `factor` (min 0 becomes a zero-byte row then 1 KiB). */
std::vector<double> sweep_sizes(const CollectiveParams& p);

/** Each size waits for the previous one to finish on every rank (like nccl-tests' barriers between sizes). */
CollectiveSweep build_collective_sweep(const CollectiveParams& params, const PlatformSpec& platform, int ranks);

} // namespace cs
