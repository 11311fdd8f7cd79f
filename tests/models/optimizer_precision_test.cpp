// Megatron-Core's precision-aware optimizer: the bytes its state takes and its step moves, and what Megatron-Core
// refuses without it.
#include "models/transformer/optimizer_precision.hpp"

#include "models/kernels/kernel.hpp"
#include "models/transformer/framework.hpp"
#include "models/transformer/memory_footprint.hpp"
#include "models/transformer/transformer.hpp"
#include "tests/test_models.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

TEST(OptimizerPrecision, StateBytesFollowTheDtypesAndWhoKeepsTheMasterWeight)
{
  cs::OptimizerPrecision p;
  EXPECT_EQ(p.state_bytes("bf16", ""), 12); // off: fp32 master weight and moments
  EXPECT_EQ(p.step_bytes_saved("bf16", ""), 0);
  p.enabled = true;
  // Transformer Engine keeps an fp32 master of a bf16 parameter as its low 16 bits (no FP8, or delayed scaling) ...
  EXPECT_EQ(p.state_bytes("bf16", ""), 10);
  EXPECT_EQ(p.state_bytes("bf16", "delayed"), 10);
  // ... but Megatron-Core keeps it whole under current or block scaling, to cast the FP8 primary weights from it.
  EXPECT_EQ(p.state_bytes("bf16", "tensorwise"), 12);
  EXPECT_EQ(p.state_bytes("bf16", "blockwise"), 12);
  EXPECT_EQ(p.state_bytes("fp16", ""), 12); // a remainder only completes a bf16 parameter
  p.store_param_remainders = false;
  EXPECT_EQ(p.state_bytes("bf16", ""), 12);
  p.exp_avg = p.exp_avg_sq = "bf16";
  EXPECT_EQ(p.state_bytes("bf16", ""), 8);
  p.exp_avg_sq = "fp8";
  p.main_params = "fp16";
  EXPECT_EQ(p.state_bytes("bf16", "tensorwise"), 5); // 2 + 2 + 1
  // The step reads and writes each state once and reads the gradient once: 2 x (12 - 5) + (4 - 2) bytes fewer.
  p.main_grads = "bf16";
  EXPECT_EQ(p.step_bytes_saved("bf16", "tensorwise"), 16);
}

TEST(OptimizerPrecision, MemoryAndTheOptimizerStepShrinkWithTheState)
{
  cs::ModelParams m = cs::testing::model(8, 1024, 4096, 8, 1024, 32000, "bf16", "none");
  cs::FrameworkProfile fw = cs::testing::framework("megatron-core");
  cs::MemoryLayout l;
  cs::apply_framework(l, fw, m.dtype);
  const auto fp32 = cs::transformer_memory(m, 1, l);
  const auto adam = cs::kernel_bytes(cs::optimizer_kernel(1e6, fw, m).kernel);
  fw.optimizer_precision.enabled = true;
  fw.optimizer_precision.exp_avg = fw.optimizer_precision.exp_avg_sq = "bf16";
  cs::apply_framework(l, fw, m.dtype);
  const auto narrow = cs::transformer_memory(m, 1, l);
  EXPECT_DOUBLE_EQ(narrow.optimizer, fp32.optimizer * 6 / 12); // 2-byte remainder, two bf16 moments
  EXPECT_DOUBLE_EQ(narrow.parameters, fp32.parameters);
  EXPECT_DOUBLE_EQ(cs::kernel_bytes(cs::optimizer_kernel(1e6, fw, m).kernel), adam - 12e6);
}

TEST(OptimizerPrecision, ANarrowDtypeWithoutTheOptimizerIsRefusedAtItsKey)
{
  const std::string q = cs::testing::src("scenarios/quickstart.yaml");
  auto ok = cs::testing::run_clustersim("validate " + q +
                                        " --set workload.framework.use_precision_aware_optimizer=true"
                                        " --set workload.framework.exp_avg_dtype=bf16");
  EXPECT_EQ(ok.code, 0) << ok.err;
  for (const char* bad : {"exp_avg_dtype=bf16", "main_grads_dtype=bf16", "main_params_dtype=fp16"}) {
    auto r = cs::testing::run_clustersim("validate " + q + " --set workload.framework." + bad);
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("without the precision-aware optimizer"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("--set:1:", 0), 0u) << r.err;
  }
  auto wrong = cs::testing::run_clustersim("validate " + q +
                                           " --set workload.framework.use_precision_aware_optimizer=true"
                                           " --set workload.framework.main_grads_dtype=fp8");
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("fp32"), std::string::npos) << wrong.err;
}
