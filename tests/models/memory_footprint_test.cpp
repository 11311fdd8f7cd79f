#include "models/transformer/framework.hpp"
#include "models/transformer/memory_footprint.hpp"
#include "models/transformer/transformer.hpp"

#include "tests/test_models.hpp"

#include <gtest/gtest.h>

namespace {
// Attention through memory, as Korthikanti et al. count it.
cs::ModelParams gpt13b()
{
  cs::ModelParams m = cs::testing::model(24, 2048, 8192, 16, 2048, 51200, "bf16", "none");
  m.attention = cs::AttentionCore::MATERIALIZED;
  return m;
}
const cs::ModelParams kGpt13B = gpt13b();
// The loss's fp32 log-probabilities of one microbatch of `micro` samples.
double logits(const cs::ModelParams& m, double micro) { return 4.0 * m.seq * micro * m.vocab; }
} // namespace

TEST(MemoryFootprint, Gpt13BDataParallelByHand)
{
  // P parameters: 16 bytes each without ZeRO (2 weights + 2 gradients + 12 Adam state).
  const double P = cs::total_parameters(kGpt13B);
  cs::MemoryLayout l;
  l.parallel.dp = 16;
  l.bucket_bytes = 25.0 * 1048576;
  auto f = cs::transformer_memory(kGpt13B, 4, l);
  EXPECT_DOUBLE_EQ(f.parameters, 2 * P);
  EXPECT_DOUBLE_EQ(f.gradients, 2 * P);
  EXPECT_DOUBLE_EQ(f.optimizer, 12 * P);
  // Korthikanti et al.: s b h (34 + 5 a s / h) per layer = 2048 * 4 * 2048 * (34 + 80) bytes, 24 layers, and the
  // loss's log-probabilities.
  EXPECT_DOUBLE_EQ(f.activations, 24 * 2048.0 * 4 * 2048 * 114 + logits(kGpt13B, 4));
  EXPECT_DOUBLE_EQ(f.buffers, 25.0 * 1048576);
  EXPECT_NEAR(f.total() / 1e9, 16 * P / 1e9 + 45.9 + 1.678 + 0.026, 0.05); // ~69 GB: fits an 80 GB H100
  // Flash attention keeps no scores: 34 s b h per layer. Without dropout its two 1-byte masks go too: 32.
  cs::ModelParams flash = kGpt13B;
  flash.attention = cs::AttentionCore::FLASH;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(flash, 4, l).activations, 24 * 2048.0 * 4 * 2048 * 34 + logits(kGpt13B, 4));
  l.dropout = false;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(flash, 4, l).activations, 24 * 2048.0 * 4 * 2048 * 32 + logits(kGpt13B, 4));
  // FlashAttention in Triton is fused too: no scores either.
  cs::ModelParams triton = flash;
  triton.attention = cs::AttentionCore::TRITON;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(triton, 4, l).activations, cs::transformer_memory(flash, 4, l).activations);
}

TEST(MemoryFootprint, ZeroStagesShardOverDataParallelRanks)
{
  const double P = cs::total_parameters(kGpt13B);
  cs::MemoryLayout l;
  l.parallel.dp = 8;
  l.parallel.zero = 1;
  auto z1 = cs::transformer_memory(kGpt13B, 1, l);
  EXPECT_DOUBLE_EQ(z1.optimizer, 12 * P / 8);
  EXPECT_DOUBLE_EQ(z1.gradients, 2 * P);
  l.parallel.zero = 2;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(kGpt13B, 1, l).gradients, 2 * P / 8);
  l.parallel.zero = 3;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(kGpt13B, 1, l).parameters, 2 * P / 8);
}

TEST(MemoryFootprint, RecomputationAndInFlightMicrobatches)
{
  cs::MemoryLayout l;
  cs::ModelParams m = kGpt13B;
  const double sbh = 2048.0 * 1 * 2048;
  m.recompute = cs::Recompute::SELECTIVE;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(m, 1, l).activations, 24 * sbh * 34 + logits(m, 1));
  // Full recomputation keeps each layer's input (Korthikanti et al.'s 2 s b h) and, while the backward reruns one
  // layer, everything that layer keeps (34 + 5 a s / h = 114 s b h with materialised attention), once.
  m.recompute = cs::Recompute::FULL;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(m, 1, l).activations, 24 * sbh * 2 + sbh * 114 + logits(m, 1));
  // 1F1B's first stage of a 4-stage pipeline holds 4 microbatches of its 6 layers (and not the output layer); one
  // backward reruns a layer at a time.
  l.parallel.pp = 4;
  l.in_flight_microbatches = 4;
  EXPECT_DOUBLE_EQ(cs::transformer_memory(m, 1, l).activations, 6 * sbh * 2 * 4 + sbh * 114);
}

TEST(MemoryFootprint, TransformerEnginesFusedLossKeepsTheLogitsNotFp32Probabilities)
{
  // Unfused and Megatron-Core's native fused loss keep fp32 probabilities for the backward (4 bytes a logit);
  // Transformer Engine's kernels keep the bf16 logits and recompute from them (2), which the framework says.
  cs::MemoryLayout l;
  cs::ModelParams m = kGpt13B;
  m.recompute = cs::Recompute::FULL;
  const double fp32 = cs::transformer_memory(m, 1, l).activations;
  cs::FrameworkProfile fw;
  fw.cross_entropy_fusion = "native";
  EXPECT_DOUBLE_EQ(fw.cross_entropy_kept_bytes(2), 4.0);
  fw.cross_entropy_fusion = "te";
  l.loss_bytes_per_logit = fw.cross_entropy_kept_bytes(2);
  EXPECT_DOUBLE_EQ(l.loss_bytes_per_logit, 2.0);
  EXPECT_DOUBLE_EQ(fp32 - cs::transformer_memory(m, 1, l).activations, logits(m, 1) / 2);
}

TEST(MemoryFootprint, SwigluAndGroupedQueryAttentionActivationsByHand)
{
  // Llama 2 70B shape, one layer, micro-batch 1, no recomputation, tp 8, no sequence parallelism. In units of
  // s b h bytes: 10 replicated; split over 8: queries 2 + keys 2/8 + values 2/8 (8 of 64 heads) + projection
  // input 2 + SwiGLU 6 x 28672/8192; scores 5 a s / (h t).
  cs::ModelParams m = cs::model_presets().at("llama2-70b");
  m.layers = 1;
  m.recompute = cs::Recompute::NONE;
  m.attention = cs::AttentionCore::MATERIALIZED;
  cs::MemoryLayout l;
  l.parallel.tp = 8;
  const double s = 4096, h = 8192, sbh = s * h;
  const double split = 2 + 0.25 + 0.25 + 2 + 6 * 28672.0 / 8192;
  EXPECT_NEAR((cs::transformer_memory(m, 1, l).activations - logits(m, 1) / 8) /
                  (sbh * (10 + split / 8 + 5 * 64 * s / (h * 8))),
              1.0, 1e-12);
  // The untied output layer counts when one stage holds the whole model.
  l.parallel.tp = 1;
  const double with_head = cs::transformer_memory(m, 1, l).parameters;
  l.parallel.pp = 2;
  l.layers_on_device = 1;
  EXPECT_DOUBLE_EQ(with_head - cs::transformer_memory(m, 1, l).parameters, 32000.0 * 8192 * 2);
}

TEST(MemoryFootprint, CombinedOneFOneBHoldsOneLayerBeyondItsMicrobatches)
{
  // Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm) runs a forward layer beside a backward layer of
  // another microbatch and frees each backward layer after it: one layer's activations more than those in flight.
  cs::MemoryLayout l;
  l.parallel.dp = 16;
  l.parallel.pp = 2; // a stage without the loss, so that the layers alone are counted
  l.layers_on_device = 12;
  const auto plain = cs::transformer_memory(kGpt13B, 4, l);
  cs::FrameworkProfile overlapped = cs::testing::framework("megatron-core");
  overlapped.overlap_moe_expert_parallel_comm = true;
  cs::apply_framework(l, overlapped, kGpt13B.dtype);
  EXPECT_TRUE(l.pair_holds_a_layer);
  const auto paired = cs::transformer_memory(kGpt13B, 4, l);
  EXPECT_DOUBLE_EQ(paired.activations, plain.activations * 13.0 / 12.0);
  EXPECT_DOUBLE_EQ(paired.in_flight_microbatches, 1.0 + 1.0 / 12);
  EXPECT_DOUBLE_EQ(paired.total() - plain.total(), paired.activations - plain.activations);
}
