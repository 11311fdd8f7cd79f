// Multi-head latent attention (DeepSeek-V2, Liu et al. 2024, section 2.1; DeepSeek-V3, section 2.1.1), as
// Megatron-Core's MLASelfAttention trains it: the hidden state is projected down to a compressed query (q_lora_rank,
// RMSNorm, then up to every head's query) and a compressed key-value latent (kv_lora_rank, RMSNorm, then up to every
// head's key and value) plus one rotary key part shared by all heads; the attention core is multi-head attention with
// keys of qk_nope + qk_rope and values of v_head_dim; the output projection follows. The down projections are
// duplicated on every TP rank (Megatron-Core's parallel_mode "duplicated"), the up projections are column-parallel and
// the output row-parallel, so TP splits the heads.
// [recon] The all-reduce of the duplicated down projections' weight gradients over the TP group is not priced, and
// under sequence parallelism the layer keeps the all-gather of the hidden state where Megatron-Core gathers the
// smaller latent; both are small beside the layer's GEMMs (DeepSeek-V3 trained with TP 1).
#include "models/transformer/attention_mla.hpp"

#include "models/transformer/layer_kernels.hpp"

#include <fmt/format.h>

namespace cs {

namespace {

class MultiHeadLatentAttention : public AttentionKind {
public:
  explicit MultiHeadLatentAttention(const MlaParams& p = {}) : p_(p) {}

  std::string name() const override { return "mla"; }

  void configure(ObjectReader& r) override
  {
    r.field("q_lora_rank", p_.q_lora_rank,
            "the queries' compressed width (0: queries projected straight from the hidden state, as DeepSeek-V2-Lite)")
        .field("kv_lora_rank", p_.kv_lora_rank, "the keys' and values' shared compressed width")
        .field("qk_nope_head_dim", p_.qk_nope_head_dim,
               "per head, the query and key width without rotary embedding (Megatron-Core qk_head_dim)")
        .field("qk_rope_head_dim", p_.qk_rope_head_dim,
               "per head, the rotary width; the key's rotary part is one, shared by all heads (Megatron-Core "
               "qk_pos_emb_head_dim)")
        .field("v_head_dim", p_.v_head_dim, "per head, the values' width");
    r.require_non_negative("q_lora_rank", p_.q_lora_rank);
    r.require_positive("kv_lora_rank", p_.kv_lora_rank);
    r.require_positive("qk_nope_head_dim", p_.qk_nope_head_dim);
    r.require_non_negative("qk_rope_head_dim", p_.qk_rope_head_dim);
    r.require_positive("v_head_dim", p_.v_head_dim);
    for (const auto& [key, value] : {std::pair<const char*, int>{"q_lora_rank", p_.q_lora_rank},
                                     {"kv_lora_rank", p_.kv_lora_rank},
                                     {"qk_nope_head_dim", p_.qk_nope_head_dim},
                                     {"qk_rope_head_dim", p_.qk_rope_head_dim},
                                     {"v_head_dim", p_.v_head_dim}})
      r.require_at_most(key, value, 1 << 16);
  }

  void check(const ObjectReader& block, const ModelParams& model) const override
  {
    // A compression wider than what it compresses is no compression (and a typo more often than a design).
    if (p_.q_lora_rank > model.hidden)
      block.fail_at("q_lora_rank",
                    fmt::format("q_lora_rank ({}) exceeds the hidden size ({})", p_.q_lora_rank, model.hidden));
    if (p_.kv_lora_rank > model.hidden)
      block.fail_at("kv_lora_rank",
                    fmt::format("kv_lora_rank ({}) exceeds the hidden size ({})", p_.kv_lora_rank, model.hidden));
  }

  AttentionWidths widths(const ModelParams& model) const override
  {
    const double heads = model.heads;
    return {heads * qk(), heads * qk(), heads * p_.v_head_dim, heads * p_.v_head_dim};
  }

  double weights(const ModelParams& model) const override
  {
    const double h = model.hidden, heads = model.heads, q_in = p_.q_lora_rank > 0 ? p_.q_lora_rank : h;
    const double query = (p_.q_lora_rank > 0 ? h * p_.q_lora_rank : 0.0) + q_in * heads * qk();
    const double key_value = h * (p_.kv_lora_rank + p_.qk_rope_head_dim) +
                             double(p_.kv_lora_rank) * heads * (p_.qk_nope_head_dim + p_.v_head_dim);
    return query + key_value + heads * p_.v_head_dim * h;
  }

  double biases(const ModelParams& model) const override
  {
    const double heads = model.heads;
    return double(p_.q_lora_rank) + heads * qk() + p_.kv_lora_rank + p_.qk_rope_head_dim +
           heads * (p_.qk_nope_head_dim + p_.v_head_dim) + model.hidden;
  }

  double norm_parameters(const ModelParams&) const override { return double(p_.q_lora_rank) + p_.kv_lora_rank; }

  double activation_units(const ModelParams& model) const override
  {
    // Queries, keys, values and the core's output (2 bytes each); recomputing the up projections (mla_up_proj) frees
    // the queries, keys and values and keeps only the output.
    const AttentionWidths w = widths(model);
    const double output = 2.0 * w.output / model.hidden;
    return model.recomputes("mla_up_proj") ? output : output + 2.0 * (w.query + w.key + w.value) / model.hidden;
  }

  double replicated_units(const ModelParams& model) const override
  {
    // Each latent before its norm (the norm's backward) and after it (the up projection's input).
    return 2.0 * (2.0 * p_.q_lora_rank + 2.0 * p_.kv_lora_rank + p_.qk_rope_head_dim) / model.hidden;
  }

  void emit(LayerKernels& b) const override
  {
    const ModelParams& model = b.model();
    const ParallelLayout& parallel = b.shape().parallel;
    const double t = parallel.tp, tokens = b.shape().tokens(model), heads = model.heads / t, h = model.hidden;
    const double e = b.element_bytes(), rope = p_.qk_rope_head_dim;
    // The duplicated down projections see this rank's tokens: all of them, or 1/tp under sequence parallelism.
    const double down_tokens = parallel.sp() ? tokens / t : tokens;
    // DeepSeek's latent norms are RMSNorms whatever the layer's norm.
    if (p_.q_lora_rank > 0) {
      b.linear("mla_q_down_gemm", down_tokens, p_.q_lora_rank, h, model.bias);
      b.rms_norm(down_tokens, p_.q_lora_rank, "mla_q_norm");
      b.linear("mla_q_up_gemm", tokens, heads * qk(), p_.q_lora_rank, model.bias);
    } else {
      b.linear("mla_q_up_gemm", tokens, heads * qk(), h, model.bias);
    }
    b.linear("mla_kv_down_gemm", down_tokens, p_.kv_lora_rank + rope, h, model.bias);
    b.rms_norm(down_tokens, p_.kv_lora_rank, "mla_kv_norm");
    b.linear("mla_kv_up_gemm", tokens, heads * (p_.qk_nope_head_dim + p_.v_head_dim), p_.kv_lora_rank, model.bias);
    // Rotary embedding of every head's query part and of the one shared key part, then the concatenations that
    // build whole queries and keys (the shared rotary key broadcast to every head); backward splits the gradients.
    const double rotated = tokens * (heads + 1) * rope;
    b.forward("mla_rope", b.traffic("rope", rotated * e, rotated * e, 3 * rotated));
    b.backward("mla_rope_backward", b.traffic("rope", rotated * e, rotated * e, 3 * rotated));
    b.forward("mla_qk_concat", MemcpyKernel{2 * tokens * heads * qk() * e, "d2d"});
    b.backward("mla_qk_concat_backward", MemcpyKernel{2 * tokens * heads * qk() * e, "d2d"});
    b.fused_attention(heads, heads, qk(), p_.v_head_dim);
    b.linear("attn_out_gemm", tokens, h, heads * p_.v_head_dim, model.bias);
  }

  double core_forward_flops_per_token(const ModelParams& model) const override
  {
    // The score product over qk_nope + qk_rope and the value product over v_head_dim, over the whole sequence.
    return 2.0 * model.seq * model.heads * (qk() + p_.v_head_dim);
  }

  double rerun_flops_per_token(const ModelParams& model) const override
  {
    if (!model.recomputes("mla_up_proj"))
      return 0.0;
    const double q_in = p_.q_lora_rank > 0 ? p_.q_lora_rank : model.hidden;
    return 2.0 * model.heads * (q_in * qk() + double(p_.kv_lora_rank) * (p_.qk_nope_head_dim + p_.v_head_dim));
  }

  std::string tp_problem(const ModelParams& model, int tp) const override
  {
    if (model.heads % tp != 0)
      return fmt::format("tp = {} must divide the heads ({})", tp, model.heads);
    return "";
  }

private:
  double qk() const { return double(p_.qk_nope_head_dim) + p_.qk_rope_head_dim; }

  MlaParams p_;
};

} // namespace

std::shared_ptr<AttentionKind> make_mla_attention(const MlaParams& params)
{
  return std::make_shared<MultiHeadLatentAttention>(params);
}

CS_REGISTER_ATTENTION_KIND(MultiHeadLatentAttention, "mla",
                           "multi-head latent attention (DeepSeek-V2/V3): compressed query and key-value latents "
                           "(q_lora_rank, kv_lora_rank), per-head qk_nope_head_dim + qk_rope_head_dim keys and "
                           "v_head_dim values; heads from the model");

} // namespace cs
