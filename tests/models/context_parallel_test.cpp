// Context parallelism (workload.parallel.cp): what a rank of a CP group computes, holds and exchanges.
#include "models/transformer/memory_footprint.hpp"
#include "models/transformer/transformer.hpp"
#include "tests/test_models.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

namespace {

using cs::testing::clustersim;
using cs::testing::fresh_dir;
using cs::testing::read_json;
using cs::testing::src;

cs::ModelParams llama8b() { return cs::testing::llama_block(32, 4096, 14336, 32, 8192, 128256, "selective"); }

const cs::NamedKernel& cp_kernel_named(const std::vector<cs::NamedKernel>& ks, const std::string& name)
{
  for (const auto& k : ks)
    if (k.name == name)
      return k;
  throw std::runtime_error("no kernel " + name);
}

// The attention core's FLOPs in a pass: the ring's own masked block and its unmasked steps, or the one kernel.
double attention_flops(const std::vector<cs::NamedKernel>& pass)
{
  double flops = 0;
  for (const auto& k : pass)
    if (k.name == "attention" || k.name == "attention_ring_steps")
      flops += cs::kernel_flops(k.kernel);
  return flops;
}

cs::PassKernels layer(int cp, cs::CpComm comm)
{
  cs::LayerShape shape;
  shape.parallel.cp = cp;
  shape.parallel.cp_comm = comm;
  return cs::layer_kernels(llama8b(), shape);
}

} // namespace

TEST(ContextParallel, EachRankComputesItsShareOfTheSequence)
{
  const cs::PassKernels whole = layer(1, cs::CpComm::P2P);
  for (cs::CpComm comm : {cs::CpComm::P2P, cs::CpComm::ALLGATHER, cs::CpComm::A2A}) {
    const cs::PassKernels part = layer(4, comm);
    // The linear layers see a quarter of the tokens; attention does a quarter of the causal work.
    EXPECT_DOUBLE_EQ(std::get<cs::GemmKernel>(cp_kernel_named(part.forward, "qkv_gemm").kernel).m,
                     std::get<cs::GemmKernel>(cp_kernel_named(whole.forward, "qkv_gemm").kernel).m / 4);
    EXPECT_DOUBLE_EQ(attention_flops(part.forward), attention_flops(whole.forward) / 4);
  }
  // Ring attention: the rank's own block of a quarter of the keys under the causal mask, and the other three steps
  // unmasked over half of such a block (Transformer Engine's load-balanced ring); Ulysses all of the sequence for a
  // quarter of the heads.
  const cs::PassKernels ring_layer = layer(4, cs::CpComm::P2P);
  const auto own = std::get<cs::AttentionKernel>(cp_kernel_named(ring_layer.forward, "attention").kernel);
  EXPECT_DOUBLE_EQ(own.seq_kv, 8192.0 / 4);
  EXPECT_DOUBLE_EQ(own.batch, 1);
  EXPECT_TRUE(own.causal);
  const auto steps = std::get<cs::AttentionKernel>(cp_kernel_named(ring_layer.forward, "attention_ring_steps").kernel);
  EXPECT_DOUBLE_EQ(steps.batch, 3);
  EXPECT_DOUBLE_EQ(steps.seq_q, 8192.0 / 4);
  EXPECT_DOUBLE_EQ(steps.seq_kv, 8192.0 / 8);
  EXPECT_FALSE(steps.causal);
  const auto steps_back =
      std::get<cs::AttentionKernel>(cp_kernel_named(ring_layer.backward, "attention_ring_steps_backward").kernel);
  EXPECT_TRUE(steps_back.backward);
  const auto ulysses =
      std::get<cs::AttentionKernel>(cp_kernel_named(layer(4, cs::CpComm::A2A).forward, "attention").kernel);
  EXPECT_DOUBLE_EQ(ulysses.seq_q, 8192);
  EXPECT_DOUBLE_EQ(ulysses.heads, 32.0 / 4);
}

TEST(ContextParallel, RingStepsMergeTheirPartialOutputsAndGradients)
{
  // Llama 3 8B, seq 8192 over cp 4 (2,048 tokens a rank), 32 query heads and 8 key/value heads of 128, bf16: the
  // forward reads 2 cp - 1 = 7 partial outputs (2,048 x 32 x 128 x 2 bytes) with their fp32 log-sum-exps and writes
  // 4; the backward reads 7 query gradients and 2 x 4 key/value gradients (2,048 x 8 x 256 x 2 bytes) and writes 4 of
  // each.
  const auto ring = layer(4, cs::CpComm::P2P);
  const double out = 2048.0 * 32 * 128 * 2, lse = 2048.0 * 32 * 4, kv = 2048.0 * 8 * 256 * 2;
  EXPECT_DOUBLE_EQ(cs::kernel_bytes(cp_kernel_named(ring.forward, "ring_attention_out_merge").kernel),
                   (out + lse) * (7 + 4));
  EXPECT_DOUBLE_EQ(cs::kernel_bytes(cp_kernel_named(ring.backward, "ring_attention_grad_accumulate").kernel),
                   out * 7 + kv * 8 + (out + kv) * 4);
  // All-to-all (Ulysses) and all-gather attend in one kernel: nothing to merge.
  for (auto comm : {cs::CpComm::A2A, cs::CpComm::ALLGATHER})
    EXPECT_THROW(cp_kernel_named(layer(4, comm).forward, "ring_attention_out_merge"), std::runtime_error);
  EXPECT_THROW(cp_kernel_named(layer(1, cs::CpComm::P2P).forward, "ring_attention_out_merge"), std::runtime_error);
}

TEST(ContextParallel, ActivationsDivideByCpAndOptimizerStateShardsOverDpTimesCp)
{
  cs::MemoryLayout layout;
  layout.parallel.dp = 4;
  layout.parallel.zero = 1;
  const cs::MemoryFootprint one = cs::transformer_memory(llama8b(), 1, layout);
  layout.parallel.cp = 2;
  const cs::MemoryFootprint two = cs::transformer_memory(llama8b(), 1, layout);
  EXPECT_LT(two.activations, 0.55 * one.activations);
  EXPECT_NEAR(two.optimizer, one.optimizer / 2, 1.0);
  EXPECT_EQ(two.parameters, one.parameters);
}

TEST(ContextParallel, ARunReducesGradientsOverDpTimesCpAndReportsTheExchange)
{
  const std::string llama = src("scenarios/reference/nemo-llama3-8b-cp2-fp8.yaml");
  nlohmann::json report[2];
  const char* degrees[2] = {"--set workload.parallel.cp=1", "--set workload.parallel.cp=4"};
  for (int i = 0; i < 2; ++i) {
    const auto out = fresh_dir("cp" + std::to_string(i));
    auto r =
        clustersim("run " + llama + " --quiet --set workload.batch.global=16 --set workload.model.fp8= " + degrees[i] +
                   " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    report[i] = read_json(out / "report.json");
  }
  // The same eight GPUs reduce the same gradients (a group of dp 8, or of dp 2 x cp 4); cp 4 adds the ring's keys and
  // values: each of 4 ranks sends 3 times its 2,048 tokens x 2,048 key and value widths x 2 bytes forward, twice that
  // backward, in each of 32 layers of each of 8 microbatches, in each of 2 CP groups.
  const auto& a = report[0]["metrics"];
  const auto& b = report[1]["metrics"];
  const double ring = 4.0 * 3 * 2048 * 2048 * 2 * 3 * 32 * 8 * 2;
  EXPECT_NEAR((b["network_bytes"].get<double>() - a["network_bytes"].get<double>()) / ring, 1.0, 0.01);
  EXPECT_TRUE(report[1]["breakdown"].contains("cp_communication_s"));
  EXPECT_FALSE(report[0]["breakdown"].contains("cp_communication_s"));
  EXPECT_LT(b["peak_memory_bytes"].get<double>(), a["peak_memory_bytes"].get<double>());
  // Splitting each sample over 4 GPUs runs 4x fewer samples per replica at once: close to the same throughput.
  EXPECT_NEAR(b["tokens_per_s"].get<double>() / a["tokens_per_s"].get<double>(), 1.0, 0.15);
}

TEST(ContextParallel, BadDegreesAreRefusedWithAPosition)
{
  const std::string q = "validate " + src("scenarios/reference/nemo-llama3-8b-cp2-fp8.yaml") + " ";
  struct Case {
    std::string sets, words;
  } cases[] = {
      {"--set workload.parallel.cp=16", "does not divide the cluster's 8 GPUs"},
      {"--set workload.parallel.cp=2 --set workload.model.seq=8190", "equal chunks"},
      {"--set workload.parallel.cp=8 --set workload.parallel.cp_comm=a2a --set workload.model.kv_heads=4",
       "must divide the heads (32) and the key/value heads (4)"},
      {"--set workload.model.attention=materialized", "needs fused attention"},
      {"--set workload.parallel.cp=0", "cp"},
      {"--set workload.parallel.cp_comm=ring", "p2p"},
  };
  for (const Case& c : cases) {
    auto r = clustersim(q + c.sets);
    EXPECT_EQ(r.code, 2) << c.sets << "\n" << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.sets << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("--set:1:", 0), 0u) << r.err; // positioned at the override that breaks it
  }
}
