// The cost of one pass over a list of kernels: summed durations and the cost model that answered most of it.
#pragma once

#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/transformer.hpp"

#include <string>
#include <vector>

namespace cs {

struct PassCost {
  double seconds = 0;
  std::string model; // the model that answered the largest share of the time (for traces)
};

PassCost pass_cost(const KernelCostModel& cost, const std::vector<NamedKernel>& kernels);

} // namespace cs
