// Rotary position embedding: which models rotate their queries and keys, the bytes the fused and unfused rotations
// move on a tensor-parallel rank, and a position embedding the reader does not know refused at its key.
#include "models/kernels/kernel.hpp"
#include "models/transformer/transformer.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

namespace {

const cs::NamedKernel* rope_kernel(const std::vector<cs::NamedKernel>& kernels, const std::string& name)
{
  for (const auto& k : kernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

double rope_bytes(const cs::NamedKernel& k, bool in)
{
  const auto& b = std::get<cs::BandwidthKernel>(k.kernel);
  return in ? b.bytes_in : b.bytes_out;
}

} // namespace

TEST(Rope, TheRotaryPresetsRotateEveryQueryAndKeyHeadOnceEachWay)
{
  const auto& m = cs::model_presets().at("llama3-8b");
  ASSERT_EQ(m.position_embedding, cs::PositionEmbedding::ROPE);
  cs::LayerShape shape;
  shape.parallel.tp = 2;
  const auto k = cs::layer_kernels(m, shape);
  // One rank's 16 query heads and 4 key heads of 128, over the microbatch's 8,192 tokens, in bf16.
  const double elements = 8192.0 * (16 + 4) * 128, e = 2;
  const auto* f = rope_kernel(k.forward, "rope");
  const auto* b = rope_kernel(k.backward, "rope_backward");
  ASSERT_TRUE(f && b);
  EXPECT_DOUBLE_EQ(rope_bytes(*f, true), elements * e);
  EXPECT_DOUBLE_EQ(rope_bytes(*f, false), elements * e);
  EXPECT_DOUBLE_EQ(rope_bytes(*b, true), elements * e);
  EXPECT_DOUBLE_EQ(rope_bytes(*b, false), elements * e);
  // The rotation comes after the QKV projection and before the attention core.
  std::vector<std::string> order;
  for (const auto& n : k.forward)
    if (n.name == "qkv_gemm" || n.name == "rope" || n.name == "attention")
      order.push_back(n.name);
  EXPECT_EQ(order, (std::vector<std::string>{"qkv_gemm", "rope", "attention"}));
}

TEST(Rope, UnfusedTheRotateHalfPassesMoveElevenTimesTheElementsForwardAndTenBackward)
{
  const auto& m = cs::model_presets().at("qwen3-8b");
  cs::LayerShape fused, unfused;
  unfused.framework.fused_rope = false;
  const auto a = cs::layer_kernels(m, fused), b = cs::layer_kernels(m, unfused);
  const auto &fa = *rope_kernel(a.forward, "rope"), &fb = *rope_kernel(b.forward, "rope");
  EXPECT_DOUBLE_EQ(rope_bytes(fb, true) + rope_bytes(fb, false), 12 * rope_bytes(fa, true));
  EXPECT_DOUBLE_EQ(rope_bytes(fb, true), 6.5 * rope_bytes(fa, true));
  const auto &ba = *rope_kernel(a.backward, "rope_backward"), &bb = *rope_kernel(b.backward, "rope_backward");
  EXPECT_DOUBLE_EQ(rope_bytes(bb, true) + rope_bytes(bb, false), 10 * rope_bytes(ba, true));
}

TEST(Rope, OtherPositionsAndLatentAttentionAddNoRotationOfTheirOwn)
{
  for (const char* preset : {"gpt-1.7b", "mpt-7b", "switch-base-128"}) {
    const auto& m = cs::model_presets().at(preset);
    EXPECT_NE(m.position_embedding, cs::PositionEmbedding::ROPE) << preset;
    const auto k = cs::layer_kernels(m, cs::LayerShape{});
    EXPECT_EQ(rope_kernel(k.forward, "rope"), nullptr) << preset;
    EXPECT_EQ(rope_kernel(k.backward, "rope_backward"), nullptr) << preset;
  }
  EXPECT_EQ(cs::model_presets().at("mpt-7b").position_embedding, cs::PositionEmbedding::ALIBI);
  EXPECT_EQ(cs::model_presets().at("gpt-1.7b").position_embedding, cs::PositionEmbedding::LEARNED);
  for (const char* preset : {"mixtral-8x7b", "qwen3-30b-a3b", "llama2-70b"})
    EXPECT_EQ(cs::model_presets().at(preset).position_embedding, cs::PositionEmbedding::ROPE) << preset;
  // DeepSeek-V3's MLA rotates only its queries' and its shared key's rotary parts, in its own kernel.
  cs::LayerShape shape;
  shape.parallel.tp = 8;
  const auto mla = cs::layer_kernels(cs::model_presets().at("deepseek-v3"), shape);
  EXPECT_EQ(rope_kernel(mla.forward, "rope"), nullptr);
  EXPECT_NE(rope_kernel(mla.forward, "mla_rope"), nullptr);
}

TEST(Rope, AnUnknownPositionEmbeddingIsRefusedAtItsKey)
{
  const std::string head = "name: t\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\n"
                           "workload:\n  kind: transformer-training\n  batch: {global: 8, micro: 1}\n";
  const auto file =
      cs::testing::write_temp("rope_bad.yaml", head + "  model: {preset: llama3-8b, position_embedding: sideways}\n");
  const auto r = cs::testing::clustersim("validate " + file.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(":6:50:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("learned | rope | alibi | none"), std::string::npos) << r.err;
  const auto framework = cs::testing::write_temp(
      "rope_bad_fw.yaml",
      head + "  model: {preset: llama3-8b}\n  framework: {name: megatron-core, fused_rope: maybe}\n");
  const auto f = cs::testing::clustersim("validate " + framework.string());
  EXPECT_EQ(f.code, 2);
  EXPECT_NE(f.err.find(":7:48:"), std::string::npos) << f.err;
}
