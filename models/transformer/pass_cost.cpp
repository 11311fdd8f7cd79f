#include "models/transformer/pass_cost.hpp"

#include <algorithm>
#include <map>

namespace cs {

PassCost pass_cost(const KernelCostModel& cost, const std::vector<NamedKernel>& kernels, double kernel_gap)
{
  PassCost out;
  std::map<std::string, double> by_model;
  for (const auto& k : kernels) {
    const CostBreakdown b = cost.predict(k.kernel);
    const double t = std::max(b.total, kernel_gap);
    out.seconds += t;
    if (k.weight)
      out.weight_seconds += t;
    by_model[b.model] += t;
  }
  double most = -1;
  for (const auto& [model, seconds] : by_model)
    if (seconds > most) {
      most = seconds;
      out.model = model;
    }
  return out;
}

} // namespace cs
