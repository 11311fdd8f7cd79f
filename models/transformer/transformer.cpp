#include "models/transformer/transformer.hpp"

#include <stdexcept>

namespace cs {
namespace {

// Kernels of one pass under construction; `e` is the activation dtype's bytes.
struct Builder {
  const ModelParams& m;
  const LayerShape& shape;
  double e;
  PassKernels out;

  void fwd(const std::string& name, Kernel k) { out.forward.push_back({name, std::move(k), false}); }
  void bwd(const std::string& name, Kernel k, bool weight = false)
  {
    out.backward.push_back({name, std::move(k), weight});
  }
  Kernel traffic(const char* op, double in, double out_bytes, double flops = 0) const
  {
    return BandwidthKernel{op, in, out_bytes, flops, m.dtype};
  }
  // A linear layer x (tokens x k) times W (k x n): forward, its input gradient and its weight gradient (with the
  // bias gradient, a reduction over the tokens, when the layer has a bias).
  void linear(const std::string& name, double tokens, double n, double k, bool bias)
  {
    fwd(name, GemmKernel{tokens, n, k, 1, m.dtype});
    bwd(name + "_dgrad", GemmKernel{tokens, k, n, 1, m.dtype});
    bwd(name + "_wgrad", GemmKernel{k, n, tokens, 1, m.dtype}, true);
    if (bias)
      bwd(name + "_bias_grad", ReductionKernel{tokens * n, m.dtype}, true);
  }
  // A norm over `rows` x cols: its backward reads the input and the output gradient and writes the input gradient.
  void norm(double rows, double cols)
  {
    const bool rms = m.norm == "rmsnorm";
    fwd("layernorm", NormKernel{rows, cols, rms, m.dtype});
    bwd("layernorm_backward", NormKernel{1.5 * rows, cols, rms, m.dtype});
  }
  // The end of a block: bias, dropout and the residual add over `elements`, fused or not; in backward the dropout
  // gradient (gradient in, 1-byte mask in, gradient out) and the add of the branch's gradient into the residual's.
  void residual(double elements)
  {
    const auto& fw = shape.framework;
    const double mask = fw.dropout > 0 ? 1.0 : 0.0;
    if (fw.fused_bias_dropout_add) {
      fwd("bias_dropout_add", traffic("bias_dropout_add", 2 * elements * e, elements * (e + mask), 3 * elements));
    } else {
      if (m.bias)
        fwd("bias_add", traffic("bias_add", elements * e, elements * e, elements));
      if (fw.dropout > 0)
        fwd("dropout", traffic("dropout", elements * e, elements * (e + 1), elements));
      fwd("residual_add", traffic("residual_add", 2 * elements * e, elements * e, elements));
    }
    if (fw.dropout > 0)
      bwd("dropout_backward", traffic("dropout_backward", elements * (e + 1), elements * e, elements));
    bwd("residual_grad_add", traffic("residual_grad_add", 2 * elements * e, elements * e, elements));
  }
  void attention(double tokens, double heads, double kv_heads, double head_dim)
  {
    const auto& fw = shape.framework;
    const double micro = shape.micro, s = m.seq;
    if (m.attention == "materialized") {
      // Scores through memory (Megatron-LM before FlashAttention): batched QK^T, fused scale-mask-softmax,
      // dropout (1-byte mask), batched PV; the context is permuted back to [s, b, h] by one copy.
      const double scores = micro * heads * s * s, q_bytes = tokens * heads * head_dim * e;
      fwd("attn_scores_gemm", GemmKernel{s, s, head_dim, micro * heads, m.dtype});
      bwd("attn_scores_gemm_dgrad", GemmKernel{s, head_dim, s, micro * heads, m.dtype});
      bwd("attn_scores_gemm_dgrad_k", GemmKernel{head_dim, s, s, micro * heads, m.dtype});
      // baddbmm's 1/sqrt(d) scale is in the forward GEMM, but autograd applies it to each input gradient by a
      // separate multiply (derivatives.yaml: grad.bmm(...) * alpha): one pass over dQ and one over dK.
      bwd("attn_scores_grad_scale", traffic("scale", 2 * q_bytes, 2 * q_bytes, 2 * q_bytes / e));
      // q, k and v are views split off the QKV output; the split's backward concatenates their gradients.
      bwd("qkv_split_backward", MemcpyKernel{tokens * (heads + 2 * kv_heads) * head_dim * e, "d2d"});
      fwd("attn_softmax", SoftmaxKernel{micro * heads * s, s, m.dtype});
      bwd("attn_softmax_backward", SoftmaxKernel{1.5 * micro * heads * s, s, m.dtype});
      if (fw.dropout > 0) {
        fwd("attn_dropout", traffic("dropout", scores * e, scores * (e + 1), scores));
        bwd("attn_dropout_backward", traffic("dropout_backward", scores * (e + 1), scores * e, scores));
      }
      fwd("attn_values_gemm", GemmKernel{s, head_dim, s, micro * heads, m.dtype});
      bwd("attn_values_gemm_dgrad", GemmKernel{s, s, head_dim, micro * heads, m.dtype});
      bwd("attn_values_gemm_dgrad_v", GemmKernel{s, head_dim, s, micro * heads, m.dtype});
      fwd("context_permute", MemcpyKernel{tokens * heads * head_dim * e, "d2d"});
      bwd("context_permute_backward", MemcpyKernel{tokens * heads * head_dim * e, "d2d"});
      return;
    }
    const double qkv_bytes = tokens * (heads + 2 * kv_heads) * head_dim * e;
    if (fw.attention_layout_copies) {
      fwd("qkv_layout_copy", MemcpyKernel{qkv_bytes, "d2d"});
      bwd("dqkv_layout_copy", MemcpyKernel{qkv_bytes, "d2d"});
    }
    const bool triton = m.attention == "triton";
    fwd("attention", AttentionKernel{micro, heads, kv_heads, s, s, head_dim, m.causal, m.dtype, false, triton});
    bwd("attention_backward", AttentionKernel{micro, heads, kv_heads, s, s, head_dim, m.causal, m.dtype, true, triton});
  }
  void mlp(double tokens, double ffn)
  {
    const auto& fw = shape.framework;
    if (m.mlp == "swiglu") { // gate and up as one GEMM (as Megatron fuses them), then silu(gate) * up
      linear("ffn_gate_up_gemm", tokens, 2 * ffn, m.hidden, m.bias);
      fwd("swiglu", traffic("swiglu", 2 * tokens * ffn * e, tokens * ffn * e, 6 * tokens * ffn));
      bwd("swiglu_backward", traffic("swiglu_backward", 3 * tokens * ffn * e, 2 * tokens * ffn * e, 8 * tokens * ffn));
    } else {
      linear("ffn_up_gemm", tokens, ffn, m.hidden, m.bias);
      const double x = tokens * ffn;
      if (fw.fused_bias_gelu || !m.bias) {
        fwd("gelu", traffic("gelu", x * e, x * e, 8 * x));
      } else {
        fwd("bias_add", traffic("bias_add", x * e, x * e, x));
        fwd("gelu", traffic("gelu", x * e, x * e, 8 * x));
      }
      bwd("gelu_backward", traffic("gelu_backward", 2 * x * e, x * e, 12 * x));
    }
    linear("ffn_down_gemm", tokens, m.hidden, ffn, m.bias);
  }
  // What the framework does with a layer's fresh weight gradients every microbatch.
  void gradient_handling(double params)
  {
    const auto& fw = shape.framework;
    if (fw.grad_accumulation == "fp32") // main_grad += grad: read both, write fp32
      bwd("main_grad_accumulate", BandwidthKernel{"grad_accumulate", params * (e + 4), params * 4, params, "fp32"},
          true);
    if (fw.grad_cast_predivide) { // FSDP: cast the unsharded gradient to the reduce dtype (if it differs), then
                                  // divide it in place before reducing
      const std::string rd = fw.reduce_dtype_for(m.dtype);
      const double r = dtype_bytes(rd), cast = rd != m.dtype ? params * (e + r) : 0.0;
      bwd("grad_cast_predivide",
          BandwidthKernel{"grad_cast", cast * e / (e + r) + params * r, cast * r / (e + r) + params * r, params, rd},
          true);
    }
  }
};

double kv_width(const ModelParams& m) { return double(m.kv()) * m.hidden / m.heads; } // keys (or values) per token
// The dense MLP's weights and biases (what an MoE layer replaces).
double dense_mlp_parameters(const ModelParams& m)
{
  const double h = m.hidden, f = m.ffn;
  const double weights = (m.mlp == "swiglu" ? 3.0 : 2.0) * h * f;
  return weights + (m.bias ? (m.mlp == "swiglu" ? 2 * f : f) + h : 0.0);
}
double norm_parameters(const ModelParams& m) { return m.norm == "rmsnorm" || !m.bias ? m.hidden : 2.0 * m.hidden; }

} // namespace

PassKernels layer_kernels(const ModelParams& m, const LayerShape& shape)
{
  Builder b{m, shape, dtype_bytes(m.dtype), {}};
  const double t = shape.parallel.tp, tokens = double(shape.micro) * m.seq;
  // Sequence parallelism (Korthikanti et al.): layernorms and residual adds run on this rank's 1/tp of the tokens.
  const double seq_tokens = shape.parallel.sp() ? tokens / t : tokens;
  const double heads = m.heads / t, kv_heads = m.kv() / t, head_dim = double(m.hidden) / m.heads;
  b.norm(seq_tokens, m.hidden);
  const double qkv_width = (heads + 2 * kv_heads) * head_dim;
  b.linear("qkv_gemm", tokens, qkv_width, m.hidden, m.bias);
  // The other linears hand their biases to the next fused (or unfused) kernel; QKV adds its own.
  if (m.bias && !shape.framework.linear_bias_in_gemm)
    b.fwd("qkv_gemm_bias_add",
          b.traffic("bias_add", tokens * qkv_width * b.e, tokens * qkv_width * b.e, tokens * qkv_width));
  b.attention(tokens, heads, kv_heads, head_dim);
  b.linear("attn_out_gemm", tokens, m.hidden, m.hidden / t, m.bias);
  b.residual(seq_tokens * m.hidden);
  b.norm(seq_tokens, m.hidden);
  if (shape.mlp)
    b.mlp(tokens, m.ffn / t);
  b.residual(seq_tokens * m.hidden);
  b.gradient_handling((shape.mlp ? layer_parameters(m) : layer_parameters(m) - dense_mlp_parameters(m)) / t);
  return std::move(b.out);
}

PassKernels expert_mlp_kernels(const ModelParams& m, double tokens, double ffn, const FrameworkProfile& framework)
{
  ModelParams plain = m;
  plain.bias = false;
  LayerShape shape;
  shape.framework = framework;
  Builder b{plain, shape, dtype_bytes(m.dtype), {}};
  b.mlp(tokens, ffn);
  b.gradient_handling((m.mlp == "swiglu" ? 3.0 : 2.0) * m.hidden * ffn);
  return std::move(b.out);
}

PassKernels head_kernels(const ModelParams& m, const LayerShape& shape)
{
  Builder b{m, shape, dtype_bytes(m.dtype), {}};
  const double t = shape.parallel.tp, tokens = double(shape.micro) * m.seq, vocab = m.vocab / t;
  b.norm(tokens, m.hidden);
  b.linear("logits_gemm", tokens, vocab, m.hidden, false);
  const auto& fw = shape.framework;
  b.fwd("cross_entropy",
        BandwidthKernel{"cross_entropy", tokens * vocab * fw.cross_entropy_forward_bytes / 2,
                        tokens * vocab * fw.cross_entropy_forward_bytes / 2, 5 * tokens * vocab, "fp32"});
  b.bwd("cross_entropy_backward",
        BandwidthKernel{"cross_entropy", tokens * vocab * fw.cross_entropy_backward_bytes / 2,
                        tokens * vocab * fw.cross_entropy_backward_bytes / 2, 2 * tokens * vocab, "fp32"});
  if (m.tie_embeddings) // the logits' weight gradient is added into the embedding's
    b.bwd("tied_grad_add", b.traffic("tied_grad_add", 2 * vocab * m.hidden * b.e, vocab * m.hidden * b.e), true);
  b.gradient_handling(head_parameters(m) / t);
  return std::move(b.out);
}

PassKernels embedding_kernels(const ModelParams& m, const LayerShape& shape)
{
  Builder b{m, shape, dtype_bytes(m.dtype), {}};
  const double t = shape.parallel.tp, tokens = double(shape.micro) * m.seq, rows = tokens * m.hidden;
  b.fwd("embedding_lookup", b.traffic("embedding_lookup", rows * b.e, rows * b.e));
  // The dense gradient of the (vocab-parallel) table is zeroed, then every token's gradient row is added into it.
  b.bwd("embedding_grad_zero", b.traffic("memset", 0, m.vocab / t * m.hidden * b.e), true);
  b.bwd("embedding_grad_scatter_add", b.traffic("scatter_add", 2 * rows * b.e, rows * b.e, rows), true);
  b.gradient_handling(embedding_parameters(m) / t);
  return std::move(b.out);
}

std::vector<NamedKernel> layer_forward_kernels(const ModelParams& m, int micro)
{
  LayerShape shape;
  shape.micro = micro;
  return layer_kernels(m, shape).forward;
}

NamedKernel optimizer_kernel(double p, const FrameworkProfile& fw)
{
  const double bytes = fw.optimizer_bytes_per_parameter * p;
  // Roughly 4 parts read to 3 written (fp32 master weight, momentum and variance read and written, gradient read).
  return {"adam", BandwidthKernel{"adam", bytes * 4 / 7, bytes * 3 / 7, fw.optimizer_flops_per_parameter * p, "fp32"}};
}

double layer_gemm_weights(const ModelParams& m)
{
  const double h = m.hidden, f = m.ffn;
  return h * (h + 2 * kv_width(m)) + h * h + (m.mlp == "swiglu" ? 3.0 : 2.0) * h * f;
}

double layer_parameters(const ModelParams& m)
{
  const double h = m.hidden, f = m.ffn;
  const double biases = m.bias ? (h + 2 * kv_width(m)) + h + (m.mlp == "swiglu" ? 2 * f : f) + h : 0.0;
  return layer_gemm_weights(m) + biases + 2 * norm_parameters(m);
}

double layer_parameters_at(const ModelParams& m, int l)
{
  if (!is_moe_layer(m.moe, l))
    return layer_parameters(m);
  return layer_parameters(m) - dense_mlp_parameters(m) + router_parameters(m) + routed_expert_parameters_at(m, l) +
         shared_expert_parameters(m);
}

double routed_expert_parameters_at(const ModelParams& m, int l)
{
  return is_moe_layer(m.moe, l) ? m.moe.experts * expert_parameters(m) : 0.0;
}

double active_gemm_weights_at(const ModelParams& m, int l)
{
  if (!is_moe_layer(m.moe, l))
    return layer_gemm_weights(m);
  const double dense_mlp = (m.mlp == "swiglu" ? 3.0 : 2.0) * double(m.hidden) * m.ffn;
  return layer_gemm_weights(m) - dense_mlp + router_parameters(m) + m.moe.top_k * expert_parameters(m) +
         shared_expert_parameters(m);
}

double embedding_parameters(const ModelParams& m) { return double(m.vocab) * m.hidden + norm_parameters(m); }

double head_parameters(const ModelParams& m) { return m.tie_embeddings ? 0.0 : double(m.vocab) * m.hidden; }

double total_parameters(const ModelParams& m)
{
  double layers = 0;
  for (int l = 0; l < m.layers; ++l)
    layers += layer_parameters_at(m, l);
  return layers + embedding_parameters(m) + head_parameters(m);
}

double megatron_model_flops(const ModelParams& m, double global_batch)
{
  const double b = global_batch, s = m.seq, l = m.layers, h = m.hidden, v = m.vocab;
  if (m.mlp == "gelu" && m.kv() == m.heads && m.ffn == 4 * m.hidden && !m.moe.enabled()) // as printed
    return 72.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
  if (m.moe.enabled()) { // the weights a token goes through: the router, its top_k experts, the shared ones
    double weights = 0;
    for (int i = 0; i < m.layers; ++i)
      weights += active_gemm_weights_at(m, i);
    return b * s * (6.0 * weights + 12.0 * l * s * h + 4.5 * v * h);
  }
  // The same count term by term: 6 FLOPs per GEMM weight and token (three passes), 12 s h per token and layer for
  // the score and value products, and the logits term as Megatron counts it (4.5 V h per token).
  return b * s * (6.0 * l * layer_gemm_weights(m) + 12.0 * l * s * h + 4.5 * v * h);
}

double hardware_model_flops(const ModelParams& m, double global_batch)
{
  const double model = megatron_model_flops(m, global_batch);
  if (m.recompute == "full") // Narayanan et al.'s 96 instead of 72: the forward pass runs twice
    return model * 4.0 / 3.0;
  if (m.recompute == "selective") // the attention scores and values are recomputed: 4 b s^2 h per layer
    return model + 4.0 * global_batch * m.seq * m.seq * m.hidden * m.layers;
  return model;
}

} // namespace cs
