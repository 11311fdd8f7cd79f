#include "models/cost/roofline.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs {

CostBreakdown roofline_cost(const DeviceSpec& device, const KernelWork& work)
{
  double peak = device.peak(work.dtype);
  if (peak <= 0 && work.flops > 0)
    throw std::invalid_argument(device.name + " has no " + work.dtype + " compute units");
  CostBreakdown b;
  b.model = "roofline";
  b.compute = work.flops > 0 ? work.flops / (peak * device.compute_efficiency) : 0.0;
  b.memory = work.bytes > 0 ? work.bytes / (device.memory_bandwidth * device.memory_efficiency) : 0.0;
  b.launch = device.launch_overhead;
  b.total = b.launch + std::max(b.compute, b.memory);
  return b;
}

} // namespace cs
