// The published model configurations `model.preset` names, each with its source.
#include "models/transformer/model_params.hpp"

#include "models/transformer/attention_mla.hpp"

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
// SwiGLU, RMSNorm, rotary position embedding, untied embeddings, no biases.
ModelParams llama_style(const Shape& s, int kv_heads)
{
  ModelParams m = dense(s);
  m.kv_heads = kv_heads;
  m.mlp = "swiglu";
  m.norm = Norm::RMSNORM;
  m.position_embedding = PositionEmbedding::ROPE;
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

// Nemotron-4 (Parmar et al., 2024, "Nemotron-4 15B Technical Report", section 2; NVIDIA, 2024, "Nemotron-4 340B
// Technical Report", section 2.1): squared-ReLU MLPs of 4 h, LayerNorm, rotary embedding, grouped-query attention with
// 8 key/value heads, no biases, untied embeddings over a 256,000-token vocabulary, 4,096-token sequences. 15B: 3.2B
// embedding and 12.5B other parameters; 340B: 9.4B and 331.6B. (Rotary embedding covers half of each head there; it
// is priced whole here.)
void add_nemotron(std::map<std::string, ModelParams>& p)
{
  auto nemotron = [](int layers, int hidden, int heads) {
    ModelParams m = dense(
        {layers, hidden, 4 * hidden, heads, 4096, 256000, "bf16", Recompute::SELECTIVE, AttentionCore::FLASH});
    m.kv_heads = 8;
    m.mlp = "squared-relu";
    m.position_embedding = PositionEmbedding::ROPE;
    m.tie_embeddings = false;
    m.bias = false;
    return m;
  };
  p["nemotron4-15b"] = nemotron(32, 6144, 48);
  p["nemotron4-340b"] = nemotron(96, 18432, 96);
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
    m.position_embedding = PositionEmbedding::ALIBI;
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
  sw.position_embedding = PositionEmbedding::NONE; // T5's relative bias, added inside attention
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
    add_nemotron(p);
    add_moe(p);
    return p;
  }();
  return presets;
}

} // namespace cs
