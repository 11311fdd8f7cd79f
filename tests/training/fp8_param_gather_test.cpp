// FP8 parameters gathered in FP8 (framework.fp8_param_gather: Megatron-Core's --fp8-param-gather, torchao's
// enable_fsdp_float8_all_gather): ZeRO's gathers move one byte a GEMM weight, and no 16-bit copy sits beside the FP8
// one.
#include "models/transformer/fp8_recipe.hpp"
#include "models/transformer/memory_footprint.hpp"
#include "models/transformer/transformer.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/test_models.hpp"
#include "tests/test_support.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

// Llama 3 70B's shape, 10 layers on a device of 4 tensor-parallel ranks, in tensor-wise FP8.
cs::ModelParams llama70b()
{
  cs::ModelParams m = cs::testing::llama_block(80, 8192, 28672, 64, 8192, 128256, "selective");
  m.fp8 = cs::make_fp8_recipe("tensorwise");
  return m;
}

cs::MemoryLayout layout(int zero, bool fp8_params)
{
  cs::MemoryLayout l;
  l.parallel.tp = 4;
  l.parallel.pp = 8;
  l.parallel.dp = 8;
  l.parallel.zero = zero;
  l.parallel.sequence_parallel = true;
  l.layers_on_device = 10;
  l.fp8_params = fp8_params;
  return l;
}

// Bytes one run's parameter gathers move (their transfers, from the trace), and its report.
std::pair<double, nlohmann::json> gathers(const std::string& args)
{
  static int n = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("cs_fp8_gather_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
  auto r = cs::testing::run_clustersim("run " + cs::testing::src("scenarios/reference/torchtitan-llama3-8b-fsdp.yaml") +
                                       " --quiet --trace --out " + dir.string() +
                                       " --set workload.model.layers=2 --set workload.iterations=1"
                                       " --set workload.model.fp8=tensorwise " +
                                       args);
  EXPECT_EQ(r.code, 0) << r.err;
  std::ifstream trace_in(dir / "trace.json"), report_in(dir / "report.json");
  const auto trace = nlohmann::json::parse(trace_in, nullptr, false);
  const auto report = nlohmann::json::parse(report_in, nullptr, false);
  fs::remove_all(dir);
  return {cs::testing::trace_bytes(trace, "parameter-gather"), report};
}

} // namespace

TEST(Fp8ParamGather, TheGemmWeightsAreKeptInFp8AloneWithoutTheir16BitCopy)
{
  const cs::ModelParams m = llama70b();
  const double gemm = 10 * cs::layer_gemm_weights(m) / 4; // on this TP rank
  // ZeRO-1: the bf16 GEMM weights go, their FP8 copies (both layouts) stay; nothing else moves.
  const auto kept = cs::transformer_memory(m, 1, layout(1, false));
  const auto fp8 = cs::transformer_memory(m, 1, layout(1, true));
  EXPECT_NEAR(kept.parameters - fp8.parameters, 2.0 * gemm, 1.0);
  EXPECT_EQ(kept.optimizer, fp8.optimizer);
  EXPECT_EQ(kept.gradients, fp8.gradients);
  EXPECT_EQ(kept.activations, fp8.activations);
  // ZeRO-3: the same of the shard, and the two layers prefetched gathered hold their GEMM weights in one byte.
  const auto kept3 = cs::transformer_memory(m, 1, layout(3, false));
  const auto fp83 = cs::transformer_memory(m, 1, layout(3, true));
  const double shards = 8;
  EXPECT_NEAR(kept3.parameters - fp83.parameters, 2.0 * gemm / shards, 1.0);
  EXPECT_NEAR(kept3.buffers - fp83.buffers, 2.0 * cs::layer_gemm_weights(m) / 4 * (2.0 - 1.0), 1.0);
  // Where the shards are the fp32 master weights (FSDP), there was no 16-bit shard to drop.
  auto master = layout(3, true), master_off = layout(3, false);
  master.sharded_params_are_master = master_off.sharded_params_are_master = true;
  EXPECT_EQ(cs::transformer_memory(m, 1, master).parameters, cs::transformer_memory(m, 1, master_off).parameters);
  // A pipeline stage kept gathered for the step holds its GEMM weights in one byte, the rest in bf16.
  master.keeps_unsharded = master_off.keeps_unsharded = true;
  const auto held = cs::transformer_memory(m, 1, master), held_off = cs::transformer_memory(m, 1, master_off);
  EXPECT_NEAR(held_off.gathered_parameters - held.gathered_parameters, gemm, 1.0);
}

TEST(Fp8ParamGather, ZeroThreeGathersMoveOneByteAGemmWeight)
{
  // torchtitan's Llama 3 8B on 8 GPUs (FSDP, one microbatch), 2 layers: each layer gathered for forward and again for
  // backward, the embedding and the output layer once each. With the GEMM weights in FP8, the layers' gathers carry
  // their GEMM weights at one byte and their norms at two; the embedding and the output layer stay in bf16.
  const auto [bf16, bf16_report] = gathers("");
  const auto [fp8, fp8_report] = gathers("--set workload.framework.fp8_param_gather=true");
  const auto& p = cs::model_presets().at("llama3-8b");
  cs::ModelParams m = p;
  const double layer = cs::layer_parameters(m), gemm = cs::layer_gemm_weights(m);
  const double ends = cs::embedding_parameters(m) + cs::head_parameters(m);
  const double expected = (2 * 2 * ((layer - gemm) * 2 + gemm) + ends * 2) / (2 * 2 * layer * 2 + ends * 2);
  ASSERT_GT(bf16, 0);
  EXPECT_NEAR(fp8 / bf16, expected, 0.01 * expected);
  EXPECT_LT(fp8_report["metrics"].value("peak_memory_bytes", 0.0),
            bf16_report["metrics"].value("peak_memory_bytes", 0.0));
}

TEST(Fp8ParamGather, NeedsAnFp8Recipe)
{
  const std::string q = cs::testing::src("scenarios/quickstart.yaml");
  auto bad = cs::testing::run_clustersim("validate " + q + " --set workload.framework.fp8_param_gather=true");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("fp8_param_gather keeps the GEMM weights in FP8: it needs an FP8 recipe"), std::string::npos)
      << bad.err;
  auto ok = cs::testing::run_clustersim(
      "validate " + q + " --set workload.framework.fp8_param_gather=true --set workload.model.fp8=tensorwise");
  EXPECT_EQ(ok.code, 0) << ok.err;
}
