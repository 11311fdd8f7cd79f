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

PieceTimes piece_times(const PassKernels& k, const KernelCostModel& cost, const FrameworkProfile& fw, double tp_s,
                       const std::string& recompute)
{
  const PassCost f = pass_cost(cost, k.forward, fw.kernel_gap_s), b = pass_cost(cost, k.backward, fw.kernel_gap_s);
  PieceTimes t;
  t.model = f.model;
  t.forward = f.seconds + 2 * tp_s;
  t.backward = b.seconds + 2 * tp_s;
  t.weight = b.weight_seconds;
  if (recompute == "full") // the forward pass runs again inside backward
    t.backward += t.forward;
  if (recompute == "selective") { // materialised attention's scores, softmax, dropout and values run again
    std::vector<NamedKernel> core;
    for (const auto& n : k.forward)
      if (n.name.rfind("attn_", 0) == 0)
        core.push_back(n);
    t.backward += pass_cost(cost, core, fw.kernel_gap_s).seconds;
  }
  return t;
}

} // namespace cs
