// The gradient buffer in memory and on the wire tell one story: Megatron's fp32 main_grad holds 4 bytes a parameter,
// Megatron-Core's default (grad_reduce_in_fp32: false) the model's 2, and ZeRO-2/3 shards hold the reduce dtype.
#include "models/transformer/memory_footprint.hpp"
#include "models/transformer/transformer.hpp"

#include "tests/test_models.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

namespace {
const cs::ModelParams kGradModel = cs::testing::model(24, 2048, 8192, 16, 2048, 51200, "bf16", "none");

// The memory and network figures of a run of the quickstart's GPT 1.3B on 16 H100 with `framework` written in.
nlohmann::json run_with_framework(const std::string& name, const std::string& framework)
{
  const auto dir = cs::testing::fresh_dir(name);
  const auto r = cs::testing::clustersim("run " + cs::testing::src("scenarios/quickstart.yaml") +
                                         " --backend analytical --set 'workload.framework=" + framework +
                                         "' --set workload.iterations=1 --out " + dir.string());
  EXPECT_EQ(r.code, 0) << r.err;
  return cs::testing::read_json(dir / "report.json");
}
} // namespace

TEST(GradientBuffer, WholeBufferInItsDtypeShardsInTheReduceDtype)
{
  const double P = cs::total_parameters(kGradModel);
  cs::MemoryLayout l;
  l.parallel.dp = 8;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(kGradModel, 1, l).gradients, 2 * P); // the model's dtype by default
  l.main_grad_bytes = 4;                                                       // fp32 main_grad
  EXPECT_DOUBLE_EQ(cs::transformer_memory(kGradModel, 1, l).gradients, 4 * P);
  // ZeRO-2 with one microbatch a step: shards in the reduce dtype, whatever the whole buffer's would be.
  l.parallel.zero = 2;
  l.sharded_grad_bytes = 2;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(kGradModel, 1, l).gradients, 2 * P / 8);
  // Accumulated over 4 microbatches and reduced once: the whole fp32 buffer stays.
  l.accumulation_steps = 4;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(kGradModel, 1, l).gradients, 4 * P);
  l.reduce_every_microbatch = true;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(kGradModel, 1, l).gradients, 2 * P / 8);
}

TEST(GradientBuffer, GradReduceInFp32DoublesTheBufferAndTheGradientTraffic)
{
  const auto bf16 = run_with_framework("grad_bf16", "{name: megatron-core}");
  const auto fp32 = run_with_framework("grad_fp32", "{name: megatron-core, grad_reduce_in_fp32: true}");
  const auto legacy = run_with_framework("grad_megatron", "megatron");
  const double P = bf16["metrics"]["parameter_count"].get<double>();
  EXPECT_NEAR(bf16["breakdown"]["memory_gradients_bytes"].get<double>(), 2 * P, 1e-6 * P);
  EXPECT_NEAR(fp32["breakdown"]["memory_gradients_bytes"].get<double>(), 4 * P, 1e-6 * P);
  EXPECT_NEAR(legacy["breakdown"]["memory_gradients_bytes"].get<double>(), 4 * P, 1e-6 * P); // Megatron-LM 2021
  // Pure data parallelism: the traffic is the gradients' all-reduce, with twice the bytes in fp32 (on the links a
  // little less than twice: the tuner picks each bucket's algorithm by its size).
  const double ratio = fp32["metrics"]["network_bytes"].get<double>() / bf16["metrics"]["network_bytes"].get<double>();
  EXPECT_GT(ratio, 1.8);
  EXPECT_LE(ratio, 2.0);
}

TEST(GradientBuffer, FusionDecidesWhetherAccumulationIsAKernel)
{
  cs::FrameworkProfile fw = cs::builtin_frameworks().at(0); // megatron: fp32 main_grad, a separate add
  auto has_accumulate = [](const cs::FrameworkProfile& f) {
    for (const auto& k : cs::layer_kernels(kGradModel, cs::LayerShape{1, {}, f}).backward)
      if (k.name == "main_grad_accumulate")
        return true;
    return false;
  };
  EXPECT_TRUE(has_accumulate(fw));
  fw.gradient_accumulation_fusion = true;
  EXPECT_FALSE(has_accumulate(fw));
  EXPECT_FALSE(has_accumulate(cs::builtin_frameworks().at(1))); // megatron-core
  EXPECT_EQ(cs::builtin_frameworks().at(1).main_grad_dtype("bf16"), "bf16");
  EXPECT_EQ(cs::builtin_frameworks().at(0).main_grad_dtype("bf16"), "fp32");
}
