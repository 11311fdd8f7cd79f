#include "models/transformer/fp8_recipe.hpp"

#include "models/transformer/layer_kernels.hpp"

#include <fmt/format.h>

namespace cs {

// The weights' FP8 copies are made once per step (Transformer Engine caches them over the microbatches of a step,
// Megatron passing is_first_microbatch), so a microbatch quantises only its input and, in backward, its output
// gradient: each by a cast that writes both layouts (the rowwise copy for one GEMM, the columnwise one, transposed,
// for the other), preceded under current scaling by a pass that finds the tensor's amax.
// A norm fused with the linear that casts as it writes (Transformer Engine 1.x's rmsnorm_fwd_fp8 and layernorm_fwd_fp8,
// TE 2.x's with_quantized_norm) leaves only the columnwise copy, which the backward makes by transposing the saved FP8
// input (tex.fp8_transpose: a byte read and written an element) before the weight gradient. [recon: the norm's output
// written in FP8 rather than bf16, a byte an element less, is left in the norm's price]
void Fp8Recipe::linear(LayerKernels& b, const std::string& name, double tokens, double n, double k, bool bias,
                       bool from_norm) const
{
  const double e = b.element_bytes(), q = quantised_bytes(), x = tokens * k, dy = tokens * n;
  const bool cast_by_norm = from_norm && quantises_in_norm();
  if (amax_pass() && !cast_by_norm)
    b.forward(name + "_input_amax", b.traffic("amax", x * e, 0, x));
  if (!cast_by_norm)
    b.forward(name + "_input_quantise", b.traffic("fp8_cast_transpose", x * e, x * q, 2 * x));
  auto gemm = [&](double m, double nn, double kk) {
    GemmKernel g{m, nn, kk, 1, "fp8"};
    g.scaling = gemm_scaling();
    return g;
  };
  b.forward(name, gemm(tokens, n, k));
  if (amax_pass())
    b.backward(name + "_grad_amax", b.traffic("amax", dy * e, 0, dy));
  b.backward(name + "_grad_quantise", b.traffic("fp8_cast_transpose", dy * e, dy * q, 2 * dy));
  b.backward(name + "_dgrad", gemm(tokens, k, n));
  if (cast_by_norm)
    b.backward(name + "_input_transpose", b.traffic("fp8_cast_transpose", x, x, 0), true);
  b.backward(name + "_wgrad", gemm(k, n, tokens), true);
  if (bias)
    b.backward(name + "_bias_grad", ReductionKernel{dy, b.model().dtype}, true);
}

std::vector<NamedKernel> Fp8Recipe::weight_casts(double w, double e) const
{
  std::vector<NamedKernel> out;
  if (!(w > 0))
    return out;
  if (amax_pass())
    out.push_back({"fp8_weight_amax", BandwidthKernel{"amax", w * e, 0, w, "bf16"}});
  out.push_back(
      {"fp8_weight_cast", BandwidthKernel{"fp8_cast_transpose", w * e, w * quantised_bytes(), 2 * w, "bf16"}});
  return out;
}

std::string Fp8Recipe::device_problem(const DeviceSpec& device) const
{
  return device.peak("fp8") > 0 ? "" : fmt::format("{} has no FP8 tensor cores", device.name);
}

std::shared_ptr<Fp8Recipe> make_fp8_recipe(const std::string& name)
{
  return Registry<Fp8Recipe>::instance().create(name);
}

std::vector<std::string> fp8_recipe_names() { return Registry<Fp8Recipe>::instance().names(); }

} // namespace cs
