#include "models/workloads/transformer.hpp"

#include <gtest/gtest.h>

TEST(Transformer, LayerFlopsMatchTheMegatronCount)
{
  // Forward FLOPs of one layer with ffn = 4h: 24 b s h^2 + 4 b s^2 h (Narayanan et al. eq. 3 over 3 passes).
  cs::ModelParams m{1, 2048, 8192, 16, 2048, 51200, "bf16", "none"};
  double flops = 0;
  for (const auto& k : cs::layer_forward_kernels(m, 4))
    if (k.name.find("gemm") != std::string::npos || k.name == "attention")
      flops += cs::kernel_flops(k.kernel);
  const double b = 4, s = 2048, h = 2048;
  EXPECT_DOUBLE_EQ(flops, 24 * b * s * h * h + 4 * b * s * s * h);
}

TEST(Transformer, ParameterCountOfGpt13B)
{
  cs::ModelParams m{24, 2048, 8192, 16, 2048, 51200, "bf16", "none"};
  // 12 l h^2 + V h, plus biases and norms: about 1.31e9.
  EXPECT_NEAR(cs::total_parameters(m), 12.0 * 24 * 2048 * 2048 + 51200.0 * 2048, 0.001 * cs::total_parameters(m));
}

TEST(Transformer, MegatronFormula)
{
  cs::ModelParams m{24, 2304, 9216, 24, 2048, 51200, "fp16", "full"};
  const double B = 512, s = 2048, l = 24, h = 2304, V = 51200;
  EXPECT_DOUBLE_EQ(cs::megatron_model_flops(m, B), 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)));
}

TEST(Transformer, BackwardDoesTwiceTheForwardGemmWork)
{
  cs::ModelParams m{1, 1024, 4096, 8, 512, 1000, "bf16", "none"};
  auto fwd = cs::layer_forward_kernels(m, 2);
  double f = 0, b = 0;
  auto matmul = [](const cs::Kernel& k) {
    return std::holds_alternative<cs::GemmKernel>(k) || std::holds_alternative<cs::AttentionKernel>(k);
  };
  for (const auto& k : fwd)
    if (matmul(k.kernel))
      f += cs::kernel_flops(k.kernel);
  for (const auto& k : cs::backward_kernels(fwd))
    if (matmul(k.kernel))
      b += cs::kernel_flops(k.kernel);
  EXPECT_DOUBLE_EQ(b, 2 * f);
  // Materialised attention: the same GEMM work, through batched score GEMMs.
  cs::ModelParams mat = m;
  mat.attention = "materialized";
  double fm = 0;
  for (const auto& k : cs::layer_forward_kernels(mat, 2))
    if (matmul(k.kernel))
      fm += cs::kernel_flops(k.kernel);
  EXPECT_DOUBLE_EQ(fm, f);
}
