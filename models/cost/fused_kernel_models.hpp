// Cost models of the two composite kernels: MCFuser's fused GEMM chain and the micro-scaled (MX) 8-bit GEMM.
#pragma once

#include "models/cost/kernel_cost_model.hpp"

#include <array>

namespace cs {

/** A fused chain's tiling: Tm x Tp output tiles, looping over N in Tn steps (models/cost/gemm_chain_model.cpp). */
struct ChainTiling {
  double tm = 0, tn = 0, tp = 0;
  double blocks = 0;       // thread blocks: ceil(m/Tm) ceil(p/Tp) batch
  double read_bytes = 0;   // A, B, D read and C written, as this tiling's loops load them
  double flops = 0;        // including E recomputed once per p tile
  bool a_resident = false; // the block's A panel stays in shared memory across N steps
};

/** MCFuser's estimate (Zhang et al., SC'24) for the best tiling that fits the SM's shared memory and registers:
 *  t = launch + (t_mem + t_comp) x alpha, t_mem the tiling's traffic over achieved bandwidth, t_comp its FLOPs
 *  (recomputation and K prologue included) over achieved peak, alpha = (blocks + SMs) / blocks.
 *  Throws std::invalid_argument when the device has no shared-memory figure or no unit for the dtype. */
CostBreakdown predict_gemm_chain(const GemmChainKernel& chain, const DeviceSpec& device, const DeviceProfile& profile);
/** The tiling predict_gemm_chain() picked (same search). */
ChainTiling best_chain_tiling(const GemmChainKernel& chain, const DeviceSpec& device, const DeviceProfile& profile);
/** The same chain as two GEMMs writing E to memory and reading it back: what fusion is checked against. */
std::array<GemmKernel, 2> unfused_chain(const GemmChainKernel& chain);

/** The parts of an MX GEMM, each priced on its own. */
struct MxGemmParts {
  CostBreakdown quantize;       // bf16/fp16/fp32 inputs to elements and block scales (memory-bound)
  CostBreakdown gemm;           // the 8-bit main loop at the fp8 tensor rate, scales read with the tiles
  double promotion = 0;         // fp32 promotion of partial sums on CUDA cores, every `promotion` K values
  double exposed_promotion = 0; // what the other warpgroup's MMA does not hide
};
/** Prices each part with `stack` (the GEMM and the quantisation) and the device's fp32 rate (the promotion). */
MxGemmParts mx_gemm_parts(const MxGemmKernel& g, const DeviceSpec& device, const DeviceProfile& profile,
                          const KernelCostModel& stack);
/** quantise + GEMM + exposed promotion, with each part in the detail. */
CostBreakdown predict_mx_gemm(const MxGemmKernel& g, const DeviceSpec& device, const DeviceProfile& profile,
                              const KernelCostModel& stack);

} // namespace cs
