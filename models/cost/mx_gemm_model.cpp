// Micro-scaled 8-bit GEMMs (OCP Microscaling Formats v1.0): the quantisation of inputs, the main loop with its block
// scales, and the promotion of partial sums, each priced on its own. Hardware without native MX (Hopper) runs the
// main loop at its fp8 tensor rate (fp6 and fp4 unpacked to fp8) and every `promotion` K values moves the tensor
// cores' partial sums into fp32 registers, scaled, on CUDA cores (DeepSeek-V3 §3.3); a second warpgroup's MMA
// overlaps that work, so only the part longer than the main loop shows.
#include "models/cost/fused_kernel_models.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace cs {

MxGemmParts mx_gemm_parts(const MxGemmKernel& g, const DeviceSpec& d, const DeviceProfile& p,
                          const KernelCostModel& stack)
{
  if (!(d.peak(g.dtype) > 0))
    throw std::invalid_argument(d.name + " has no " + g.dtype + " tensor units for an MX GEMM");
  MxGemmParts out;
  const double bits = mx_element_bits(g.element), src = dtype_bytes(g.source);
  // Quantising reads each value, finds its block's absolute maximum, and writes the element and the block's scale.
  double quantized = 0;
  if (g.quantize_a)
    quantized += g.m * g.k * g.batch;
  if (g.quantize_b)
    quantized += g.k * g.n * g.batch;
  if (quantized > 0)
    out.quantize = stack.predict(
        BandwidthKernel{"mx_quantize", quantized * src, quantized * (bits / 8 + 1 / g.block), 3 * quantized, "fp32"});
  out.gemm = stack.predict(GemmKernel{g.m, g.n, g.k, g.batch, g.dtype});
  // The scales travel with the tiles: only where memory already bounds the main loop do they lengthen it.
  const double scale_bytes = (g.m * g.k + g.k * g.n) * g.batch / g.block;
  const double memory = out.gemm.memory + scale_bytes / (d.memory_bandwidth * p.memory_efficiency_for("gemm"));
  out.gemm.total += std::max(0.0, memory - std::max(out.gemm.compute, out.gemm.memory));
  out.gemm.memory = memory;
  if (g.promotion > 0) {
    const double flops = 2 * g.m * g.n * std::ceil(g.k / g.promotion) * g.batch;
    out.promotion = flops / (d.peak("fp32") * p.efficiency("fp32"));
    out.exposed_promotion = std::max(0.0, out.promotion - out.gemm.compute);
  }
  return out;
}

CostBreakdown predict_mx_gemm(const MxGemmKernel& g, const DeviceSpec& d, const DeviceProfile& p,
                              const KernelCostModel& stack)
{
  const MxGemmParts parts = mx_gemm_parts(g, d, p, stack);
  CostBreakdown b;
  b.model = "mx-gemm";
  b.launch = parts.quantize.launch + parts.gemm.launch;
  b.compute = parts.gemm.compute + parts.exposed_promotion;
  b.memory = parts.quantize.memory + parts.gemm.memory;
  b.total = parts.quantize.total + parts.gemm.total + parts.exposed_promotion;
  b.detail = fmt::format("quantise {:.2f} us, main loop {:.2f} us ({}), promotion {:.2f} us ({:.2f} exposed)",
                         parts.quantize.total * 1e6, parts.gemm.total * 1e6, parts.gemm.detail, parts.promotion * 1e6,
                         parts.exposed_promotion * 1e6);
  return b;
}

} // namespace cs
