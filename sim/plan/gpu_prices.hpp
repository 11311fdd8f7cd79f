// Per-GPU-hour prices for capacity planning, each with its source and date (overridable with --price).
#pragma once

#include <string>
#include <vector>

namespace cs {

struct GpuPrice {
  std::string device; // catalog name
  double usd_per_gpu_hour = 0;
  std::string source; // where and when the number was read
};

/** The documented table (docs/capacity.md). */
const std::vector<GpuPrice>& gpu_prices();

} // namespace cs
