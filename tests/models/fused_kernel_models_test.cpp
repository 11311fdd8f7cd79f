// MCFuser's fused GEMM chain and micro-scaled (MX) GEMMs: traffic by tiling, when fusion pays, and each MX cost part.
#include "models/cost/fused_kernel_models.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

namespace {

using cs::testing::device;
using cs::testing::profile;
double unfused_seconds(const cs::KernelCostModel& m, const cs::GemmChainKernel& c)
{
  const auto pair = cs::unfused_chain(c);
  return m.predict(pair[0]).total + m.predict(pair[1]).total;
}
} // namespace

TEST(GemmChain, FusionPaysWhenTheIntermediateDominatesTraffic)
{
  // Attention-like chain: E = Q K^T (k = 64) never reaches memory, so the fused kernel skips E's write and read.
  const auto& d = device("h100-sxm5");
  auto model = cs::make_cost_model(d, profile("h100-sxm5"));
  const cs::GemmChainKernel c{4096, 4096, 64, 64, 32, "bf16"};
  const auto fused = model->predict(c);
  EXPECT_EQ(fused.model, "mcfuser");
  EXPECT_LT(fused.total, 0.8 * unfused_seconds(*model, c));
  // The tiling's traffic is at least the ideal once-each traffic, and it re-reads B for every row tile.
  const auto t = cs::best_chain_tiling(c, d, profile("h100-sxm5"));
  EXPECT_GE(t.read_bytes, cs::kernel_bytes(c));
  EXPECT_LT(t.read_bytes, 2 * (4096.0 * 4096 * 2 * 32)); // far below E's round trip alone
}

TEST(GemmChain, RecomputationMakesLargeChainsSlowerThanTwoGemms)
{
  // With p far above any tile, E is recomputed for every p tile: the unfused pair wins (MCFuser fuses only where
  // the chain is memory-bound).
  auto model = cs::make_cost_model(device("h100-sxm5"), profile("h100-sxm5"));
  const cs::GemmChainKernel c{8192, 8192, 8192, 8192, 1, "bf16"};
  const auto t = cs::best_chain_tiling(c, device("h100-sxm5"), profile("h100-sxm5"));
  EXPECT_GT(t.flops, 2 * cs::kernel_flops(c));
  EXPECT_GT(model->predict(c).total, unfused_seconds(*model, c));
}

TEST(GemmChain, EstimateIsMcFusersFormula)
{
  // t = launch + (t_mem + t_comp) (blocks + SMs) / blocks, with the picked tiling's traffic and FLOPs.
  const auto& d = device("a100-sxm4-80gb");
  const auto& p = profile("a100-sxm4-80gb");
  const cs::GemmChainKernel c{1024, 2048, 128, 128, 1, "fp16"};
  const auto t = cs::best_chain_tiling(c, d, p);
  const double mem =
      t.read_bytes / (d.memory_bandwidth * p.memory_efficiency_for("gemm") * p.memory_ramp(t.read_bytes));
  const double comp = t.flops / (d.peak("fp16") * p.efficiency("fp16"));
  const double expected = p.launch_overhead + (mem + comp) * (t.blocks + d.sms) / t.blocks;
  EXPECT_NEAR(cs::predict_gemm_chain(c, d, p).total / expected, 1.0, 1e-12);
  // A launch of few blocks leaves SMs idle: alpha > 2 below the SM count.
  EXPECT_LT(t.blocks, d.sms);
}

TEST(GemmChain, NeedsSharedMemoryAndTheDtype)
{
  const cs::GemmChainKernel c{1024, 1024, 64, 64, 1, "fp8"};
  EXPECT_THROW(cs::predict_gemm_chain(c, device("a100-sxm4-80gb"), profile("a100-sxm4-80gb")),
               std::invalid_argument); // no fp8 on A100
  cs::DeviceSpec no_smem = device("h100-sxm5");
  no_smem.smem_per_sm = 0;
  EXPECT_THROW(cs::predict_gemm_chain(c, no_smem, profile("h100-sxm5")), std::invalid_argument);
}

TEST(MxGemm, EachPartIsPricedOnItsOwn)
{
  const auto& d = device("h100-sxm5");
  const auto& p = profile("h100-sxm5");
  auto stack = cs::make_cost_model(d, p);
  cs::MxGemmKernel g{8192, 8192, 8192};
  const auto parts = cs::mx_gemm_parts(g, d, p, *stack);
  // Quantising A: read bf16, write one byte per element and one scale per 32.
  const double e = 8192.0 * 8192;
  EXPECT_NEAR(parts.quantize.total,
              stack->predict(cs::BandwidthKernel{"mx_quantize", 2 * e, e * (1 + 1.0 / 32), 3 * e, "fp32"}).total,
              1e-15);
  // A large square main loop is compute-bound: the scales do not lengthen it, and the promotion hides under it.
  EXPECT_NEAR(parts.gemm.total, stack->predict(cs::GemmKernel{8192, 8192, 8192, 1, "fp8"}).total, 1e-12);
  EXPECT_GT(parts.promotion, 0.0);
  EXPECT_EQ(parts.exposed_promotion, 0.0);
  const auto total = stack->predict(g);
  EXPECT_EQ(total.model, "mx-gemm");
  EXPECT_NEAR(total.total, parts.quantize.total + parts.gemm.total, 1e-15);
}

TEST(MxGemm, FinerPromotionAndWiderElementsCostMore)
{
  auto stack = cs::make_cost_model(device("h100-sxm5"), profile("h100-sxm5"));
  cs::MxGemmKernel native{4096, 4096, 4096};
  native.promotion = 0;
  cs::MxGemmKernel every_4 = native;
  every_4.promotion = 4; // promotion as often as this runs longer than the main loop
  EXPECT_LT(stack->predict(native).total, stack->predict(every_4).total);
  const auto parts = cs::mx_gemm_parts(every_4, device("h100-sxm5"), profile("h100-sxm5"), *stack);
  EXPECT_GT(parts.exposed_promotion, 0.0);
  cs::MxGemmKernel fp4 = native;
  fp4.element = "fp4";
  EXPECT_LT(cs::kernel_bytes(fp4), cs::kernel_bytes(native));
  // A100 has no fp8 tensor units.
  EXPECT_THROW(cs::make_cost_model(device("a100-sxm4-80gb"), profile("a100-sxm4-80gb"))->predict(native),
               std::invalid_argument);
}

TEST(MxGemm, ArgumentsAreChecked)
{
  EXPECT_NO_THROW(cs::make_kernel("mx-gemm", {{"m", "64"}, {"n", "64"}, {"k", "64"}, {"element", "fp6"}}));
  EXPECT_THROW(cs::make_kernel("mx-gemm", {{"m", "64"}, {"n", "64"}, {"k", "64"}, {"element", "fp5"}}),
               std::invalid_argument);
  EXPECT_THROW(cs::make_kernel("mx-gemm", {{"m", "64"}, {"n", "64"}, {"k", "64"}, {"block", "0.5"}}),
               std::invalid_argument);
  EXPECT_THROW(cs::make_kernel("mx-gemm", {{"m", "64"}, {"n", "64"}, {"k", "64"}, {"source", "fp8"}}),
               std::invalid_argument);
  EXPECT_THROW(cs::make_kernel("gemm-chain", {{"m", "64"}, {"n", "64"}, {"k", "64"}}), std::invalid_argument);
}
