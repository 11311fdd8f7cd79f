#include "models/cost/kernel_cost_model.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs {
namespace {

// FlashAttention written in Triton, as llm-foundry ran it for ALiBi models in 2023 (attn_impl: triton), against
// FlashAttention-2: Triton's own A100 regression data (python/test/regression/test_performance.py, early 2023) has
// its causal fused attention at 0.37 (forward) and 0.25 (backward) of the tensor-core peak at the 1,350 MHz its CI
// ran at, for batch 4 x 48 heads, seq 4096, head dim 64, fp16: 0.354 and 0.239 of the 1,410 MHz peak our profiles
// use. The A100 profile's FA2 curve gives 0.615 and 0.471 at that point, hence these ratios. They are applied to
// every device's FA2 curve [recon: measured on A100 only, at head dim 64 against FA2's head-dim-128 curve].
constexpr double kTritonAttentionForward = 0.5765;
constexpr double kTritonAttentionBackward = 0.5088;
// cuDNN's fused attention (what Transformer Engine runs on Hopper, so Megatron-Core's default there) against
// FlashAttention-2 on H100 SXM5, head dim 128, sequence 8k, bf16, from the FlashAttention-3 paper's benchmark (Shah et
// al. 2024, Figures 5-6): forward 600 vs 370 TFLOP/s (causal 529 vs 333), backward 518 vs 318. Applied to every
// device's FA2 curve [recon: measured on H100 only, at long sequences, where both have reached their plateau].
constexpr double kCudnnAttentionForward = 600.0 / 370.0;
constexpr double kCudnnAttentionCausalForward = 529.0 / 333.0;
constexpr double kCudnnAttentionBackward = 518.0 / 318.0;

} // namespace

double RooflineModel::compute_efficiency(const Kernel& kernel, const std::string& dtype) const
{
  const auto* a = std::get_if<AttentionKernel>(&kernel);
  const auto& e = profile_.attention;
  if (const auto* g = std::get_if<GemmKernel>(&kernel); g && !g->scaling.empty())
    return profile_.efficiency(dtype) * profile_.scaling_rate(g->scaling);
  if (!a || e.forward <= 0)
    return profile_.efficiency(dtype);
  // FlashAttention's achieved share of peak grows with the sequence (published sweeps, calibrate/profiles sources).
  // Heads whose values are narrower than their keys (MLA: 192 and 128) run at the narrower width's rate: cuDNN's MLA
  // kernels on the lent H200 (calibrate/measurements/frontier) ran forward within 1-6% of the 128-wide curve applied
  // to their FLOPs, and 5-6% faster than the curve at the mean width promised [recon: one device, cuDNN 9.19].
  const double head_dim = std::min(a->head_dim, a->value_dim());
  if (a->cudnn && profile_.attention_cudnn.forward > 0) // cuDNN measured on this device: its own curve
    return profile_.attention_cudnn.share(a->backward, a->causal, a->seq_kv, head_dim);
  const double ratio = a->triton ? (a->backward ? kTritonAttentionBackward : kTritonAttentionForward) : 1.0;
  if (!a->cudnn)
    return e.share(a->backward, a->causal, a->seq_kv, head_dim, ratio);
  // The published ratios are at head size 128; cuDNN's own head-size dependence replaces the curve's where the
  // profile has one (FlashAttention-3's H100 sweeps: at head size 64 cuDNN keeps 0.69 of its rate, FA2 0.88).
  const double heads = profile_.attention_cudnn_head_dim_half > 0
                           ? head_dim_factor(head_dim, profile_.attention_cudnn_head_dim_half) /
                                 head_dim_factor(head_dim, e.head_dim_half)
                           : 1.0;
  return e.share(a->backward, a->causal, a->seq_kv, head_dim,
                 heads * ratio *
                     (a->backward ? kCudnnAttentionBackward
                      : a->causal ? kCudnnAttentionCausalForward
                                  : kCudnnAttentionForward));
}

CostBreakdown RooflineModel::predict(const Kernel& kernel) const
{
  CostBreakdown b;
  b.model = "roofline";
  b.launch = profile_.launch_overhead;
  const double flops = kernel_flops(kernel);
  const double bytes = kernel_bytes(kernel);
  if (const auto* copy = std::get_if<MemcpyKernel>(&kernel); copy && copy->direction != "d2d") {
    auto it = profile_.copy_bandwidth.find(copy->direction);
    double bw = it != profile_.copy_bandwidth.end()                        ? it->second
                : copy->direction == "p2p" && device_.nvlink_bandwidth > 0 ? device_.nvlink_bandwidth
                                                                           : device_.pcie_bandwidth;
    if (!(bw > 0))
      throw std::invalid_argument(device_.name + " has no " + copy->direction + " copy path");
    b.memory = bytes / bw;
    b.detail = copy->direction + " link";
  } else {
    const std::string dtype = kernel_dtype(kernel);
    if (flops > 0) {
      double peak = device_.peak(dtype);
      if (!(peak > 0))
        throw std::invalid_argument(device_.name + " has no " + dtype + " compute units");
      b.compute = flops / (peak * compute_efficiency(kernel, dtype));
      // A GEMM launched without some SMs (GemmKernel::sm_margin) computes at the rest's share of the peak.
      if (const auto* g = std::get_if<GemmKernel>(&kernel); g && g->sm_margin > 0 && device_.sms > g->sm_margin)
        b.compute *= double(device_.sms) / (device_.sms - g->sm_margin);
    }
    b.memory = bytes / (device_.memory_bandwidth * profile_.memory_efficiency_for(memory_key(kernel)) *
                        profile_.memory_ramp(bytes));
  }
  b.total = b.launch + std::max(b.compute, b.memory);
  return b;
}

} // namespace cs
