// A GPU's routed experts as one grouped GEMM (framework.moe_grouped_gemm, Megatron-Core --moe-grouped-gemm) against
// one GEMM per expert, and against the grouped expert GEMMs measured on the lent H200.
#include "models/cost/kernel_cost_model.hpp"
#include "models/moe/moe_layer_cost.hpp"
#include "models/transformer/framework.hpp"
#include "models/transformer/model_params.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>
#include <stdexcept>

namespace {

cs::FrameworkProfile grouped_framework(bool grouped)
{
  for (cs::FrameworkProfile f : cs::builtin_frameworks())
    if (f.name == "megatron-core") {
      f.moe_grouped_gemm = grouped;
      return f;
    }
  throw std::logic_error("no megatron-core profile");
}

} // namespace

TEST(GroupedExpertGemm, OneExpertIsTheSameEitherWayAndManyCostLessGrouped)
{
  const cs::ModelParams& v3 = cs::model_presets().at("deepseek-v3");
  const auto cost = cs::make_cost_model(cs::testing::device("h200-sxm"), cs::testing::profile("h200-sxm"));
  const cs::ExpertCost apart(v3, *cost, grouped_framework(false), 1), grouped(v3, *cost, grouped_framework(true), 1);
  const cs::PieceTimes one_apart = apart.of_gpu({4096}), one_grouped = grouped.of_gpu({4096, 0});
  EXPECT_DOUBLE_EQ(one_apart.forward, one_grouped.forward);
  EXPECT_DOUBLE_EQ(one_apart.backward, one_grouped.backward);
  const std::vector<double> many(32, 1024);
  const cs::PieceTimes a = apart.of_gpu(many), g = grouped.of_gpu(many);
  EXPECT_DOUBLE_EQ(a.forward, 32 * apart.of(1024).forward);
  EXPECT_LT(g.forward, 0.9 * a.forward); // 32 launches and wave tails paid once
  EXPECT_LT(g.backward, a.backward);
  EXPECT_GT(g.weight, 0.0);
  // Nothing routed: nothing to run.
  EXPECT_EQ(grouped.of_gpu({0, 0}).forward, 0.0);
}

TEST(GroupedExpertGemm, AgreesWithTheGroupedGemmsMeasuredOnTheH200)
{
  // calibrate/measurements/frontier/h200-sxm-frontier-layers-20261204.json, moe_layer[].experts_s: forward and
  // backward of torch._grouped_mm SwiGLU experts over 32,768 routed rows (4,096 tokens, top-8) on one EP rank.
  struct Row {
    const char* preset;
    int local_experts;
    double forward_s, backward_s;
  };
  const Row rows[] = {{"deepseek-v3", 32, 0.004427, 0.009729},
                      {"deepseek-v3", 8, 0.004252, 0.009219},
                      {"qwen3-235b-a22b", 16, 0.001957, 0.004212}};
  const auto cost = cs::make_cost_model(cs::testing::device("h200-sxm"), cs::testing::profile("h200-sxm"));
  for (const auto& r : rows) {
    const cs::ModelParams& m = cs::model_presets().at(r.preset);
    const cs::ExpertCost grouped(m, *cost, grouped_framework(true), 1);
    const cs::PieceTimes t = grouped.of_gpu(std::vector<double>(r.local_experts, 32768.0 / r.local_experts));
    EXPECT_NEAR(t.forward / r.forward_s, 1.0, 0.05) << r.preset << " " << r.local_experts;
    EXPECT_NEAR(t.backward / r.backward_s, 1.0, 0.08) << r.preset << " " << r.local_experts;
  }
}

TEST(GroupedExpertGemm, TheKernelsListedAreTheKernelsPriced)
{
  // `clustersim kernels` lists ExpertCost::kernels_of_gpu; priced pass by pass they give of_gpu's forward, either way.
  const cs::ModelParams& v3 = cs::model_presets().at("deepseek-v3");
  const auto cost = cs::make_cost_model(cs::testing::device("h200-sxm"), cs::testing::profile("h200-sxm"));
  for (bool grouped : {false, true}) {
    const cs::FrameworkProfile f = grouped_framework(grouped);
    const cs::ExpertCost experts(v3, *cost, f, 1);
    const std::vector<double> tokens = {1000, 0, 3000, 512};
    const cs::PassKernels k = experts.kernels_of_gpu(tokens);
    EXPECT_NEAR(cs::pass_cost(*cost, k.forward, f.kernel_gap_s).seconds, experts.of_gpu(tokens).forward, 1e-12)
        << grouped;
    double gate_up_flops = 0; // the fused gate and up GEMMs over every routed row: 2 x rows x hidden x 2 ffn
    for (const auto& named : k.forward)
      if (named.name == "ffn_gate_up_gemm")
        gate_up_flops += cs::kernel_flops(named.kernel);
    EXPECT_DOUBLE_EQ(gate_up_flops, 2.0 * 4512 * v3.hidden * 2 * cs::expert_ffn_of(v3)) << grouped;
  }
  EXPECT_TRUE(cs::ExpertCost(v3, *cost, grouped_framework(true), 1).kernels_of_gpu({0, 0}).forward.empty());
}
