#include "models/transformer/model_params.hpp"

#include "models/transformer/attention_kind.hpp"
#include "models/transformer/fp8_recipe.hpp"
#include "models/transformer/mlp_kind.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace cs {

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
  static const std::vector<std::string> priced{"core_attn", "layernorm",      "mlp", "mla_up_proj",
                                               "moe_act",   "shared_experts", "moe", "op_sac"};
  static const std::vector<std::string> later{};
  if (model.recompute != Recompute::SELECTIVE)
    m.fail_at("recompute_modules", "recompute_modules needs recompute: selective (full reruns the whole layer)");
  for (const auto& name : model.recompute_modules) {
    if (std::find(later.begin(), later.end(), name) != later.end())
      m.fail_at("recompute_modules", fmt::format("recompute module '{}' is not modelled yet (priced: core_attn, "
                                                 "layernorm, mlp, mla_up_proj, moe_act, shared_experts, moe)",
                                                 name));
    if (std::find(priced.begin(), priced.end(), name) == priced.end())
      m.fail_at("recompute_modules",
                fmt::format("unknown recompute module '{}' (expected core_attn, layernorm, mlp, mla_up_proj, moe_act, "
                            "shared_experts, moe or op_sac)",
                            name));
    if (name == "mla_up_proj" && attention_kind_of(model).name() != "mla")
      m.fail_at("recompute_modules", "recompute module 'mla_up_proj' needs multi-head latent attention (model.mla)");
    // torchtitan's op-level policy is a whole policy of its own, for its dense blocks with fused attention.
    if (name == "op_sac" &&
        (model.recompute_modules.size() > 1 || model.moe.enabled() || attention_kind_of(model).name() == "mla" ||
         model.attention == AttentionCore::MATERIALIZED))
      m.fail_at("recompute_modules", "recompute module 'op_sac' (torchtitan's op-level selective checkpointing) is a "
                                     "policy of its own for dense blocks with fused attention: list it alone, "
                                     "without MoE layers or MLA");
  }
}

// recompute_method and recompute_num_layers qualify full recomputation; block recomputation of MoE layers is not
// priced (their experts' recomputation is per step).
void check_recompute_layers(ObjectReader& m, const ModelParams& model)
{
  if (m.describing())
    return;
  m.require_non_negative("recompute_num_layers", model.recompute_num_layers);
  m.require_at_most("recompute_num_layers", model.recompute_num_layers, model.layers);
  const bool qualified = model.recompute_num_layers > 0 || model.recompute_method == RecomputeMethod::BLOCK;
  if (qualified && model.recompute != Recompute::FULL)
    m.fail_at(m.has("recompute_num_layers") ? "recompute_num_layers" : "recompute_method",
              "recompute_method and recompute_num_layers qualify recompute: full");
  if (model.recompute_method == RecomputeMethod::BLOCK && model.recompute_num_layers == 0)
    m.fail_at("recompute_method", "recompute_method: block needs recompute_num_layers (the layers of each stage "
                                  "recomputed)");
  for (const char* module : {"moe_act", "shared_experts", "moe"})
    if (model.recomputes(module) && !model.moe.enabled())
      m.fail_at("recompute_modules", fmt::format("recompute module '{}' needs an MoE model (model.moe)", module));
  if (model.recomputes("shared_experts") && model.moe.shared_experts == 0)
    m.fail_at("recompute_modules", "recompute module 'shared_experts' needs shared experts (moe.shared_experts)");
  if (model.recompute_method == RecomputeMethod::BLOCK && model.moe.enabled())
    m.fail_at("recompute_method", "block recomputation of MoE layers is not modelled yet (uniform is)");
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

namespace {

// How tokens learn their positions (Megatron-Core --position-embedding-type).
void read_position_embedding(ObjectReader& m, ModelParams& model)
{
  m.choice("position_embedding", model.position_embedding,
           {{"learned", PositionEmbedding::LEARNED},
            {"rope", PositionEmbedding::ROPE},
            {"alibi", PositionEmbedding::ALIBI},
            {"none", PositionEmbedding::NONE}},
           "positions: learned (an absolute table added to the embedding, Megatron-Core's default), rope (rotary: "
           "every query and key head rotated before attention, one pass each way, or Megatron's unfused passes under "
           "framework.fused_rope: false; Llama, Qwen, Mixtral), alibi (a bias inside the attention kernel; MPT) or "
           "none; multi-head latent attention rotates its own rotary parts whatever this says");
}

// How activations are recomputed: the granularity, Megatron-Core's modules (selective) and which layers (full).
void read_recompute(ObjectReader& m, ModelParams& model)
{
  m.choice("recompute", model.recompute,
           {{"none", Recompute::NONE}, {"selective", Recompute::SELECTIVE}, {"full", Recompute::FULL}},
           "activation recomputation")
      .field("recompute_modules", model.recompute_modules,
             "with recompute: selective, the modules whose forward reruns in backward instead of keeping its "
             "activations (Megatron-Core --recompute-modules): core_attn (materialised attention's scores; fused "
             "attention keeps none), layernorm (the norms' outputs), mlp (the MLP's inner activations), mla_up_proj "
             "(MLA's queries, keys and values, rebuilt from the latents), moe_act (the routed experts' activation "
             "outputs), shared_experts (the shared experts' inner activations); or, alone, op_sac (torchtitan's "
             "op-level selective checkpointing: every matmul output but every second one and attention's kept, all "
             "else rerun); empty = core_attn")
      .choice("recompute_method", model.recompute_method,
              {{"uniform", RecomputeMethod::UNIFORM}, {"block", RecomputeMethod::BLOCK}},
              "with recompute: full, which layers (Megatron --recompute-method): uniform, every layer, checkpointed in "
              "groups of recompute_num_layers (one input kept a group); block, only the first recompute_num_layers "
              "layers of each virtual pipeline stage, the others keeping all their activations")
      .field("recompute_num_layers", model.recompute_num_layers,
             "with recompute: full, the group size (uniform) or the layers of each virtual stage recomputed (block; "
             "Megatron --recompute-num-layers); 0 = every layer on its own (uniform 1)");
}

} // namespace

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
  read_position_embedding(m, model);
  read_recompute(m, model);
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
  check_recompute_layers(m, model);
}

} // namespace cs
