#include "models/transformer/transformer.hpp"

#include <stdexcept>

namespace cs {

std::pair<std::vector<NamedKernel>, std::vector<NamedKernel>> layer_forward_blocks(const ModelParams& m, int micro,
                                                                                   int tp, bool sequence_parallel)
{
  const double tokens = double(micro) * m.seq;
  // Sequence parallelism (Korthikanti et al.): layernorms and residual adds run on this rank's 1/tp of the tokens.
  const double seq_tokens = sequence_parallel ? tokens / tp : tokens;
  const double h = m.hidden, f = m.ffn, s = m.seq, e = dtype_bytes(m.dtype), t = tp;
  const std::string& d = m.dtype;
  auto elementwise = [&](const char* name, double elements, double reads, double writes, double flops_each) {
    return NamedKernel{name,
                       BandwidthKernel{name, elements * reads * e, elements * writes * e, elements * flops_each, d}};
  };
  std::vector<NamedKernel> attn, mlp;
  const bool rms = m.norm == "rmsnorm";
  const double heads = m.heads / t, kv_heads = m.kv() / t, head_dim = h / m.heads;
  const double score_elements = double(micro) * heads * s * s;
  attn.push_back({"layernorm", NormKernel{seq_tokens, h, rms, d}});
  // Queries for every head, keys and values for each key/value head (grouped-query attention shares them).
  attn.push_back({"qkv_gemm", GemmKernel{tokens, (heads + 2 * kv_heads) * head_dim, h, 1, d}});
  if (m.attention == "materialized") {
    // Scores go through memory: batched QK^T, fused scale-mask-softmax, dropout (1-byte mask), batched PV.
    attn.push_back({"attn_scores_gemm", GemmKernel{s, s, head_dim, micro * heads, d}});
    attn.push_back({"attn_softmax", SoftmaxKernel{double(micro) * heads * s, s, d}});
    attn.push_back(NamedKernel{
        "attn_dropout", BandwidthKernel{"dropout", score_elements * e, score_elements * (e + 1), score_elements, d}});
    attn.push_back({"attn_values_gemm", GemmKernel{s, head_dim, s, micro * heads, d}});
  } else {
    attn.push_back({"attention", AttentionKernel{double(micro), heads, kv_heads, s, s, head_dim, false, d}});
  }
  attn.push_back({"attn_out_gemm", GemmKernel{tokens, h, h / t, 1, d}});
  attn.push_back(elementwise("residual_add", seq_tokens * h, 2, 1, 1));
  mlp.push_back({"layernorm", NormKernel{seq_tokens, h, rms, d}});
  if (m.mlp == "swiglu") {
    // Gate and up projections as one GEMM (as Megatron fuses them), then silu(gate) * up.
    mlp.push_back({"ffn_gate_up_gemm", GemmKernel{tokens, 2 * f / t, h, 1, d}});
    mlp.push_back(NamedKernel{
        "swiglu", BandwidthKernel{"swiglu", 2 * tokens * f / t * e, tokens * f / t * e, tokens * f / t * 6, d}});
  } else {
    mlp.push_back({"ffn_up_gemm", GemmKernel{tokens, f / t, h, 1, d}});
    mlp.push_back(elementwise("gelu", tokens * f / t, 1, 1, 8));
  }
  mlp.push_back({"ffn_down_gemm", GemmKernel{tokens, h, f / t, 1, d}});
  mlp.push_back(elementwise("residual_add", seq_tokens * h, 2, 1, 1));
  return {attn, mlp};
}

std::vector<NamedKernel> layer_forward_kernels(const ModelParams& m, int micro)
{
  auto [attn, mlp] = layer_forward_blocks(m, micro, 1);
  attn.insert(attn.end(), mlp.begin(), mlp.end());
  return attn;
}

std::vector<NamedKernel> head_forward_kernels(const ModelParams& m, int micro)
{
  const double tokens = double(micro) * m.seq;
  std::vector<NamedKernel> k;
  k.push_back({"layernorm", NormKernel{tokens, double(m.hidden), false, m.dtype}});
  k.push_back({"logits_gemm", GemmKernel{tokens, double(m.vocab), double(m.hidden), 1, m.dtype}});
  k.push_back({"cross_entropy", SoftmaxKernel{tokens, double(m.vocab), m.dtype}});
  return k;
}

std::vector<NamedKernel> backward_kernels(const std::vector<NamedKernel>& forward)
{
  std::vector<NamedKernel> out;
  for (const auto& nk : forward) {
    if (const auto* g = std::get_if<GemmKernel>(&nk.kernel)) {
      out.push_back({nk.name + "_dgrad", GemmKernel{g->m, g->k, g->n, g->batch, g->dtype}});
      out.push_back({nk.name + "_wgrad", GemmKernel{g->k, g->n, g->m, g->batch, g->dtype}});
    } else if (std::holds_alternative<AttentionKernel>(nk.kernel)) {
      out.push_back({nk.name + "_backward", nk.kernel}); // twice the forward work, as the Megatron count has it
      out.push_back({nk.name + "_backward", nk.kernel});
    } else {
      // A memory-bound op's backward reads the output gradient and a saved tensor and writes the input gradient:
      // three tensors where the forward moved two.
      Kernel k = nk.kernel;
      if (auto* b = std::get_if<BandwidthKernel>(&k)) {
        b->bytes_in *= 1.5;
        b->bytes_out *= 1.5;
        b->flops *= 1.5;
      } else if (auto* sm = std::get_if<SoftmaxKernel>(&k)) {
        sm->rows *= 1.5;
      } else if (auto* n = std::get_if<NormKernel>(&k)) {
        n->rows *= 1.5;
      } else if (auto* r = std::get_if<ReductionKernel>(&k)) {
        r->elements *= 1.5;
      }
      out.push_back({nk.name + "_backward", k});
    }
  }
  return out;
}

NamedKernel adam_kernel(double p) { return {"adam", BandwidthKernel{"adam", 16.0 * p, 14.0 * p, 10.0 * p, "fp32"}}; }

namespace {
double norm_parameters(const ModelParams& m) { return m.norm == "rmsnorm" ? m.hidden : 2.0 * m.hidden; }
double kv_width(const ModelParams& m) { return double(m.kv()) * m.hidden / m.heads; } // keys (or values) per token
} // namespace

double layer_gemm_weights(const ModelParams& m)
{
  const double h = m.hidden, f = m.ffn;
  return h * (h + 2 * kv_width(m)) + h * h + (m.mlp == "swiglu" ? 3.0 : 2.0) * h * f;
}

double layer_parameters(const ModelParams& m)
{
  const double h = m.hidden, f = m.ffn;
  const double biases = (h + 2 * kv_width(m)) + h + (m.mlp == "swiglu" ? 2 * f : f) + h;
  return layer_gemm_weights(m) + biases + 2 * norm_parameters(m);
}

double embedding_parameters(const ModelParams& m) { return double(m.vocab) * m.hidden + norm_parameters(m); }

double head_parameters(const ModelParams& m) { return m.tie_embeddings ? 0.0 : double(m.vocab) * m.hidden; }

double total_parameters(const ModelParams& m)
{
  return m.layers * layer_parameters(m) + embedding_parameters(m) + head_parameters(m);
}

double megatron_model_flops(const ModelParams& m, double global_batch)
{
  const double b = global_batch, s = m.seq, l = m.layers, h = m.hidden, v = m.vocab;
  if (m.mlp == "gelu" && m.kv() == m.heads && m.ffn == 4 * m.hidden) // the published formula, as printed
    return 72.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
  // The same count term by term: 6 FLOPs per GEMM weight and token (three passes), 12 s h per token and layer for
  // the score and value products, and the logits term as Megatron counts it (4.5 V h per token).
  return b * s * (6.0 * l * layer_gemm_weights(m) + 12.0 * l * s * h + 4.5 * v * h);
}

} // namespace cs
