// MCFuser's analytical model of a fused GEMM chain. The loop nest per thread block is: for each N step, load the A
// panel (once if it stays resident) and a K x Tn slice of B, compute the Tm x Tn tile of E on chip, load Tn x Tp of D
// and accumulate C; store C. Traffic is each load's size times its loop extents, as in MCFuser's t_mem.
#include "models/cost/fused_kernel_models.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>

namespace cs {
namespace {

constexpr double kStageK = 32;           // K slice staged through shared memory, double-buffered
constexpr double kRegisterBytes = 192e3; // accumulators a block may hold (of the SM's 256 KiB register file)

ChainTiling tiling(const GemmChainKernel& c, double tm, double tn, double tp, double smem, double k_overhead)
{
  ChainTiling t{tm, tn, tp};
  const double e = dtype_bytes(c.dtype);
  const double staging = e * (2 * (tm * kStageK + kStageK * tn) + tm * tn + tn * tp);
  if (staging > smem || 4 * tm * (tp + tn) > kRegisterBytes)
    return t; // blocks = 0: does not fit
  const double steps = std::ceil(c.n / tn);
  t.blocks = std::ceil(c.m / tm) * std::ceil(c.p / tp) * c.batch;
  t.a_resident = staging + e * tm * c.k <= smem;
  const double a = tm * c.k * (t.a_resident ? 1 : steps);
  const double per_block = a + c.k * steps * tn + steps * tn * tp + tm * tp;
  t.read_bytes = t.blocks * per_block * e;
  // The main loop over N stays warm across steps: the tile's prologue and epilogue are paid once per block.
  t.flops = t.blocks * 2 * tm * tn * (steps * (c.k + tp) + gemm_k_steps(0, k_overhead, c.dtype));
  return t;
}

// MCFuser's estimate, its parts each scaled by alpha.
CostBreakdown estimate(const ChainTiling& t, const DeviceSpec& d, const DeviceProfile& p, const std::string& dtype)
{
  const double alpha = (t.blocks + d.sms) / t.blocks;
  CostBreakdown b;
  b.launch = p.launch_overhead;
  b.memory =
      t.read_bytes / (d.memory_bandwidth * p.memory_efficiency_for("gemm") * p.memory_ramp(t.read_bytes)) * alpha;
  b.compute = t.flops / (d.peak(dtype) * p.efficiency(dtype)) * alpha;
  b.total = b.launch + b.memory + b.compute;
  return b;
}

} // namespace

ChainTiling best_chain_tiling(const GemmChainKernel& c, const DeviceSpec& d, const DeviceProfile& p)
{
  if (!(d.smem_per_sm > 0) || d.sms <= 0)
    throw std::invalid_argument(d.name + " has no shared-memory figure for a fused GEMM chain");
  if (!(d.peak(c.dtype) > 0))
    throw std::invalid_argument(d.name + " has no " + c.dtype + " compute units");
  ChainTiling best;
  double best_time = std::numeric_limits<double>::infinity();
  for (double tm : {64.0, 128.0, 256.0})
    for (double tn : {32.0, 64.0, 128.0})
      for (double tp : {64.0, 128.0, 256.0}) {
        const ChainTiling t = tiling(c, tm, tn, std::min(tp, c.p), d.smem_per_sm, p.gemm_k_overhead);
        if (t.blocks <= 0)
          continue;
        const double time = estimate(t, d, p, c.dtype).total;
        if (time < best_time) {
          best_time = time;
          best = t;
        }
      }
  if (!(best.blocks > 0))
    throw std::invalid_argument(
        fmt::format("no tiling of a gemm-chain with k={} p={} fits {}'s shared memory", c.k, c.p, d.name));
  return best;
}

CostBreakdown predict_gemm_chain(const GemmChainKernel& c, const DeviceSpec& d, const DeviceProfile& p)
{
  const ChainTiling t = best_chain_tiling(c, d, p);
  CostBreakdown b = estimate(t, d, p, c.dtype);
  b.model = "mcfuser";
  b.detail = fmt::format("tile {}x{}x{}, {} blocks, {:.1f} MB moved{}, E computed {}x", t.tm, t.tn, t.tp, t.blocks,
                         t.read_bytes / 1e6, t.a_resident ? " (A resident)" : "", std::ceil(c.p / t.tp));
  return b;
}

std::array<GemmKernel, 2> unfused_chain(const GemmChainKernel& c)
{
  return {GemmKernel{c.m, c.n, c.k, c.batch, c.dtype}, GemmKernel{c.m, c.p, c.n, c.batch, c.dtype}};
}

} // namespace cs
