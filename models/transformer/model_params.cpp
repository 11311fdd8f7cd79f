#include "models/transformer/model_params.hpp"

#include "models/transformer/attention_kind.hpp"
#include "models/transformer/attention_mla.hpp"
#include "models/transformer/fp8_recipe.hpp"
#include "models/transformer/mlp_kind.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace cs {

namespace {

// A dense transformer's shape and training precision; each family sets what differs from the GPT defaults.
struct Shape {
  int layers, hidden, ffn, heads, seq, vocab;
  const char* dtype;
  Recompute recompute;
  AttentionCore attention;
};

ModelParams dense(const Shape& s)
{
  ModelParams m;
  m.layers = s.layers;
  m.hidden = s.hidden;
  m.ffn = s.ffn;
  m.heads = s.heads;
  m.seq = s.seq;
  m.vocab = s.vocab;
  m.dtype = s.dtype;
  m.recompute = s.recompute;
  m.attention = s.attention;
  return m;
}

// The Llama family's choices, which later open models kept: grouped-query attention with `kv_heads` key/value heads,
// SwiGLU, RMSNorm, untied embeddings, no biases.
ModelParams llama_style(const Shape& s, int kv_heads)
{
  ModelParams m = dense(s);
  m.kv_heads = kv_heads;
  m.mlp = "swiglu";
  m.norm = Norm::RMSNORM;
  m.tie_embeddings = false;
  m.bias = false;
  return m;
}

// Megatron-LM (Narayanan et al., SC'21) Table 1: seq 2048, vocab 51,200, fp16, full recomputation, attention through
// memory (2021). BERT-large (Devlin et al., 2019): 24 layers, 1024 hidden, 16 heads, seq 512, vocab 30,522.
void add_gpt_and_bert(std::map<std::string, ModelParams>& p)
{
  auto gpt = [](int layers, int hidden, int heads) {
    return dense(
        {layers, hidden, 4 * hidden, heads, 2048, 51200, "fp16", Recompute::FULL, AttentionCore::MATERIALIZED});
  };
  p["gpt-1.7b"] = gpt(24, 2304, 24);
  p["gpt-7.5b"] = gpt(36, 4096, 32);
  p["gpt-39.1b"] = gpt(48, 8192, 64);
  p["gpt-145.6b"] = gpt(80, 12288, 96);
  p["gpt-529.6b"] = gpt(105, 20480, 128);
  ModelParams bert = dense({24, 1024, 4096, 16, 512, 30522, "fp16", Recompute::NONE, AttentionCore::MATERIALIZED});
  bert.causal = false; // an encoder attends to the whole sequence
  p["bert-large"] = bert;
}

void add_llama(std::map<std::string, ModelParams>& p)
{
  // Llama 2 (Touvron et al., 2023, Table 1 and section 2.2): SwiGLU, RMSNorm, untied embeddings, 4,096-token
  // context, 32,000-token vocabulary; the 70B model uses grouped-query attention with 8 key/value heads.
  auto llama = [](int layers, int hidden, int ffn, int heads, int kv_heads) {
    return llama_style({layers, hidden, ffn, heads, 4096, 32000, "bf16", Recompute::SELECTIVE, AttentionCore::FLASH},
                       kv_heads);
  };
  p["llama2-7b"] = llama(32, 4096, 11008, 32, 32);
  p["llama2-70b"] = llama(80, 8192, 28672, 64, 8);
}

// Llama 3 and 3.1 ("The Llama 3 Herd of Models", Table 3, and the Hugging Face configs): grouped-query attention with
// 8 key/value heads, SwiGLU, RMSNorm, untied embeddings over a 128,256-token vocabulary, no biases, 8,192-token
// sequences in pre-training. 8.03B, 70.6B and 405.9B parameters.
void add_llama3(std::map<std::string, ModelParams>& p)
{
  auto llama3 = [](int layers, int hidden, int ffn, int heads) {
    return llama_style({layers, hidden, ffn, heads, 8192, 128256, "bf16", Recompute::SELECTIVE, AttentionCore::FLASH},
                       8);
  };
  p["llama3-8b"] = llama3(32, 4096, 14336, 32);
  p["llama3-70b"] = llama3(80, 8192, 28672, 64);
  p["llama3.1-405b"] = llama3(126, 16384, 53248, 128);
}

// Qwen3 dense models (Qwen3 technical report, Table 1, and the Hugging Face configs): heads of 128 whatever the hidden
// size (64 x 128 = 8,192 queries over a 5,120 hidden in the 32B), QK-norm, 8 key/value heads, SwiGLU, RMSNorm, a
// 151,936-token vocabulary, untied embeddings in the 8B and 32B, no biases; 4,096-token sequences as Megatron-Bridge's
// recipes train them. 8.19B and 32.8B parameters.
void add_qwen3(std::map<std::string, ModelParams>& p)
{
  auto qwen3 = [](int layers, int hidden, int ffn, int heads) {
    ModelParams m =
        llama_style({layers, hidden, ffn, heads, 4096, 151936, "bf16", Recompute::SELECTIVE, AttentionCore::FLASH}, 8);
    m.head_dim = 128;
    m.qk_norm = true;
    return m;
  };
  p["qwen3-8b"] = qwen3(36, 4096, 12288, 32);
  p["qwen3-32b"] = qwen3(64, 5120, 25600, 64);
}

void add_mpt(std::map<std::string, ModelParams>& p)
{
  // MosaicML MPT (llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml): d_model x n_layers, n_heads, expansion
  // ratio 4 (GeLU), vocabulary 50,368, no biases (layernorm weight only), ALiBi instead of position embeddings,
  // tied embeddings, bf16, sequence 2048.
  auto mpt = [](int layers, int hidden, int heads) {
    ModelParams m =
        dense({layers, hidden, 4 * hidden, heads, 2048, 50368, "bf16", Recompute::NONE, AttentionCore::FLASH});
    m.bias = false;
    return m;
  };
  p["mpt-760m"] = mpt(24, 1536, 12);
  p["mpt-1b"] = mpt(24, 2048, 16);
  p["mpt-3b"] = mpt(32, 2560, 20);
  p["mpt-7b"] = mpt(32, 4096, 32);
  p["mpt-13b"] = mpt(40, 5120, 40);
  p["mpt-30b"] = mpt(48, 7168, 56);
  p["mpt-70b"] = mpt(80, 8192, 64);
}

// DeepSeek-V3 (DeepSeek-AI 2024, section 4.2 and its config.json; 671B in all, 37B active, the 14B MTP module apart):
// 61 layers, the first 3 dense (ffn 18,432), then 256 routed experts (ffn 2,048) top-8 and one shared expert; MLA with
// 128 heads (q_lora 1,536, kv_lora 512, heads of 128 + 64 rotary for queries and keys, 128 for values); a 129,280-token
// vocabulary, untied; 4,096-token sequences; recomputation of the RMSNorms and MLA's up projections (section 3.2.3).
// DeepSeek-V2-Lite (its config.json; 15.7B, 2.4B active): 27 layers, the first dense (ffn 10,944), 64 experts (ffn
// 1,408) top-6 and 2 shared; MLA with 16 heads and no query compression. Qwen3 MoE (Qwen3 technical report, Table 2,
// and the configs; 235B / 22B and 30.5B / 3.3B): every layer MoE, 128 experts top-8 without shared ones, heads of
// 128 with QK-norm and 4 key/value heads, a 151,936-token vocabulary, untied.
void add_frontier_moe(std::map<std::string, ModelParams>& p)
{
  auto deepseek = [](int layers, int hidden, int ffn, int heads, int vocab, const MlaParams& mla) {
    ModelParams m =
        llama_style({layers, hidden, ffn, heads, 4096, vocab, "bf16", Recompute::SELECTIVE, AttentionCore::FLASH}, 0);
    m.attention_kind = make_mla_attention(mla);
    return m;
  };
  ModelParams v3 = deepseek(61, 7168, 18432, 128, 129280, {1536, 512, 128, 64, 128});
  v3.moe = {256, 8, 2048, 1, 2048, 1, 3, 0};
  v3.recompute_modules = {"layernorm", "mla_up_proj"};
  p["deepseek-v3"] = v3;
  ModelParams lite = deepseek(27, 2048, 10944, 16, 102400, {0, 512, 128, 64, 128});
  lite.moe = {64, 6, 1408, 2, 1408, 1, 1, 0};
  p["deepseek-v2-lite"] = lite;
  auto qwen3_moe = [](int layers, int hidden, int ffn, int heads, int expert_ffn) {
    ModelParams m =
        llama_style({layers, hidden, ffn, heads, 4096, 151936, "bf16", Recompute::SELECTIVE, AttentionCore::FLASH}, 4);
    m.head_dim = 128;
    m.qk_norm = true;
    m.moe = {128, 8, expert_ffn, 0, 0, 1, 0, 0};
    return m;
  };
  p["qwen3-235b-a22b"] = qwen3_moe(94, 4096, 12288, 64, 1536);
  p["qwen3-30b-a3b"] = qwen3_moe(48, 2048, 6144, 32, 768);
}

// Mixture-of-experts models: SwiGLU experts, RMSNorm, untied embeddings, bf16. Parameter counts are checked against
// the published totals by a test.
void add_moe(std::map<std::string, ModelParams>& p)
{
  auto moe = [](int layers, int hidden, int ffn, int heads, int kv_heads, int seq, int vocab) {
    return llama_style({layers, hidden, ffn, heads, seq, vocab, "bf16", Recompute::SELECTIVE, AttentionCore::FLASH},
                       kv_heads);
  };
  // Mixtral of Experts (Jiang et al., 2024, Table 1): 8 experts, top-2, every layer; 46.7B and 141B in all.
  ModelParams mixtral = moe(32, 4096, 14336, 32, 8, 4096, 32000);
  mixtral.moe.experts = 8;
  mixtral.moe.top_k = 2;
  p["mixtral-8x7b"] = mixtral;
  ModelParams mixtral22 = moe(56, 6144, 16384, 48, 8, 4096, 32768);
  mixtral22.moe.experts = 8;
  mixtral22.moe.top_k = 2;
  p["mixtral-8x22b"] = mixtral22;
  // DeepSeekMoE 16B (Dai et al., 2024, section 5 and its config.json): 28 layers, the first dense (ffn 10944), then
  // 64 fine-grained routed experts (ffn 1408) with top-6 and 2 shared experts; 16.4B in all.
  ModelParams deepseek = moe(28, 2048, 10944, 16, 16, 4096, 102400);
  deepseek.moe = {64, 6, 1408, 2, 1408, 1, 1, 0};
  p["deepseek-moe-16b"] = deepseek;
  // Qwen2-57B-A14B (Qwen2 technical report, Table 1, and its config.json): 28 layers, 64 experts (ffn 2560), top-8,
  // one shared expert of ffn 20480, GQA with 4 KV heads; 57.4B in all (its small QKV biases are left out).
  ModelParams qwen = moe(28, 3584, 18944, 28, 4, 4096, 151936);
  qwen.moe = {64, 8, 2560, 1, 20480, 1, 0, 0};
  p["qwen2-57b-a14b"] = qwen;
  // Switch-Base-128 (Fedus et al., JMLR 2022, Table 9: 7.4B): d_model 768, d_ff 3072, 12 heads, 128 experts every
  // other FFN layer, top-1, capacity factor 1.25, ReLU MLP without biases. Here as a decoder-only stack of its 24
  // (12 + 12) layers, without the decoder's cross-attention (0.4% of the weights).
  ModelParams sw = dense({24, 768, 3072, 12, 512, 32128, "bf16", Recompute::NONE, AttentionCore::FLASH});
  sw.bias = false;
  sw.norm = Norm::RMSNORM;
  sw.moe = {128, 1, 3072, 0, 0, 2, 0, 1.25};
  p["switch-base-128"] = sw;
  add_frontier_moe(p);
}

} // namespace

const std::map<std::string, ModelParams>& model_presets()
{
  static const std::map<std::string, ModelParams> presets = [] {
    std::map<std::string, ModelParams> p;
    add_gpt_and_bert(p);
    add_llama(p);
    add_llama3(p);
    add_qwen3(p);
    add_mpt(p);
    add_moe(p);
    return p;
  }();
  return presets;
}

namespace {

// Ranges and bounds (docs/scenarios.md, "Bounds"): past the largest models trained, and small enough that the
// per-token and per-layer products stay exact.
void check_model_ranges(const ObjectReader& m, const ModelParams& model)
{
  m.require_positive("layers", model.layers);
  m.require_positive("hidden", model.hidden);
  m.require_positive("heads", model.heads);
  m.require_positive("seq", model.seq);
  m.require_positive("vocab", model.vocab);
  m.require_non_negative("ffn", model.ffn);
  m.require_non_negative("kv_heads", model.kv_heads);
  m.require_non_negative("head_dim", model.head_dim);
  m.require_at_most("head_dim", model.head_dim, 1 << 16);
  m.require_non_negative("mtp_depth", model.mtp_depth);
  m.require_at_most("mtp_depth", model.mtp_depth, 16);
  m.require_at_most("layers", model.layers, 100000);
  m.require_at_most("hidden", model.hidden, 1 << 20);
  m.require_at_most("ffn", model.ffn, 1 << 22);
  m.require_at_most("heads", model.heads, model.hidden);
  m.require_at_most("kv_heads", model.kv_heads, model.heads);
  m.require_at_most("seq", model.seq, 1 << 24);
  m.require_at_most("vocab", model.vocab, 1 << 24);
}

// A graph layer's `kernel:` map: `family` and the arguments make_kernel() takes, errors at the map.
Kernel read_layer_kernel(const ObjectReader& l, const YAML::Node& node)
{
  if (!node.IsMap())
    l.fail_at("kernel", "'kernel' must be a map with a family and its arguments");
  std::map<std::string, std::string> args;
  std::string family;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (!it->second.IsScalar())
      l.fail_at("kernel", "kernel argument '" + key + "' must be a scalar");
    (key == "family" ? family : args[key]) = it->second.Scalar();
  }
  try {
    return make_kernel(family, args);
  } catch (const std::invalid_argument& e) {
    l.fail_at("kernel", e.what());
  }
}

// A layer of a generic graph; names are unique and inputs refer to layers above it (so file order is a topological
// order).
void read_graph_layer(ObjectReader& l, GraphLayerParams& layer, const std::vector<GraphLayerParams>& earlier)
{
  l.required("name", layer.name, "layer name (unique)")
      .field("flops", layer.flops, "forward FLOPs per sample")
      .field("bytes", layer.bytes, "forward memory traffic per sample")
      .field("params", layer.params, "parameters")
      .field("activations", layer.activations, "output per sample: sent to the layers it feeds, kept for backward")
      .field("inputs", layer.inputs, "names of earlier layers it reads (none: the model's input)");
  auto kernel = l.raw("kernel", "map",
                      "one sample's forward as a kernel ({family: gemm-chain | mx-gemm | gemm | ..., its "
                      "arguments as in clustersim predict}); replaces flops and bytes");
  if (l.describing())
    return;
  if (kernel) {
    l.require(!layer.flops && !layer.bytes.value, "kernel",
              "layer '" + layer.name + "' gives flops or bytes and a kernel");
    layer.kernel = read_layer_kernel(l, *kernel);
    layer.flops = kernel_flops(*layer.kernel);
    layer.bytes.value = kernel_bytes(*layer.kernel);
  }
  l.require_non_negative("flops", layer.flops);
  l.require_non_negative("bytes", layer.bytes.value);
  l.require_non_negative("params", layer.params);
  l.require_non_negative("activations", layer.activations.value);
  l.require_at_most("flops", layer.flops, 1e21);
  l.require_at_most("params", layer.params, 1e13);
  if (!(layer.flops > 0) && !(layer.bytes.value > 0))
    l.fail_at("flops", "layer '" + layer.name + "' needs flops or bytes");
  for (const auto& other : earlier)
    if (other.name == layer.name)
      l.fail_at("name", "layer name '" + layer.name + "' is used twice");
  for (const auto& input : layer.inputs)
    if (std::none_of(earlier.begin(), earlier.end(), [&](const auto& e) { return e.name == input; }))
      l.fail_at("inputs", "input '" + input + "' of layer '" + layer.name + "' is not a layer defined above it");
}

// Megatron-Core's recompute modules that the layer model prices; the MoE and MLA ones are named apart so that a
// recipe that lists them is told why rather than told it misspelt them.
void check_recompute_modules(ObjectReader& m, const ModelParams& model)
{
  if (m.describing() || model.recompute_modules.empty())
    return;
  static const std::vector<std::string> priced{"core_attn", "layernorm", "mlp", "mla_up_proj"};
  static const std::vector<std::string> later{"moe_act", "moe", "shared_experts"};
  if (model.recompute != Recompute::SELECTIVE)
    m.fail_at("recompute_modules", "recompute_modules needs recompute: selective (full reruns the whole layer)");
  for (const auto& name : model.recompute_modules) {
    if (std::find(later.begin(), later.end(), name) != later.end())
      m.fail_at("recompute_modules", fmt::format("recompute module '{}' is not modelled yet (priced: core_attn, "
                                                 "layernorm, mlp, mla_up_proj)",
                                                 name));
    if (std::find(priced.begin(), priced.end(), name) == priced.end())
      m.fail_at("recompute_modules",
                fmt::format("unknown recompute module '{}' (expected core_attn, layernorm, mlp or mla_up_proj)", name));
    if (name == "mla_up_proj" && attention_kind_of(model).name() != "mla")
      m.fail_at("recompute_modules", "recompute module 'mla_up_proj' needs multi-head latent attention (model.mla)");
  }
}

// model.fp8: a registered recipe's name, or none.
void read_fp8_recipe(ObjectReader& m, ModelParams& model)
{
  std::vector<std::string> names{""};
  for (const auto& name : fp8_recipe_names())
    names.push_back(name);
  std::string recipe = model.fp8 ? model.fp8->name() : "";
  m.choice(
      "fp8", recipe, names,
      "FP8 training (Megatron-Core --fp8-recipe; empty = none): the layers' linear layers run their three GEMMs in "
      "FP8 with the recipe's quantisation, everything else in dtype. tensorwise (per-tensor current scaling, "
      "Megatron-Bridge FP8-CS), delayed (amax history), blockwise (DeepSeek-V3's 1 x 128 and 128 x 128 "
      "scales), mxfp8 (Blackwell's block-scaled tensor cores)");
  if (m.describing())
    return;
  model.fp8 = recipe.empty() ? nullptr : make_fp8_recipe(recipe);
  if (model.fp8 && model.dtype != "bf16" && model.dtype != "fp16")
    m.fail_at("fp8", fmt::format("an FP8 recipe keeps activations in bf16 or fp16, not {}", model.dtype));
}

} // namespace

const char* recompute_name(Recompute recompute)
{
  switch (recompute) {
  case Recompute::NONE:
    return "none";
  case Recompute::SELECTIVE:
    return "selective";
  case Recompute::FULL:
    return "full";
  }
  return "none";
}

Recompute recompute_from_name(const std::string& name)
{
  for (Recompute r : {Recompute::NONE, Recompute::SELECTIVE, Recompute::FULL})
    if (name == recompute_name(r))
      return r;
  throw std::invalid_argument("unknown recomputation '" + name + "' (none, selective or full)");
}

bool ModelParams::recomputes(const std::string& module) const
{
  if (recompute != Recompute::SELECTIVE)
    return false;
  if (recompute_modules.empty())
    return module == "core_attn";
  return std::find(recompute_modules.begin(), recompute_modules.end(), module) != recompute_modules.end();
}

void read_model(ObjectReader m, ModelParams& model)
{
  auto read_layer = [&model](ObjectReader& l, GraphLayerParams& layer) { read_graph_layer(l, layer, model.graph); };
  std::vector<std::string> preset_names{""};
  for (const auto& [name, preset] : model_presets())
    preset_names.push_back(name);
  m.choice(
      "preset", model.preset, preset_names,
      "start from a published configuration (Megatron-LM Table 1 GPTs, BERT-large, Llama 2 7B and 70B, Llama 3 8B "
      "and 70B, Llama 3.1 405B, Qwen3 8B and 32B, MosaicML MPT, Mixtral 8x7B and 8x22B, DeepSeek-MoE-16B, "
      "Qwen2-57B-A14B, Switch-Base-128, DeepSeek-V3, DeepSeek-V2-Lite, Qwen3-235B-A22B, Qwen3-30B-A3B); keys given "
      "override it");
  if (!m.describing() && !model.preset.empty()) {
    const std::string name = model.preset;
    model = model_presets().at(name);
    model.preset = name;
  }
  m.field("layers", model.layers, "transformer layers")
      .field("hidden", model.hidden, "hidden size")
      .field("ffn", model.ffn, "feed-forward inner size (0 = 4 x hidden)")
      .field("heads", model.heads, "attention (query) heads")
      .field("kv_heads", model.kv_heads, "key/value heads (0 = heads; fewer = grouped-query attention)")
      .field("head_dim", model.head_dim,
             "query, key and value width per head (0 = hidden / heads; Megatron's kv_channels): heads x head_dim "
             "need not be the hidden size (Qwen3-32B: 64 x 128 over 5,120)")
      .field("qk_norm", model.qk_norm, "an RMSNorm over each query and key head before attention (Qwen3, OLMo 2)")
      .field("seq", model.seq, "sequence length in tokens")
      .field("vocab", model.vocab, "vocabulary size")
      .choice("dtype", model.dtype, {"fp32", "tf32", "fp16", "bf16"},
              "activation, weight and compute type (FP8 training keeps bf16 activations: see fp8)")
      .choice("recompute", model.recompute,
              {{"none", Recompute::NONE}, {"selective", Recompute::SELECTIVE}, {"full", Recompute::FULL}},
              "activation recomputation")
      .field("recompute_modules", model.recompute_modules,
             "with recompute: selective, the modules whose forward reruns in backward instead of keeping its "
             "activations (Megatron-Core --recompute-modules): core_attn (materialised attention's scores; fused "
             "attention keeps none), layernorm (the norms' outputs), mlp (the MLP's inner activations), mla_up_proj "
             "(MLA's queries, keys and values, rebuilt from the latents); empty = core_attn")
      .choice(
          "attention", model.attention,
          {{"flash", AttentionCore::FLASH},
           {"triton", AttentionCore::TRITON},
           {"cudnn", AttentionCore::CUDNN},
           {"materialized", AttentionCore::MATERIALIZED}},
          "flash: fused attention (FlashAttention-2), scores never reach memory; triton: the same fused attention "
          "written in Triton (llm-foundry's attn_impl: triton for ALiBi models, 2023), slower; materialized: QK^T "
          "GEMM, softmax, dropout and PV GEMM through memory (Megatron-LM before FlashAttention); cudnn: cuDNN's fused "
          "attention, which Transformer Engine (Megatron-Core) runs on Hopper, about 1.6x FlashAttention-2 there")
      .choice("mlp", model.mlp, Registry<MlpKind>::instance().names(),
              "feed-forward block: gelu (up GEMM, GeLU, down GEMM) or swiglu (fused gate and up GEMM, SiLU-gated "
              "product, down GEMM)")
      .choice("norm", model.norm, {{"layernorm", Norm::LAYERNORM}, {"rmsnorm", Norm::RMSNORM}}, "normalisation layers")
      .field("tie_embeddings", model.tie_embeddings, "the output layer shares the input embedding's weights")
      .field("bias", model.bias, "linear layers and layernorms have biases (GPT, Megatron) or not (MPT, Llama)")
      .field("causal", model.causal, "causal (decoder) attention: half the score matrix is computed")
      .field("mtp_depth", model.mtp_depth,
             "multi-token prediction modules (DeepSeek-V3: 1; Megatron-Core --mtp-num-layers): each projects the "
             "hidden state with the next token's embedding, runs one more layer like the last, and adds a loss "
             "through the shared output layer, on the last pipeline stage")
      .list<GraphLayerParams>("graph", model.graph,
                              "a generic layer graph (layers with costs and inputs) that replaces the transformer; "
                              "branches run concurrently under policies.pipeline: graph-pipeline",
                              read_layer);
  read_attention_kind(m, model);
  read_fp8_recipe(m, model);
  // A preset's modules (DeepSeek-V3's) go with its selective recomputation: another recomputation given over it drops
  // them unless modules are given too.
  if (!m.describing() && model.recompute != Recompute::SELECTIVE && !m.has("recompute_modules"))
    model.recompute_modules.clear();
  check_recompute_modules(m, model);
  ObjectReader moe = m.child("moe", "mixture of experts: routed (and shared) experts replace the MLP in MoE layers");
  read_moe(moe, model.moe);
  m.finish();
  check_model_ranges(m, model);
  if (!m.describing() && model.heads % model.kv() != 0)
    m.fail_at("kv_heads", fmt::format("kv_heads ({}) must divide heads ({})", model.kv(), model.heads));
  if (!m.describing() && model.head_dim == 0 && model.hidden % model.heads != 0)
    m.fail_at("heads", fmt::format("hidden ({}) must be divisible by heads ({})", model.hidden, model.heads));
  if (!m.describing() && model.ffn == 0)
    model.ffn = 4 * model.hidden;
  check_moe(moe, model.moe, model.layers);
}

} // namespace cs
