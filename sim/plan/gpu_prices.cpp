#include "sim/plan/gpu_prices.hpp"

namespace cs {

const std::vector<GpuPrice>& gpu_prices()
{
  // AWS EC2 Capacity Blocks for ML, the pricing page's "effective accelerator hourly rate" (instance rate / GPUs),
  // as it listed them for late 2024 (rates it said would next change on 2025-01-01). Reserved blocks: on-demand
  // list prices are higher and move often; give your own with --price DEVICE=USD.
  static const std::vector<GpuPrice> table{
      {"a100-sxm4-40gb", 1.844,
       "AWS EC2 Capacity Blocks, p4d.24xlarge (8 x A100 40 GB), US East (Ohio): $14.75/h = $1.844 per GPU-hour; "
       "rates listed until 2025-01-01"},
      {"h100-sxm5", 4.916,
       "AWS EC2 Capacity Blocks, p5.48xlarge (8 x H100), US East (N. Virginia): $39.33/h = $4.916 per GPU-hour; "
       "rates listed until 2025-01-01"},
      {"h200-sxm", 5.408,
       "AWS EC2 Capacity Blocks, 8 x H200 instance, US East (Ohio): $43.26/h = $5.408 per GPU-hour; rates listed "
       "until 2025-01-01"},
  };
  return table;
}

} // namespace cs
