#include "models/transformer/transformer.hpp"

#include "models/transformer/attention_kind.hpp"
#include "models/transformer/layer_kernels.hpp"
#include "models/transformer/mlp_kind.hpp"

#include <stdexcept>

namespace cs {
namespace {

// The dense MLP's weights and biases (what an MoE layer replaces).
double dense_mlp_parameters(const ModelParams& model)
{
  const MlpKind& mlp = mlp_kind_of(model);
  const double h = model.hidden, f = model.ffn;
  return mlp.weights(h, f) + (model.bias ? mlp.inner_biases(f) + h : 0.0);
}
double norm_parameters(const ModelParams& model)
{
  return model.norm == Norm::RMSNORM || !model.bias ? model.hidden : 2.0 * model.hidden;
}

} // namespace

PassKernels layer_kernels(const ModelParams& model, const LayerShape& shape)
{
  LayerKernels b(model, shape);
  const double t = shape.parallel.tp, tokens = shape.tokens(model);
  // Sequence parallelism (Korthikanti et al.): layernorms and residual adds run on this rank's 1/tp of the tokens.
  const double seq_tokens = shape.parallel.sp() ? tokens / t : tokens;
  b.norm(seq_tokens, model.hidden);
  attention_kind_of(model).emit(b);
  b.residual(seq_tokens * model.hidden);
  b.norm(seq_tokens, model.hidden);
  if (shape.mlp)
    mlp_kind_of(model).emit(b, tokens, model.ffn / t, model.bias);
  b.residual(seq_tokens * model.hidden);
  b.gradient_handling((shape.mlp ? layer_parameters(model) : layer_parameters(model) - dense_mlp_parameters(model)) /
                      t);
  return b.take();
}

PassKernels expert_mlp_kernels(const ModelParams& model, double tokens, double ffn, const FrameworkProfile& framework)
{
  LayerShape shape;
  shape.framework = framework;
  LayerKernels b(model, shape);
  const MlpKind& mlp = mlp_kind_of(model);
  mlp.emit(b, tokens, ffn, false);
  b.gradient_handling(mlp.weights(model.hidden, ffn));
  return b.take();
}

PassKernels head_kernels(const ModelParams& model, const LayerShape& shape)
{
  LayerKernels b(model, shape);
  const double t = shape.parallel.tp, tokens = shape.tokens(model), vocab = model.vocab / t;
  const double e = b.element_bytes();
  b.norm(tokens, model.hidden);
  b.linear("logits_gemm", tokens, vocab, model.hidden, false, false);
  const auto [forward_bytes, backward_bytes] = shape.framework.cross_entropy_bytes(e);
  b.forward("cross_entropy", BandwidthKernel{"cross_entropy", tokens * vocab * forward_bytes / 2,
                                             tokens * vocab * forward_bytes / 2, 5 * tokens * vocab, "fp32"});
  b.backward("cross_entropy_backward",
             BandwidthKernel{"cross_entropy", tokens * vocab * backward_bytes / 2, tokens * vocab * backward_bytes / 2,
                             2 * tokens * vocab, "fp32"});
  if (model.tie_embeddings) // the logits' weight gradient is added into the embedding's
    b.backward("tied_grad_add", b.traffic("tied_grad_add", 2 * vocab * model.hidden * e, vocab * model.hidden * e),
               true);
  b.gradient_handling(head_parameters(model) / t);
  return b.take();
}

PassKernels embedding_kernels(const ModelParams& model, const LayerShape& shape)
{
  LayerKernels b(model, shape);
  const double t = shape.parallel.tp, tokens = shape.tokens(model), rows = tokens * model.hidden;
  const double e = b.element_bytes();
  b.forward("embedding_lookup", b.traffic("embedding_lookup", rows * e, rows * e));
  // The dense gradient of the (vocab-parallel) table is zeroed, then every token's gradient row is added into it.
  b.backward("embedding_grad_zero", b.traffic("memset", 0, model.vocab / t * model.hidden * e), true);
  b.backward("embedding_grad_scatter_add", b.traffic("scatter_add", 2 * rows * e, rows * e, rows), true);
  b.gradient_handling(embedding_parameters(model) / t);
  return b.take();
}

PassKernels mtp_entry_kernels(const ModelParams& model, const LayerShape& shape)
{
  LayerKernels b(model, shape);
  const double t = shape.parallel.tp, tokens = shape.tokens(model), h = model.hidden, rows = tokens * h;
  const double e = b.element_bytes();
  // The next tokens' embeddings (the model's table), both inputs normed, concatenated and projected back to h.
  b.forward("mtp_embedding_lookup", b.traffic("embedding_lookup", rows * e, rows * e));
  b.backward("mtp_embedding_grad_scatter_add", b.traffic("scatter_add", 2 * rows * e, rows * e, rows), true);
  b.norm(2 * tokens, h);
  b.forward("mtp_concat", MemcpyKernel{2 * rows * e, "d2d"});
  b.backward("mtp_concat_backward", MemcpyKernel{2 * rows * e, "d2d"});
  b.linear("mtp_eh_proj_gemm", tokens, h / t, 2 * h, false);
  b.gradient_handling((2.0 * h * h + 2.0 * h) / t);
  return b.take();
}

std::vector<NamedKernel> layer_forward_kernels(const ModelParams& model, int micro)
{
  LayerShape shape;
  shape.micro = micro;
  return layer_kernels(model, shape).forward;
}

NamedKernel optimizer_kernel(double p, const FrameworkProfile& fw, const ModelParams& model)
{
  const double saved = fw.optimizer_precision.step_bytes_saved(model.dtype, model.fp8 ? model.fp8->name() : "");
  const double bytes = (fw.optimizer_bytes_per_parameter - saved) * p;
  // Roughly 4 parts read to 3 written (fp32 master weight, momentum and variance read and written, gradient read).
  return {"adam", BandwidthKernel{"adam", bytes * 4 / 7, bytes * 3 / 7, fw.optimizer_flops_per_parameter * p, "fp32"}};
}

const TpProjection* tp_projection(const std::string& gemm, bool prefix)
{
  static const TpProjection projections[] = {{"qkv_gemm", "qkv", true},
                                             {"attn_out_gemm", "proj", false},
                                             {"ffn_up_gemm", "fc1", true},
                                             {"ffn_gate_up_gemm", "fc1", true},
                                             {"ffn_down_gemm", "fc2", false}};
  for (const auto& p : projections)
    if (prefix ? gemm.rfind(p.gemm, 0) == 0 : gemm == p.gemm)
      return &p;
  return nullptr;
}

double layer_gemm_weights(const ModelParams& model)
{
  return attention_kind_of(model).weights(model) + mlp_kind_of(model).weights(model.hidden, model.ffn);
}

double layer_parameters(const ModelParams& model)
{
  const double h = model.hidden, f = model.ffn;
  const double biases =
      model.bias ? attention_kind_of(model).biases(model) + mlp_kind_of(model).inner_biases(f) + h : 0.0;
  return layer_gemm_weights(model) + biases + 2 * norm_parameters(model) +
         attention_kind_of(model).norm_parameters(model);
}

double layer_parameters_at(const ModelParams& model, int l)
{
  if (!is_moe_layer(model.moe, l))
    return layer_parameters(model);
  return layer_parameters(model) - dense_mlp_parameters(model) + router_parameters(model) +
         routed_expert_parameters_at(model, l) + shared_expert_parameters(model);
}

double routed_expert_parameters_at(const ModelParams& model, int l)
{
  return is_moe_layer(model.moe, l) ? model.moe.experts * expert_parameters(model) : 0.0;
}

double active_gemm_weights_at(const ModelParams& model, int l)
{
  if (!is_moe_layer(model.moe, l))
    return layer_gemm_weights(model);
  const double dense_mlp = mlp_kind_of(model).weights(model.hidden, model.ffn);
  return layer_gemm_weights(model) - dense_mlp + router_parameters(model) + model.moe.top_k * expert_parameters(model) +
         shared_expert_parameters(model);
}

double embedding_parameters(const ModelParams& model)
{
  return double(model.vocab) * model.hidden + norm_parameters(model);
}

double head_parameters(const ModelParams& model)
{
  return model.tie_embeddings ? 0.0 : double(model.vocab) * model.hidden;
}

double total_parameters(const ModelParams& model)
{
  double layers = 0;
  for (int l = 0; l < model.layers; ++l)
    layers += layer_parameters_at(model, l);
  const double all = layers + embedding_parameters(model) + head_parameters(model);
  return model.mtp_depth > 0 ? all + mtp_parameters(model) : all;
}

double mtp_parameters(const ModelParams& model)
{
  const double h = model.hidden;
  return model.mtp_depth * (layer_parameters_at(model, model.layers - 1) + 2.0 * h * h + 3.0 * norm_parameters(model));
}

namespace {

// Megatron's printed formula holds for the GPT shape: a GeLU MLP of 4 h, multi-head attention with h / a per head.
bool printed_gpt_shape(const ModelParams& model)
{
  return &mlp_kind_of(model) == &mlp_kind("gelu") && attention_kind_of(model).name() == "gqa" &&
         model.kv() == model.heads && (model.head_dim == 0 || model.head_dim * model.heads == model.hidden) &&
         model.ffn == 4 * model.hidden && !model.moe.enabled();
}

// The decoder's layers and the output layer, as Megatron counts them.
double main_model_flops(const ModelParams& model, double global_batch)
{
  const double b = global_batch, s = model.seq, l = model.layers, h = model.hidden, v = model.vocab;
  if (printed_gpt_shape(model)) // as printed
    return 72.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
  // The same count term by term: 6 FLOPs per GEMM weight and token (three passes), the attention core's score and
  // value products three times (12 s h per token and layer for multi-head attention), and the logits term as
  // Megatron counts it (4.5 V h per token).
  const double core = 3.0 * l * attention_kind_of(model).core_forward_flops_per_token(model);
  if (model.moe.enabled()) { // the weights a token goes through: the router, its top_k experts, the shared ones
    double weights = 0;
    for (int i = 0; i < model.layers; ++i)
      weights += active_gemm_weights_at(model, i);
    return b * s * (6.0 * weights + core + 4.5 * v * h);
  }
  return b * s * (6.0 * l * layer_gemm_weights(model) + core + 4.5 * v * h);
}

} // namespace

double megatron_model_flops(const ModelParams& model, double global_batch)
{
  const double flops = main_model_flops(model, global_batch);
  if (model.mtp_depth == 0)
    return flops;
  // Each MTP module as Megatron-Core counts it: its layer (like the last), the 2 h x h projection and its own logits.
  const double h = model.hidden, weights = active_gemm_weights_at(model, model.layers - 1) + 2.0 * h * h;
  const double core = 3.0 * attention_kind_of(model).core_forward_flops_per_token(model);
  return flops + global_batch * model.seq * model.mtp_depth * (6.0 * weights + core + 4.5 * double(model.vocab) * h);
}

double hardware_model_flops(const ModelParams& model, double global_batch, double recomputed_share)
{
  if (model.recompute != Recompute::FULL || recomputed_share >= 1)
    return hardware_model_flops(model, global_batch);
  return megatron_model_flops(model, global_batch) * (1.0 + recomputed_share / 3.0);
}

double hardware_model_flops(const ModelParams& model, double global_batch)
{
  const double flops = megatron_model_flops(model, global_batch);
  if (model.recompute == Recompute::FULL) // Narayanan et al.'s 96 instead of 72: the forward pass runs twice
    return flops * 4.0 / 3.0;
  // Selective: the modules' forwards run again: the attention core (4 b s^2 h per layer for MHA), the MLP's GEMMs
  // (2 FLOPs a weight a token).
  if (model.recompute == Recompute::SELECTIVE) {
    // Fused attention keeps no scores, so core_attn reruns nothing (its backward's own recomputation of the scores
    // is in the 2.5x backward already).
    const bool scores_kept = model.attention == AttentionCore::MATERIALIZED;
    const double core = model.recomputes("core_attn") && scores_kept
                            ? attention_kind_of(model).core_forward_flops_per_token(model)
                            : 0.0;
    double mlp = model.recomputes("mlp") ? 2.0 * mlp_kind_of(model).weights(model.hidden, model.ffn) : 0.0;
    if (model.recomputes("op_sac")) { // torchtitan's op level: the keys, the output projection, and w3 (GeLU: fc2)
      const AttentionWidths w = attention_kind_of(model).widths(model);
      mlp = 2.0 * double(model.hidden) * (w.key + w.output + model.ffn);
    }
    const double own = attention_kind_of(model).rerun_flops_per_token(model);
    const double again = flops + global_batch * model.seq * (core + mlp + own) * (model.layers + model.mtp_depth);
    // In every MoE layer, 2 FLOPs a weight a token again: the shared experts' GEMMs (shared_experts), or the whole
    // layer's (moe: the router and each token's top_k routed experts too).
    const bool whole = model.recomputes("moe");
    if (!whole && !model.recomputes("shared_experts"))
      return again;
    const double weights =
        shared_expert_parameters(model) +
        (whole ? model.moe.top_k * expert_parameters(model) + double(model.hidden) * model.moe.experts : 0.0);
    return again + global_batch * model.seq * 2.0 * weights * moe_layer_count(model.moe, model.layers);
  }
  return flops;
}

} // namespace cs
