// The cost of one pass over a list of kernels: summed durations and the cost model that answered most of it.
#pragma once

#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/transformer.hpp"

#include <string>
#include <vector>

namespace cs {

struct PassCost {
  double seconds = 0;
  double weight_seconds = 0; // the kernels flagged as weight gradients
  std::string model;         // the model that answered the largest share of the time (for traces)
};

/** Each kernel lasts at least `kernel_gap` seconds: the host launches kernels one at a time, so a GPU that finishes a
 *  kernel sooner waits for the next launch. */
PassCost pass_cost(const KernelCostModel& cost, const std::vector<NamedKernel>& kernels, double kernel_gap = 0);

} // namespace cs
