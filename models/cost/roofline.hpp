// The plain roofline kernel cost: launch + max(flops / achievable FLOP/s, bytes / achievable bandwidth).
#pragma once

#include "models/cost/cost_breakdown.hpp"
#include "models/device_catalog.hpp"

#include <string>

namespace cs {

/** A kernel described by its work: FLOPs, bytes moved to/from device memory, and its dtype. */
struct KernelWork {
  std::string name; // for traces, e.g. "qkv_gemm"
  double flops = 0;
  double bytes = 0;
  std::string dtype = "bf16";
};

/** Roofline with the device's measured efficiencies. Throws std::invalid_argument if the device has no
 *  peak for the dtype (e.g. bf16 on a V100). */
CostBreakdown roofline_cost(const DeviceSpec& device, const KernelWork& work);

} // namespace cs
