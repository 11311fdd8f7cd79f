// Multi-head latent attention: its weights, kernels, memory and recomputation, the frontier MoE presets' parameter
// counts, and the bad input it refuses.
#include "base/input_error.hpp"
#include "models/kernels/kernel.hpp"
#include "models/transformer/attention_kind.hpp"
#include "models/transformer/memory_footprint.hpp"
#include "models/transformer/model_params.hpp"
#include "models/transformer/transformer.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/test_support.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace {

double active_parameters(const cs::ModelParams& m)
{
  double active = cs::embedding_parameters(m) + cs::head_parameters(m);
  for (int l = 0; l < m.layers; ++l)
    active += cs::active_gemm_weights_at(m, l) + 2 * m.hidden + attention_kind_of(m).norm_parameters(m);
  return active;
}

// Loads and checks a scenario; its error as "F:line:col: message", or "".
std::string mla_error_of(const std::string& text)
{
  const auto path = cs::testing::write_temp("mla_bad.yaml", text);
  try {
    cs::check_scenario(cs::load_scenario(path.string(), {}));
  } catch (const cs::InputError& e) {
    std::string w = e.where();
    return w.rfind(path.string(), 0) == 0 ? "F" + w.substr(path.string().size()) : w;
  }
  return "";
}

const cs::NamedKernel* mla_kernel(const std::vector<cs::NamedKernel>& pass, const std::string& name)
{
  for (const auto& k : pass)
    if (k.name == name)
      return &k;
  return nullptr;
}

} // namespace

TEST(AttentionMla, FrontierMoePresetsHaveThePublishedParameterCounts)
{
  // Totals: DeepSeek-V3 671B (its report, the 14B MTP module apart), DeepSeek-V2-Lite 15.7B (model card),
  // Qwen3-235B-A22B 235B and Qwen3-30B-A3B 30.5B (Qwen3 report, Table 2): within 0.5%.
  // Active per token, published to two digits: within the rounding (half the last digit) plus 0.5%, each counted as its
  // source counts: DeepSeek's 37B and 2.4B leave out the input embedding (a lookup), Qwen's 22B and 3.3B include it.
  struct Row {
    const char* name;
    double total, active, half_digit;
    bool input_embedding;
  };
  const Row rows[] = {{"deepseek-v3", 671e9, 37e9, 0.5e9, false},
                      {"deepseek-v2-lite", 15.7e9, 2.4e9, 0.05e9, false},
                      {"qwen3-235b-a22b", 235e9, 22e9, 0.5e9, true},
                      {"qwen3-30b-a3b", 30.5e9, 3.3e9, 0.05e9, true}};
  for (const auto& r : rows) {
    const cs::ModelParams& m = cs::model_presets().at(r.name);
    EXPECT_NEAR(cs::total_parameters(m) / r.total, 1.0, 0.005) << r.name << ": " << cs::total_parameters(m);
    const double active = active_parameters(m) - (r.input_embedding ? 0.0 : double(m.vocab) * m.hidden);
    EXPECT_NEAR(active, r.active, r.half_digit + 0.005 * r.active) << r.name << ": " << active;
  }
}

TEST(AttentionMla, WeightsAreTheFiveProjectionsByHand)
{
  // DeepSeek-V3: q down 7168 x 1536, q up 1536 x 128 x 192, kv down 7168 x (512 + 64), kv up 512 x 128 x (128 + 128),
  // output 128 x 128 x 7168: 187.1M a layer.
  const cs::ModelParams& v3 = cs::model_presets().at("deepseek-v3");
  const auto& mla = cs::attention_kind_of(v3);
  EXPECT_EQ(mla.name(), "mla");
  const double expected = 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  EXPECT_DOUBLE_EQ(mla.weights(v3), expected);
  EXPECT_DOUBLE_EQ(mla.norm_parameters(v3), 1536 + 512);
  // V2-Lite has no query compression: the queries come straight from the hidden state.
  const cs::ModelParams& lite = cs::model_presets().at("deepseek-v2-lite");
  EXPECT_DOUBLE_EQ(cs::attention_kind_of(lite).weights(lite),
                   2048.0 * 16 * 192 + 2048.0 * 576 + 512.0 * 16 * 256 + 16.0 * 128 * 2048);
}

TEST(AttentionMla, KernelsSplitHeadsOverTpAndKeepTheDownProjectionsWhole)
{
  cs::ModelParams v3 = cs::model_presets().at("deepseek-v3");
  cs::LayerShape shape;
  shape.micro = 1;
  shape.parallel.tp = 8;
  const cs::PassKernels k = cs::layer_kernels(v3, shape);
  const double tokens = 4096;
  const auto* down = mla_kernel(k.forward, "mla_q_down_gemm");
  ASSERT_NE(down, nullptr);
  EXPECT_DOUBLE_EQ(std::get<cs::GemmKernel>(down->kernel).m, tokens); // duplicated: every token, full width
  EXPECT_DOUBLE_EQ(std::get<cs::GemmKernel>(down->kernel).n, 1536);
  const auto* up = mla_kernel(k.forward, "mla_kv_up_gemm");
  ASSERT_NE(up, nullptr);
  EXPECT_DOUBLE_EQ(std::get<cs::GemmKernel>(up->kernel).n, 16 * 256); // this rank's 16 heads' keys and values
  const auto* core = mla_kernel(k.forward, "attention");
  ASSERT_NE(core, nullptr);
  const auto& a = std::get<cs::AttentionKernel>(core->kernel);
  EXPECT_DOUBLE_EQ(a.heads, 16);
  EXPECT_DOUBLE_EQ(a.head_dim, 192);
  EXPECT_DOUBLE_EQ(a.value_dim(), 128);
  // Scores over 192, values over 128, half of them causal; backward three products over 192 and two over 128.
  EXPECT_DOUBLE_EQ(cs::kernel_flops(core->kernel), 2.0 * 16 * tokens * tokens * (192 + 128) / 2);
  const auto* back = mla_kernel(k.backward, "attention_backward");
  ASSERT_NE(back, nullptr);
  EXPECT_DOUBLE_EQ(cs::kernel_flops(back->kernel), 2.0 * 16 * tokens * tokens * (3 * 192 + 2 * 128) / 2);
  const auto* out = mla_kernel(k.forward, "attn_out_gemm");
  ASSERT_NE(out, nullptr);
  EXPECT_DOUBLE_EQ(std::get<cs::GemmKernel>(out->kernel).k, 16 * 128);
  // Sequence parallelism hands the down projections 1/tp of the tokens.
  shape.parallel.sequence_parallel = true;
  const auto sp = cs::layer_kernels(v3, shape);
  EXPECT_DOUBLE_EQ(std::get<cs::GemmKernel>(mla_kernel(sp.forward, "mla_q_down_gemm")->kernel).m, tokens / 8);
}

TEST(AttentionMla, EqualHeadSizesGiveTheUsualAttentionFlops)
{
  // A kernel without v_head_dim is the 4 b h s^2 d forward and 2.5x backward of every other attention.
  cs::AttentionKernel a{2, 32, 8, 4096, 4096, 128, true, "bf16"};
  EXPECT_DOUBLE_EQ(cs::kernel_flops(a), 4.0 * 2 * 32 * 4096 * 4096 * 128 / 2);
  a.backward = true;
  EXPECT_DOUBLE_EQ(cs::kernel_flops(a), 2.5 * 4.0 * 2 * 32 * 4096 * 4096 * 128 / 2);
}

TEST(AttentionMla, UpProjectionRecomputationTradesMemoryForTheUpGemms)
{
  cs::ModelParams v3 = cs::model_presets().at("deepseek-v3");
  v3.recompute_modules = {"layernorm"};
  cs::ModelParams up = v3;
  up.recompute_modules = {"layernorm", "mla_up_proj"};
  cs::MemoryLayout layout;
  layout.parallel.tp = 1;
  layout.parallel.pp = 16;
  layout.parallel.ep = 64;
  layout.parallel.dp = 64;
  const double kept = cs::transformer_memory(v3, 1, layout).activations;
  const double freed = cs::transformer_memory(up, 1, layout).activations;
  // Per layer and token: queries and keys of 128 x 192 and values of 128 x 128, 2 bytes each.
  const double per_layer_token = 2.0 * 128 * (192 + 192 + 128);
  const double layers = std::ceil(61.0 / 16);
  EXPECT_NEAR(kept - freed, per_layer_token * 4096 * layers, 1.0);
  // The extra FLOPs: the two up projections' forward again, 2 FLOPs a weight a token.
  const double up_weights = 1536.0 * 128 * 192 + 512.0 * 128 * 256;
  EXPECT_NEAR(cs::hardware_model_flops(up, 1) - cs::hardware_model_flops(v3, 1), 2 * up_weights * 4096 * 61, 1e3);
}

TEST(AttentionMla, BadShapesAreRefusedAtTheirKey)
{
  const std::string base = "name: t\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\nworkload:\n  kind: "
                           "transformer-training\n  batch: {global: 8, micro: 1}\n  model:\n    preset: "
                           "deepseek-v2-lite\n";
  EXPECT_EQ(mla_error_of(base), "");
  EXPECT_EQ(mla_error_of(base + "    mla: {kv_lora_rank: 4096}\n"),
            "F:8:25: kv_lora_rank (4096) exceeds the hidden size (2048)");
  EXPECT_EQ(mla_error_of(base + "    mla: {q_lora_rank: 2049}\n"),
            "F:8:24: q_lora_rank (2049) exceeds the hidden size (2048)");
  EXPECT_NE(mla_error_of(base + "    mla: {q_lora_rank: -1}\n").find("F:8:"), std::string::npos);
  EXPECT_NE(mla_error_of(base + "    mla: {v_head_dim: 0}\n").find("v_head_dim"), std::string::npos);
  EXPECT_EQ(mla_error_of(base + "    recompute: selective\n    recompute_modules: [mla_up_proj]\n"), "");
  const std::string llama = "name: t\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\nworkload:\n  kind: "
                            "transformer-training\n  batch: {global: 8, micro: 1}\n  model:\n    preset: llama3-8b\n";
  EXPECT_NE(mla_error_of(llama + "    recompute: selective\n    recompute_modules: [mla_up_proj]\n")
                .find("needs multi-head latent attention"),
            std::string::npos);
  // Tensor parallelism must divide the heads (16).
  EXPECT_NE(mla_error_of(base + "  parallel: {tp: 32}\n").find("tp"), std::string::npos);
}
