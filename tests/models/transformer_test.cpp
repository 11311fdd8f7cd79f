#include "models/transformer/transformer.hpp"

#include "tests/test_models.hpp"

#include <gtest/gtest.h>

#include <set>

namespace {

using cs::testing::framework;

} // namespace

TEST(Transformer, LayerFlopsMatchTheMegatronCount)
{
  // Forward FLOPs of one layer with ffn = 4h: 24 b s h^2 + 4 b s^2 h (Narayanan et al. eq. 3 over 3 passes).
  // Megatron counts the whole score matrix, so compare with non-causal attention.
  cs::ModelParams m(cs::testing::model(1, 2048, 8192, 16, 2048, 51200, "bf16", "none"));
  m.causal = false;
  double flops = 0;
  for (const auto& k : cs::layer_forward_kernels(m, 4))
    if (k.name.find("gemm") != std::string::npos || k.name == "attention")
      flops += cs::kernel_flops(k.kernel);
  const double b = 4, s = 2048, h = 2048;
  EXPECT_DOUBLE_EQ(flops, 24 * b * s * h * h + 4 * b * s * s * h);
}

TEST(Transformer, ParameterCountOfGpt13B)
{
  cs::ModelParams m(cs::testing::model(24, 2048, 8192, 16, 2048, 51200, "bf16", "none"));
  // 12 l h^2 + V h, plus biases and norms: about 1.31e9.
  EXPECT_NEAR(cs::total_parameters(m), 12.0 * 24 * 2048 * 2048 + 51200.0 * 2048, 0.001 * cs::total_parameters(m));
}

TEST(Transformer, MegatronFormula)
{
  cs::ModelParams m(cs::testing::model(24, 2304, 9216, 24, 2048, 51200, "fp16", "full"));
  const double B = 512, s = 2048, l = 24, h = 2304, V = 51200;
  EXPECT_DOUBLE_EQ(cs::megatron_model_flops(m, B), 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)));
}

TEST(Transformer, BackwardDoesTwiceTheForwardGemmWorkAndFlashRecomputesTheScores)
{
  cs::ModelParams m(cs::testing::model(1, 1024, 4096, 8, 512, 1000, "bf16", "none"));
  cs::LayerShape shape;
  shape.micro = 2;
  const auto pass = cs::layer_kernels(m, shape);
  auto sum = [](const std::vector<cs::NamedKernel>& ks, auto pick) {
    double f = 0;
    for (const auto& k : ks)
      if (pick(k.kernel))
        f += cs::kernel_flops(k.kernel);
    return f;
  };
  auto gemm = [](const cs::Kernel& k) { return std::holds_alternative<cs::GemmKernel>(k); };
  auto attention = [](const cs::Kernel& k) { return std::holds_alternative<cs::AttentionKernel>(k); };
  EXPECT_DOUBLE_EQ(sum(pass.backward, gemm), 2 * sum(pass.forward, gemm));
  // FlashAttention-2's backward: five matmuls over the scores against the forward's two.
  EXPECT_DOUBLE_EQ(sum(pass.backward, attention), 2.5 * sum(pass.forward, attention));
  // The weight-gradient kernels are exactly half of the backward GEMM work.
  double weight = 0;
  for (const auto& k : pass.backward)
    if (k.weight && gemm(k.kernel))
      weight += cs::kernel_flops(k.kernel);
  EXPECT_DOUBLE_EQ(weight, sum(pass.forward, gemm));
  // Materialised attention: the same GEMM work, through batched score GEMMs (non-causal, so nothing is skipped).
  cs::ModelParams mat = m, flash = m;
  mat.attention = cs::AttentionCore::MATERIALIZED;
  mat.causal = flash.causal = false;
  auto matmul = [](const cs::Kernel& k) {
    return std::holds_alternative<cs::GemmKernel>(k) || std::holds_alternative<cs::AttentionKernel>(k);
  };
  EXPECT_DOUBLE_EQ(sum(cs::layer_forward_kernels(mat, 2), matmul), sum(cs::layer_forward_kernels(flash, 2), matmul));
}

TEST(Transformer, FrameworkProfilesChangeTheKernelsAroundTheMatmuls)
{
  cs::ModelParams m = cs::model_presets().at("gpt-7.5b");
  m.attention = cs::AttentionCore::FLASH;
  auto names = [](const std::vector<cs::NamedKernel>& ks) {
    std::set<std::string> out;
    for (const auto& k : ks)
      out.insert(k.name);
    return out;
  };
  cs::LayerShape megatron{1, {}, framework("megatron")}, fsdp{1, {}, framework("fsdp")};
  const auto a = cs::layer_kernels(m, megatron), b = cs::layer_kernels(m, fsdp);
  // Megatron fuses bias, dropout and the residual add; eager FSDP runs them apart (and without dropout).
  EXPECT_TRUE(names(a.forward).count("bias_dropout_add"));
  EXPECT_FALSE(names(b.forward).count("bias_dropout_add"));
  EXPECT_TRUE(names(b.forward).count("residual_add"));
  EXPECT_TRUE(names(b.forward).count("qkv_layout_copy"));
  // Megatron adds each gradient into fp32 main_grad (10 bytes per parameter); FSDP casts and pre-divides (14).
  EXPECT_TRUE(names(a.backward).count("main_grad_accumulate"));
  EXPECT_TRUE(names(b.backward).count("grad_cast_predivide"));
  EXPECT_FALSE(names(b.backward).count("main_grad_accumulate"));
  // The GEMM and attention work is the framework's no matter: the same FLOPs in both.
  auto matmul_flops = [](const std::vector<cs::NamedKernel>& ks) {
    double f = 0;
    for (const auto& k : ks)
      if (std::holds_alternative<cs::GemmKernel>(k.kernel) || std::holds_alternative<cs::AttentionKernel>(k.kernel))
        f += cs::kernel_flops(k.kernel);
    return f;
  };
  EXPECT_DOUBLE_EQ(matmul_flops(a.forward), matmul_flops(b.forward));
  // Per parameter the gradient handling moves 10 bytes (main_grad) against 14 (FSDP reducing in fp32: a cast, then
  // the division in fp32), or 4 when FSDP reduces in the model's dtype (the division in place).
  double grad_a = 0, grad_b = 0;
  for (const auto& k : a.backward)
    if (k.name == "main_grad_accumulate")
      grad_a += cs::kernel_bytes(k.kernel);
  for (const auto& k : b.backward)
    if (k.name == "grad_cast_predivide")
      grad_b += cs::kernel_bytes(k.kernel);
  EXPECT_DOUBLE_EQ(grad_a, 10 * cs::layer_parameters(m));
  EXPECT_DOUBLE_EQ(grad_b, 14 * cs::layer_parameters(m));
  fsdp.framework.reduce_dtype = "";
  double grad_c = 0;
  for (const auto& k : cs::layer_kernels(m, fsdp).backward)
    if (k.name == "grad_cast_predivide")
      grad_c += cs::kernel_bytes(k.kernel);
  EXPECT_DOUBLE_EQ(grad_c, 4 * cs::layer_parameters(m));
  // The optimizer step moves the profile's bytes per parameter.
  EXPECT_DOUBLE_EQ(cs::kernel_bytes(cs::optimizer_kernel(1e9, framework("fsdp"), cs::ModelParams{}).kernel), 52e9);
}

TEST(Transformer, MegatronsMaterialisedAttentionPaysItsQkvBiasSplitAndScaleKernels)
{
  // Megatron-LM 2021 (PyTorch 1.8): the QKV linear keeps its bias, and F.linear on a 3-D input adds it in a pass of
  // its own; q, k, v are views split off the QKV output, so backward concatenates their gradients; baddbmm's scale
  // reaches dQ and dK through separate multiplies.
  cs::ModelParams m = cs::model_presets().at("gpt-7.5b");
  m.attention = cs::AttentionCore::MATERIALIZED;
  auto bytes_of = [](const std::vector<cs::NamedKernel>& ks, const std::string& name) {
    double b = 0;
    for (const auto& k : ks)
      if (k.name == name)
        b += cs::kernel_bytes(k.kernel);
    return b;
  };
  const double micro = 4, tp = 2, tokens = micro * m.seq, width = 3.0 * m.hidden / tp, e = 2;
  cs::ParallelLayout two;
  two.tp = static_cast<int>(tp);
  cs::LayerShape megatron{static_cast<int>(micro), two, framework("megatron")},
      core{static_cast<int>(micro), two, framework("megatron-core")};
  const auto a = cs::layer_kernels(m, megatron), c = cs::layer_kernels(m, core);
  EXPECT_DOUBLE_EQ(bytes_of(a.forward, "qkv_gemm_bias_add"), 2 * tokens * width * e);   // read and write the output
  EXPECT_DOUBLE_EQ(bytes_of(c.forward, "qkv_gemm_bias_add"), 0);                        // in the GEMM epilogue
  EXPECT_DOUBLE_EQ(bytes_of(a.backward, "qkv_split_backward"), 2 * tokens * width * e); // dQ, dK, dV in; dQKV out
  EXPECT_DOUBLE_EQ(bytes_of(a.backward, "attn_scores_grad_scale"), 4 * tokens * width / 3 * e); // dQ, dK: in, out
  // Flash attention takes q, k, v whole: neither the split nor the scale runs apart.
  m.attention = cs::AttentionCore::FLASH;
  EXPECT_DOUBLE_EQ(bytes_of(cs::layer_kernels(m, megatron).backward, "qkv_split_backward"), 0);
  // A model without biases adds none.
  m.bias = false;
  EXPECT_DOUBLE_EQ(bytes_of(cs::layer_kernels(m, megatron).forward, "qkv_gemm_bias_add"), 0);
}

TEST(Transformer, AFusedLossMovesWhatItsKernelsPass)
{
  // Per bf16 logit, forward and backward: unfused 30 and 22 bytes (the profile's), Megatron-Core's jit-fused loss 26
  // and 14 (upcast with the max, exp and division in place, the sum; the scaling in place and the cast back),
  // Transformer Engine's Triton kernels 2 and 4 (one online-softmax read; the gradient read and written in place).
  cs::ModelParams m = cs::model_presets().at("llama3-8b");
  cs::LayerShape shape;
  shape.parallel.tp = 2;
  const double logits = shape.tokens(m) * m.vocab / 2.0;
  auto bytes = [&](const std::string& fusion) {
    shape.framework.cross_entropy_fusion = fusion;
    const auto head = cs::head_kernels(m, shape);
    double f = -1, b = -1;
    for (const auto& k : head.forward)
      if (k.name == "cross_entropy")
        f = cs::kernel_bytes(k.kernel) / logits;
    for (const auto& k : head.backward)
      if (k.name == "cross_entropy_backward")
        b = cs::kernel_bytes(k.kernel) / logits;
    return std::pair<double, double>{f, b};
  };
  EXPECT_EQ(bytes("none"), (std::pair<double, double>{30, 22}));
  EXPECT_EQ(bytes("native"), (std::pair<double, double>{26, 14}));
  EXPECT_EQ(bytes("te"), (std::pair<double, double>{2, 4}));
}

TEST(Transformer, TheOutputLayerComputesTheLossInFp32AndAddsTiedGradients)
{
  cs::ModelParams m = cs::model_presets().at("mpt-7b");
  ASSERT_TRUE(m.tie_embeddings);
  cs::LayerShape shape;
  shape.parallel.tp = 2;
  const auto head = cs::head_kernels(m, shape);
  bool tied = false;
  for (const auto& k : head.backward)
    if (k.name == "tied_grad_add") {
      tied = true;
      EXPECT_TRUE(k.weight);
      EXPECT_DOUBLE_EQ(cs::kernel_bytes(k.kernel), 3.0 * m.vocab / 2 * m.hidden * 2);
    }
  EXPECT_TRUE(tied);
  for (const auto& k : head.forward) {
    if (k.name == "cross_entropy") {
      EXPECT_EQ(cs::kernel_dtype(k.kernel), "fp32");
    }
  }
  // The embedding's backward zeroes its (vocabulary-parallel) gradient and scatters every token's row into it.
  const auto emb = cs::embedding_kernels(m, shape);
  ASSERT_EQ(emb.backward[0].name, "embedding_grad_zero");
  EXPECT_DOUBLE_EQ(cs::kernel_bytes(emb.backward[0].kernel), m.vocab / 2.0 * m.hidden * 2);
}

TEST(Transformer, Llama2PresetsHaveThePublishedParameterCounts)
{
  // Touvron et al. (2023) report 6.74B and 68.98B parameters (untied embeddings; biases here add < 0.05%).
  EXPECT_NEAR(cs::total_parameters(cs::model_presets().at("llama2-7b")) / 6.738e9, 1.0, 0.001);
  EXPECT_NEAR(cs::total_parameters(cs::model_presets().at("llama2-70b")) / 68.977e9, 1.0, 0.001);
  // Hand count of the 70B layer's GEMM weights: q and o are h x h, k and v are h x (8 heads x 128), three FFN
  // matrices h x f.
  const double h = 8192, f = 28672;
  EXPECT_DOUBLE_EQ(cs::layer_gemm_weights(cs::model_presets().at("llama2-70b")), 2 * h * h + 2 * h * 1024 + 3 * h * f);
}

TEST(Transformer, Llama3Qwen3AndNemotron4PresetsHaveThePublishedParameterCounts)
{
  // The Hugging Face checkpoints' parameter counts (Llama 3: "The Llama 3 Herd of Models" rounds them to 8B, 70B and
  // 405B; Qwen3 technical report, Table 1: 8.2B and 32.8B), within 0.5%.
  const std::pair<const char*, double> published[] = {{"llama3-8b", 8.030e9},
                                                      {"llama3-70b", 70.554e9},
                                                      {"llama3.1-405b", 405.853e9},
                                                      {"qwen3-8b", 8.191e9},
                                                      {"qwen3-32b", 32.762e9}};
  for (const auto& [name, count] : published)
    EXPECT_NEAR(cs::total_parameters(cs::model_presets().at(name)) / count, 1.0, 0.005) << name;
  // Nemotron-4's technical reports give embedding and other parameters: 3.2B + 12.5B and 9.4B + 331.6B.
  EXPECT_NEAR(cs::total_parameters(cs::model_presets().at("nemotron4-15b")) / 15.7e9, 1.0, 0.005);
  EXPECT_NEAR(cs::total_parameters(cs::model_presets().at("nemotron4-340b")) / 341.0e9, 1.0, 0.005);
  // Squared ReLU has no gate: two h x f matrices, as GeLU's.
  const auto& n = cs::model_presets().at("nemotron4-15b");
  EXPECT_DOUBLE_EQ(cs::layer_gemm_weights(n), 2.0 * 6144 * 6144 + 2.0 * 6144 * 1024 + 2.0 * 6144 * 24576);
  // Qwen3-32B: 64 query heads of 128 (8,192 wide) over a 5,120 hidden; QK-norm adds two 128-wide scales per layer.
  const auto& q = cs::model_presets().at("qwen3-32b");
  const double h = 5120, f = 25600;
  EXPECT_DOUBLE_EQ(cs::layer_gemm_weights(q), h * 8192 + 2 * h * 1024 + 8192 * h + 3 * h * f);
  cs::ModelParams no_norm = q;
  no_norm.qk_norm = false;
  EXPECT_DOUBLE_EQ(cs::layer_parameters(q) - cs::layer_parameters(no_norm), 2 * 128);
  cs::LayerShape shape;
  shape.parallel.tp = 8;
  const auto k = cs::layer_kernels(q, shape);
  bool saw_norm = false;
  for (const auto& n : k.forward) {
    if (n.name == "qkv_gemm") {
      const auto& g = std::get<cs::GemmKernel>(n.kernel);
      EXPECT_DOUBLE_EQ(g.n, (64 + 2 * 8) * 128 / 8.0); // this rank's queries, keys and values
      EXPECT_DOUBLE_EQ(g.k, h);
    }
    if (n.name == "attn_out_gemm") {
      EXPECT_DOUBLE_EQ(std::get<cs::GemmKernel>(n.kernel).k, 8192 / 8.0);
    }
    saw_norm = saw_norm || n.name == "qk_norm";
  }
  EXPECT_TRUE(saw_norm);
  // Megatron's FLOP count with kv_channels: the core's score and value products over 8,192-wide queries.
  cs::ModelParams one = q;
  one.layers = 1;
  one.vocab = 1;
  const double s = q.seq;
  EXPECT_NEAR(cs::megatron_model_flops(one, 1), s * (6 * cs::layer_gemm_weights(q) + 6 * s * 2 * 8192 + 4.5 * h),
              1e-6 * cs::megatron_model_flops(one, 1));
}

TEST(Transformer, GroupedQueryAttentionAndSwigluShapeTheKernels)
{
  const auto& m = cs::model_presets().at("llama2-70b");
  cs::LayerShape shape;
  shape.parallel.tp = 8;
  const auto layer = cs::layer_kernels(m, shape).forward;
  const auto& attn = layer;
  const auto& mlp = layer;
  auto find = [](const std::vector<cs::NamedKernel>& ks, const std::string& name) -> const cs::Kernel& {
    for (const auto& k : ks)
      if (k.name == name)
        return k.kernel;
    throw std::runtime_error("no kernel " + name);
  };
  // Per TP rank: 8 query heads and 1 key/value head of 128.
  EXPECT_DOUBLE_EQ(std::get<cs::GemmKernel>(find(attn, "qkv_gemm")).n, (8 + 2 * 1) * 128);
  const auto& a = std::get<cs::AttentionKernel>(find(attn, "attention"));
  EXPECT_DOUBLE_EQ(a.heads, 8);
  EXPECT_DOUBLE_EQ(a.kv_heads, 1);
  EXPECT_TRUE(std::get<cs::NormKernel>(find(attn, "layernorm")).rms);
  // SwiGLU: one fused gate-and-up GEMM twice the FFN width, then the down projection.
  EXPECT_DOUBLE_EQ(std::get<cs::GemmKernel>(find(mlp, "ffn_gate_up_gemm")).n, 2 * 28672 / 8);
  EXPECT_DOUBLE_EQ(std::get<cs::GemmKernel>(find(mlp, "ffn_down_gemm")).k, 28672 / 8);
  // The GEMMs of a layer do exactly 2 FLOPs per weight and token.
  double gemm_flops = 0;
  for (const auto& k : cs::layer_forward_kernels(m, 1))
    if (std::holds_alternative<cs::GemmKernel>(k.kernel))
      gemm_flops += cs::kernel_flops(k.kernel);
  EXPECT_NEAR(gemm_flops / (2.0 * m.seq * cs::layer_gemm_weights(m)), 1.0, 1e-12);
}

TEST(Transformer, ModelFlopsGeneraliseTheMegatronFormula)
{
  // A GPT shape described as "other" (ffn = 4h but spelled through the general path) gives the published value.
  cs::ModelParams gpt = cs::model_presets().at("gpt-7.5b");
  const double published = cs::megatron_model_flops(gpt, 512);
  cs::ModelParams wide = gpt;
  wide.ffn = 4 * gpt.hidden + 1; // leaves the formula's special case; one extra FFN column changes almost nothing
  EXPECT_NEAR(cs::megatron_model_flops(wide, 512) / published, 1.0, 1e-3);
  // Llama 2 7B, per token: 6 x GEMM weights x layers + 12 s h x layers + 4.5 V h.
  const auto& l = cs::model_presets().at("llama2-7b");
  const double h = 4096, s = 4096, per_token = 6 * 32 * (4 * h * h + 3 * h * 11008) + 12 * 32 * s * h + 4.5 * 32000 * h;
  EXPECT_NEAR(cs::megatron_model_flops(l, 1) / (s * per_token), 1.0, 1e-12);
}

TEST(Transformer, DropoutBackwardMovesFiveBytesPerElementAndGptIsCausal)
{
  // Issue 19: the dropout gradient reads the gradient (2 B) and the 1-byte mask and writes 2 B.
  cs::ModelParams m = cs::model_presets().at("gpt-1.7b");
  cs::LayerShape shape;
  shape.micro = 2;
  shape.framework = framework("megatron");
  const auto k = cs::layer_kernels(m, shape);
  const double scores = 2.0 * m.heads * m.seq * m.seq;
  bool seen = false;
  for (const auto& x : k.backward)
    if (x.name == "attn_dropout_backward") {
      seen = true;
      EXPECT_DOUBLE_EQ(cs::kernel_bytes(x.kernel), 5 * scores);
    }
  EXPECT_TRUE(seen);
  // GPT presets are causal: flash attention does half the score work (a key decides; BERT is not causal).
  EXPECT_TRUE(m.causal);
  EXPECT_FALSE(cs::model_presets().at("bert-large").causal);
  m.attention = cs::AttentionCore::FLASH;
  for (const auto& x : cs::layer_kernels(m, shape).forward)
    if (x.name == "attention") {
      EXPECT_DOUBLE_EQ(cs::kernel_flops(x.kernel), 4.0 * 2 * m.heads * m.seq * m.seq * (m.hidden / m.heads) / 2);
      EXPECT_FALSE(std::get<cs::AttentionKernel>(x.kernel).triton);
    }
  // Triton's fused attention: the same kernels and FLOPs, marked for its own efficiency.
  m.attention = cs::AttentionCore::TRITON;
  int marked = 0;
  for (const auto& pass : {cs::layer_kernels(m, shape).forward, cs::layer_kernels(m, shape).backward})
    for (const auto& x : pass)
      if (const auto* a = std::get_if<cs::AttentionKernel>(&x.kernel)) {
        EXPECT_TRUE(a->triton);
        ++marked;
      }
  EXPECT_EQ(marked, 2);
}
