#include "models/cost/fused_kernel_models.hpp"
#include "models/cost/kernel_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace cs {

double gemm_k_steps(double k, double k_overhead, const std::string& dtype)
{
  // fp16 and bf16 first, without a lookup: this sits on the cost stack's hot path.
  if (k_overhead == 0 || dtype == "bf16" || dtype == "fp16")
    return k + k_overhead;
  return k + k_overhead * 2 / dtype_bytes(dtype);
}

WaveCount gemm_waves(double m, double n, double batch, const GemmTile& tile, int sms, int ctas_per_sm)
{
  WaveCount w;
  w.tiles = std::ceil(m / tile.m) * std::ceil(n / tile.n) * batch;
  w.slots = double(sms) * ctas_per_sm;
  w.waves = std::ceil(w.tiles / w.slots);
  return w;
}

CostBreakdown GemmWaveModel::predict(const Kernel& kernel) const
{
  if (const auto* chain = std::get_if<GemmChainKernel>(&kernel))
    return predict_gemm_chain(*chain, device_, profile_);
  if (const auto* mx = std::get_if<MxGemmKernel>(&kernel))
    return predict_mx_gemm(*mx, device_, profile_, *this);
  const auto* g = std::get_if<GemmKernel>(&kernel);
  if (!g || profile_.gemm_tiles.empty() || device_.sms <= 0)
    return roofline_.predict(kernel);
  const double peak = device_.peak(g->dtype);
  if (!(peak > 0))
    throw std::invalid_argument(device_.name + " has no " + g->dtype + " compute units");
  // Launched without sm_margin SMs, the tiles go in waves over the rest, each SM at the rate it has anyway.
  const int sms = std::max(1, device_.sms - std::max(0, g->sm_margin));
  const double rate =
      peak * profile_.efficiency(g->dtype) * profile_.scaling_rate(g->scaling) * sms / double(device_.sms);
  const double bytes = kernel_bytes(kernel);
  const double memory = bytes / (device_.memory_bandwidth * profile_.memory_efficiency_for(memory_key(kernel)) *
                                 profile_.memory_ramp(bytes));
  const double k_steps = gemm_k_steps(g->k, profile_.gemm_k_overhead, g->dtype); // the same for every tile
  CostBreakdown best;
  best.total = INFINITY;
  for (const auto& tile : profile_.gemm_tiles) {
    if (!tile.dtype.empty() && tile.dtype != g->dtype)
      continue;
    WaveCount w = gemm_waves(g->m, g->n, g->batch, tile, sms, profile_.ctas_per_sm);
    // Every slot of every wave computes a whole tile: 2 Tm Tn k FLOPs, its main loop lengthened by the tile's
    // prologue and epilogue.
    double padded = w.waves * w.slots * 2.0 * tile.m * tile.n * k_steps;
    double compute = padded / (rate * tile.efficiency);
    double total =
        profile_.launch_overhead + std::max(compute, memory) + (1 - profile_.gemm_overlap) * std::min(compute, memory);
    if (total < best.total) {
      best.total = total;
      best.compute = compute;
      best.memory = memory;
      best.launch = profile_.launch_overhead;
      best.model = "gemm-waves";
      best.detail =
          fmt::format("tile {}x{}, {} tiles, {} wave{}", tile.m, tile.n, w.tiles, w.waves, w.waves == 1 ? "" : "s");
    }
  }
  return best.model.empty() ? roofline_.predict(kernel) : best;
}

std::unique_ptr<KernelCostModel> make_cost_model(const DeviceSpec& device, const DeviceProfile& profile)
{
  return std::make_unique<ProfiledTableModel>(profile, std::make_unique<GemmWaveModel>(device, profile));
}

} // namespace cs
