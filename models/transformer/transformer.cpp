#include "models/transformer/transformer.hpp"

#include "models/transformer/attention_kind.hpp"
#include "models/transformer/layer_kernels.hpp"
#include "models/transformer/mlp_kind.hpp"

#include <stdexcept>

namespace cs {
namespace {

// The dense MLP's weights and biases (what an MoE layer replaces).
double dense_mlp_parameters(const ModelParams& m)
{
  const MlpKind& mlp = mlp_kind_of(m);
  const double h = m.hidden, f = m.ffn;
  return mlp.weights(h, f) + (m.bias ? mlp.inner_biases(f) + h : 0.0);
}
double norm_parameters(const ModelParams& m) { return m.norm == Norm::RMSNORM || !m.bias ? m.hidden : 2.0 * m.hidden; }

} // namespace

PassKernels layer_kernels(const ModelParams& m, const LayerShape& shape)
{
  LayerKernels b(m, shape);
  const double t = shape.parallel.tp, tokens = shape.tokens(m);
  // Sequence parallelism (Korthikanti et al.): layernorms and residual adds run on this rank's 1/tp of the tokens.
  const double seq_tokens = shape.parallel.sp() ? tokens / t : tokens;
  b.norm(seq_tokens, m.hidden);
  attention_kind_of(m).emit(b);
  b.residual(seq_tokens * m.hidden);
  b.norm(seq_tokens, m.hidden);
  if (shape.mlp)
    mlp_kind_of(m).emit(b, tokens, m.ffn / t, m.bias);
  b.residual(seq_tokens * m.hidden);
  b.gradient_handling((shape.mlp ? layer_parameters(m) : layer_parameters(m) - dense_mlp_parameters(m)) / t);
  return b.take();
}

PassKernels expert_mlp_kernels(const ModelParams& m, double tokens, double ffn, const FrameworkProfile& framework)
{
  LayerShape shape;
  shape.framework = framework;
  LayerKernels b(m, shape);
  const MlpKind& mlp = mlp_kind_of(m);
  mlp.emit(b, tokens, ffn, false);
  b.gradient_handling(mlp.weights(m.hidden, ffn));
  return b.take();
}

PassKernels head_kernels(const ModelParams& m, const LayerShape& shape)
{
  LayerKernels b(m, shape);
  const double t = shape.parallel.tp, tokens = shape.tokens(m), vocab = m.vocab / t;
  const double e = b.element_bytes();
  b.norm(tokens, m.hidden);
  b.linear("logits_gemm", tokens, vocab, m.hidden, false, false);
  const auto& fw = shape.framework;
  b.forward("cross_entropy",
            BandwidthKernel{"cross_entropy", tokens * vocab * fw.cross_entropy_forward_bytes / 2,
                            tokens * vocab * fw.cross_entropy_forward_bytes / 2, 5 * tokens * vocab, "fp32"});
  b.backward("cross_entropy_backward",
             BandwidthKernel{"cross_entropy", tokens * vocab * fw.cross_entropy_backward_bytes / 2,
                             tokens * vocab * fw.cross_entropy_backward_bytes / 2, 2 * tokens * vocab, "fp32"});
  if (m.tie_embeddings) // the logits' weight gradient is added into the embedding's
    b.backward("tied_grad_add", b.traffic("tied_grad_add", 2 * vocab * m.hidden * e, vocab * m.hidden * e), true);
  b.gradient_handling(head_parameters(m) / t);
  return b.take();
}

PassKernels embedding_kernels(const ModelParams& m, const LayerShape& shape)
{
  LayerKernels b(m, shape);
  const double t = shape.parallel.tp, tokens = shape.tokens(m), rows = tokens * m.hidden;
  const double e = b.element_bytes();
  b.forward("embedding_lookup", b.traffic("embedding_lookup", rows * e, rows * e));
  // The dense gradient of the (vocab-parallel) table is zeroed, then every token's gradient row is added into it.
  b.backward("embedding_grad_zero", b.traffic("memset", 0, m.vocab / t * m.hidden * e), true);
  b.backward("embedding_grad_scatter_add", b.traffic("scatter_add", 2 * rows * e, rows * e, rows), true);
  b.gradient_handling(embedding_parameters(m) / t);
  return b.take();
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
  return attention_kind_of(m).weights(m) + mlp_kind_of(m).weights(m.hidden, m.ffn);
}

double layer_parameters(const ModelParams& m)
{
  const double h = m.hidden, f = m.ffn;
  const double biases = m.bias ? attention_kind_of(m).biases(m) + mlp_kind_of(m).inner_biases(f) + h : 0.0;
  return layer_gemm_weights(m) + biases + 2 * norm_parameters(m) + attention_kind_of(m).norm_parameters(m);
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
  const double dense_mlp = mlp_kind_of(m).weights(m.hidden, m.ffn);
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

namespace {

// Megatron's printed formula holds for the GPT shape: a GeLU MLP of 4 h, multi-head attention with h / a per head.
bool printed_gpt_shape(const ModelParams& m)
{
  return &mlp_kind_of(m) == &mlp_kind("gelu") && attention_kind_of(m).name() == "gqa" && m.kv() == m.heads &&
         (m.head_dim == 0 || m.head_dim * m.heads == m.hidden) && m.ffn == 4 * m.hidden && !m.moe.enabled();
}

} // namespace

double megatron_model_flops(const ModelParams& m, double global_batch)
{
  const double b = global_batch, s = m.seq, l = m.layers, h = m.hidden, v = m.vocab;
  if (printed_gpt_shape(m)) // as printed
    return 72.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
  // The same count term by term: 6 FLOPs per GEMM weight and token (three passes), the attention core's score and
  // value products three times (12 s h per token and layer for multi-head attention), and the logits term as
  // Megatron counts it (4.5 V h per token).
  const double core = 3.0 * l * attention_kind_of(m).core_forward_flops_per_token(m);
  if (m.moe.enabled()) { // the weights a token goes through: the router, its top_k experts, the shared ones
    double weights = 0;
    for (int i = 0; i < m.layers; ++i)
      weights += active_gemm_weights_at(m, i);
    return b * s * (6.0 * weights + core + 4.5 * v * h);
  }
  return b * s * (6.0 * l * layer_gemm_weights(m) + core + 4.5 * v * h);
}

double hardware_model_flops(const ModelParams& m, double global_batch)
{
  const double model = megatron_model_flops(m, global_batch);
  if (m.recompute == "full") // Narayanan et al.'s 96 instead of 72: the forward pass runs twice
    return model * 4.0 / 3.0;
  if (m.recompute == "selective") { // the modules' forwards run again: the attention core (4 b s^2 h per layer for
                                    // MHA), the MLP's GEMMs (2 FLOPs a weight a token)
    const double core = m.recomputes("core_attn") ? attention_kind_of(m).core_forward_flops_per_token(m) : 0.0;
    const double mlp = m.recomputes("mlp") ? 2.0 * mlp_kind_of(m).weights(m.hidden, m.ffn) : 0.0;
    return model + global_batch * m.seq * (core + mlp) * m.layers;
  }
  return model;
}

} // namespace cs
