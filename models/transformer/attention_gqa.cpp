// Multi-head and grouped-query attention (Vaswani et al., 2017; Ainslie et al., 2023): heads query heads and kv_heads
// key/value heads of head_dim each, one fused QKV projection, the attention core (fused flash-style, or the score
// GEMM, softmax, dropout and value GEMM of materialised attention with their layout copies) and the output projection.
#include "models/transformer/attention_kind.hpp"
#include "models/transformer/layer_kernels.hpp"

#include <fmt/format.h>

namespace cs {

namespace {

double head_size(const ModelParams& model)
{
  return model.head_dim > 0 ? double(model.head_dim) : double(model.hidden) / model.heads;
}

// Scores through memory (Megatron-LM before FlashAttention): batched QK^T, fused scale-mask-softmax, dropout (1-byte
// mask), batched PV; the context is permuted back to [s, b, h] by one copy.
void materialized_core(LayerKernels& b, double tokens, double heads, double kv_heads, double head_dim)
{
  const ModelParams& model = b.model();
  const auto& fw = b.shape().framework;
  const double e = b.element_bytes(), micro = b.shape().micro, s = model.seq;
  const double scores = micro * heads * s * s, q_bytes = tokens * heads * head_dim * e;
  b.forward("attn_scores_gemm", GemmKernel{s, s, head_dim, micro * heads, model.dtype});
  b.backward("attn_scores_gemm_dgrad", GemmKernel{s, head_dim, s, micro * heads, model.dtype});
  b.backward("attn_scores_gemm_dgrad_k", GemmKernel{head_dim, s, s, micro * heads, model.dtype});
  // baddbmm's 1/sqrt(d) scale is in the forward GEMM, but autograd applies it to each input gradient by a separate
  // multiply (derivatives.yaml: grad.bmm(...) * alpha): one pass over dQ and one over dK.
  b.backward("attn_scores_grad_scale", b.traffic("scale", 2 * q_bytes, 2 * q_bytes, 2 * q_bytes / e));
  // q, k and v are views split off the QKV output; the split's backward concatenates their gradients.
  b.backward("qkv_split_backward", MemcpyKernel{tokens * (heads + 2 * kv_heads) * head_dim * e, "d2d"});
  b.forward("attn_softmax", SoftmaxKernel{micro * heads * s, s, model.dtype});
  b.backward("attn_softmax_backward", SoftmaxKernel{1.5 * micro * heads * s, s, model.dtype});
  if (fw.dropout > 0) {
    b.forward("attn_dropout", b.traffic("dropout", scores * e, scores * (e + 1), scores));
    b.backward("attn_dropout_backward", b.traffic("dropout_backward", scores * (e + 1), scores * e, scores));
  }
  b.forward("attn_values_gemm", GemmKernel{s, head_dim, s, micro * heads, model.dtype});
  b.backward("attn_values_gemm_dgrad", GemmKernel{s, s, head_dim, micro * heads, model.dtype});
  b.backward("attn_values_gemm_dgrad_v", GemmKernel{s, head_dim, s, micro * heads, model.dtype});
  b.forward("context_permute", MemcpyKernel{tokens * heads * head_dim * e, "d2d"});
  b.backward("context_permute_backward", MemcpyKernel{tokens * heads * head_dim * e, "d2d"});
}

} // namespace

/** Grouped-query attention: multi-head attention when kv_heads = heads. */
class GroupedQueryAttention : public AttentionKind {
public:
  std::string name() const override { return "gqa"; }

  AttentionWidths widths(const ModelParams& model) const override
  {
    const double d = head_size(model), q = model.heads * d, kv = model.kv() * d;
    return {q, kv, kv, q};
  }
  double weights(const ModelParams& model) const override
  {
    const AttentionWidths w = widths(model);
    const double h = model.hidden;
    return h * (w.query + 2 * w.key) + w.output * h;
  }
  double norm_parameters(const ModelParams& model) const override
  {
    return model.qk_norm ? 2.0 * head_size(model) : 0.0;
  }
  double activation_units(const ModelParams& model) const override
  {
    // QK-norm keeps the queries and keys before their norms too.
    const AttentionWidths w = widths(model);
    const double units = AttentionKind::activation_units(model);
    return model.qk_norm ? units + 2.0 * (w.query + w.key) / model.hidden : units;
  }
  double biases(const ModelParams& model) const override
  {
    const AttentionWidths w = widths(model);
    return (w.query + 2 * w.key) + model.hidden;
  }
  void emit(LayerKernels& b) const override
  {
    const ModelParams& model = b.model();
    const double t = b.shape().parallel.tp, tokens = b.shape().tokens(model);
    const double heads = model.heads / t, kv_heads = model.kv() / t, head_dim = head_size(model);
    const double qkv_width = (heads + 2 * kv_heads) * head_dim;
    b.linear("qkv_gemm", tokens, qkv_width, model.hidden, model.bias);
    // The other linears hand their biases to the next fused (or unfused) kernel; QKV adds its own.
    if (model.bias && !b.shape().framework.linear_bias_in_gemm)
      b.forward("qkv_gemm_bias_add", b.traffic("bias_add", tokens * qkv_width * b.element_bytes(),
                                               tokens * qkv_width * b.element_bytes(), tokens * qkv_width));
    if (model.qk_norm) // one RMSNorm per query and key head (its rows are the tokens times the heads)
      b.rms_norm(tokens * (heads + kv_heads), head_dim, "qk_norm");
    if (model.position_embedding == PositionEmbedding::ROPE)
      b.rope(heads, kv_heads, head_dim);
    if (b.shape().framework.repeat_kv && kv_heads < heads) { // eager repeat_kv: expand, then a copy
      const double e = b.element_bytes(), kv = 2 * tokens * kv_heads * head_dim * e;
      const double all = 2 * tokens * heads * head_dim * e;
      b.forward("repeat_kv", b.traffic("repeat_kv", kv, all));
      b.backward("repeat_kv_backward", b.traffic("repeat_kv", all, kv, all / e)); // the copies' gradients summed
    }
    if (model.attention == AttentionCore::MATERIALIZED)
      materialized_core(b, tokens, heads, kv_heads, head_dim);
    else
      b.fused_attention(heads, kv_heads, head_dim);
    b.linear("attn_out_gemm", tokens, model.hidden, widths(model).output / t, model.bias);
  }
  double score_units(const ModelParams& model, bool dropout, double tp) const override
  {
    // Materialised attention keeps its scores, their softmax and dropout (5 a s / h); fused attention none.
    const double s = model.seq, h = model.hidden, a = model.heads;
    return model.attention != AttentionCore::MATERIALIZED ? 0.0 : (dropout ? 5.0 : 4.0) * a * s / (h * tp);
  }
  std::string tp_problem(const ModelParams& model, int tp) const override
  {
    if (model.heads % tp != 0)
      return fmt::format("tp = {} must divide the heads ({})", tp, model.heads);
    if (model.kv() % tp != 0) // Megatron splits key/value heads over the ranks too
      return fmt::format("tp = {} must divide the key/value heads ({})", tp, model.kv());
    return "";
  }
};

CS_REGISTER_ATTENTION_KIND(GroupedQueryAttention, "gqa",
                           "multi-head or grouped-query attention (heads, kv_heads, head_dim): the default");

} // namespace cs
