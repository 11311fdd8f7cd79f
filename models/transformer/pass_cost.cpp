#include "models/transformer/pass_cost.hpp"

#include <map>

namespace cs {

PassCost pass_cost(const KernelCostModel& cost, const std::vector<NamedKernel>& kernels)
{
  PassCost out;
  std::map<std::string, double> by_model;
  for (const auto& k : kernels) {
    CostBreakdown b = cost.predict(k.kernel);
    out.seconds += b.total;
    by_model[b.model] += b.total;
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
