#include "models/transformer/layer_kernels.hpp"

#include "models/transformer/fp8_recipe.hpp"

namespace cs {

LayerKernels::LayerKernels(const ModelParams& model, const LayerShape& shape)
    : model_(model), shape_(shape), element_bytes_(dtype_bytes(model.dtype))
{}

void LayerKernels::forward(const std::string& name, Kernel kernel)
{
  out_.forward.push_back({name, std::move(kernel), false});
}

void LayerKernels::backward(const std::string& name, Kernel kernel, bool weight)
{
  out_.backward.push_back({name, std::move(kernel), weight});
}

Kernel LayerKernels::traffic(const char* op, double in, double out, double flops) const
{
  return BandwidthKernel{op, in, out, flops, model_.dtype};
}

void LayerKernels::linear(const std::string& name, double tokens, double n, double k, bool bias, bool fp8_eligible)
{
  if (model_.fp8 && fp8_eligible) {
    // Megatron-Core's TE layer spec runs the QKV and first MLP projections as LayerNormLinear, the norm before them
    // inside (not MLA's down projections or an MoE layer's experts, which follow other kernels).
    const TpProjection* projection = tp_projection(name);
    const bool from_norm = shape_.framework.fused_norm_linear && projection && projection->column &&
                           !out_.forward.empty() && out_.forward.back().name == "layernorm";
    model_.fp8->linear(*this, name, tokens, n, k, bias, from_norm);
    return;
  }
  forward(name, GemmKernel{tokens, n, k, 1, model_.dtype});
  backward(name + "_dgrad", GemmKernel{tokens, k, n, 1, model_.dtype});
  backward(name + "_wgrad", GemmKernel{k, n, tokens, 1, model_.dtype}, true);
  if (bias)
    backward(name + "_bias_grad", ReductionKernel{tokens * n, model_.dtype}, true);
}

// PyTorch eager's RMSNorm (torch.nn.RMSNorm before its fused kernel, Hugging Face's LlamaRMSNorm, torchtitan's):
// a = x.float(), a.pow(2).mean(-1), rsqrt, f = a * rstd, g = f.to(x.dtype), y = g * weight. Forward, per element:
// the upcast (e read, 4 written), the square (4, 4), the mean (4 read), the scaling (4, 4), the downcast (4, e) and
// the weight (e, e). Backward, autograd's graph of the same: the weight's product and its gradient's reduction (4e
// read, 2e written), the downcast's (e, 4), the scaling's two products and the reduction over the row (16, 8), the
// mean's expansion (0, 4), the square's two products (12, 8), the two gradients of a added (8, 4) and the upcast's
// (4, e). LayerNorm is one native kernel in eager too. [recon: counted from those sources]
void LayerKernels::rms_norm(double rows, double cols, const std::string& name)
{
  if (!shape_.framework.fused_rmsnorm) {
    const double n = rows * cols, e = element_bytes_;
    forward(name, traffic("rmsnorm_eager", (16 + 2 * e) * n, (12 + 2 * e) * n, 4 * n));
    backward(name + "_backward", traffic("rmsnorm_eager", (40 + 5 * e) * n, (28 + 3 * e) * n, 10 * n));
    return;
  }
  forward(name, NormKernel{rows, cols, true, model_.dtype});
  backward(name + "_backward", NormKernel{1.5 * rows, cols, true, model_.dtype});
}

void LayerKernels::norm(double rows, double cols)
{
  if (model_.norm == Norm::RMSNORM)
    return rms_norm(rows, cols, "layernorm");
  forward("layernorm", NormKernel{rows, cols, false, model_.dtype});
  backward("layernorm_backward", NormKernel{1.5 * rows, cols, false, model_.dtype});
}

// Fused (Transformer Engine's fused_apply_rotary_pos_emb, or what torch.compile makes of it): each of q and k read
// once and written once, forward and backward; the frequencies (sequence x rotary_dim, shared by the heads) are
// cached. Unfused (Megatron-Core's _apply_rotary_pos_emb_bshd; Hugging Face's apply_rotary_pos_emb is the same but
// for the last copy): t * cos + rotate_half(t) * sin, where rotate_half negates one half and concatenates the halves
// (0.5 + 1 element read, as many written), the two products (1 + 1 each), their sum (2 read, 1 written) and the
// concatenation with the empty unrotated part (1 + 1): 6.5 elements read and 5.5 written per element. Backward: the
// gradient times cos and times sin (1 + 1 each), the rotation's negation and concatenation undone (1.5 + 1.5), and
// the two branches added into t's gradient (2 + 1): 5.5 and 4.5. [recon: counted from those sources]
void LayerKernels::rope(double heads, double kv_heads, double rotary_dim)
{
  const double elements = shape_.tokens(model_) * (heads + kv_heads) * rotary_dim, e = element_bytes_;
  if (shape_.framework.fused_rope) {
    forward("rope", traffic("rope", elements * e, elements * e, 3 * elements));
    backward("rope_backward", traffic("rope", elements * e, elements * e, 3 * elements));
  } else {
    forward("rope", traffic("rope", 6.5 * elements * e, 5.5 * elements * e, 3 * elements));
    backward("rope_backward", traffic("rope", 5.5 * elements * e, 4.5 * elements * e, 3 * elements));
  }
}

// The scores stay on chip. Under context parallelism a rank attends its 1/cp of the queries to every key: in cp ring
// steps of a 1/cp block of keys each (p2p: with causal load balancing each rank does 1/cp of the causal work, one
// step masked and the others not), or at once against the gathered keys (allgather); with all-to-alls (Ulysses) it
// attends all of the sequence for 1/cp of the heads.
void LayerKernels::fused_attention(double heads, double kv_heads, double head_dim, double v_head_dim)
{
  const ParallelLayout& parallel = shape_.parallel;
  const double micro = shape_.micro, s = model_.seq, cp = parallel.cp, tokens = shape_.tokens(model_);
  const bool ulysses = parallel.cp_comm == CpComm::A2A, ring = cp > 1 && parallel.cp_comm == CpComm::P2P;
  const double q = ulysses ? s : s / cp, kv = ring ? s / cp : s, batch = ring ? micro * cp : micro;
  if (ulysses) {
    heads /= cp;
    kv_heads /= cp;
  }
  const double v = v_head_dim > 0 ? v_head_dim : head_dim;
  const double qkv_bytes = tokens * ((heads + kv_heads) * head_dim + kv_heads * v) * element_bytes_;
  if (shape_.framework.attention_layout_copies) {
    forward("qkv_layout_copy", MemcpyKernel{qkv_bytes, "d2d"});
    backward("dqkv_layout_copy", MemcpyKernel{qkv_bytes, "d2d"});
  }
  const bool triton = model_.attention == AttentionCore::TRITON, cudnn = model_.attention == AttentionCore::CUDNN;
  auto core = [&](double b, double queries, double keys, bool causal, bool backward) {
    return AttentionKernel{b,      heads,        kv_heads, queries, keys,  head_dim,
                           causal, model_.dtype, backward, triton,  cudnn, v_head_dim};
  };
  if (ring && model_.causal) {
    // The load-balanced ring (Transformer Engine's AttnFuncWithCPAndKVP2P): a rank holds two mirrored chunks of
    // s / 2cp. Only its own step is causal; in each of the other cp - 1 the mask drops half the work, and what is
    // left is unmasked: all its queries against the received first chunk, or its second chunk's queries against
    // both. Every step has ranks of each kind and waits for the slower, the shorter keys: priced so.
    forward("attention", core(micro, q, kv, true, false));
    forward("attention_ring_steps", core(micro * (cp - 1), q, kv / 2, false, false));
    backward("attention_backward", core(micro, q, kv, true, true));
    backward("attention_ring_steps_backward", core(micro * (cp - 1), q, kv / 2, false, true));
  } else {
    forward("attention", core(batch, q, kv, model_.causal, false));
    backward("attention_backward", core(batch, q, kv, model_.causal, true));
  }
  if (ring)
    ring_attention_merges(tokens, heads, kv_heads, head_dim, v);
}

// Ring attention's steps each give a partial result (Transformer Engine's AttnFuncWithCPAndKVP2P). The forward merges
// each step's output into the running one by their log-sum-exps: the first copied, each later one read with the
// running output and written back. The backward adds each step's query gradient into the running one the same way,
// and each step's key and value gradients into those passed on round the ring. All in the model's dtype, the
// log-sum-exps in fp32.
void LayerKernels::ring_attention_merges(double tokens, double heads, double kv_heads, double head_dim, double v)
{
  const double cp = shape_.parallel.cp, e = element_bytes_, reads = 2 * cp - 1;
  const double out = tokens * heads * v * e, lse = tokens * heads * 4.0;
  const double dq = tokens * heads * head_dim * e, dkv = tokens * kv_heads * (head_dim + v) * e;
  forward("ring_attention_out_merge",
          traffic("ring_attention_merge", (out + lse) * reads, (out + lse) * cp, tokens * heads * v * 4 * (cp - 1)));
  backward("ring_attention_grad_accumulate", traffic("ring_attention_grad_accumulate", dq * reads + dkv * 2 * cp,
                                                     (dq + dkv) * cp, (dq + dkv) / e * (cp - 1)));
}

void LayerKernels::residual(double elements)
{
  const auto& fw = shape_.framework;
  const double e = element_bytes_, mask = fw.dropout > 0 ? 1.0 : 0.0;
  if (fw.fused_bias_dropout_add) {
    forward("bias_dropout_add", traffic("bias_dropout_add", 2 * elements * e, elements * (e + mask), 3 * elements));
  } else {
    if (model_.bias)
      forward("bias_add", traffic("bias_add", elements * e, elements * e, elements));
    if (fw.dropout > 0)
      forward("dropout", traffic("dropout", elements * e, elements * (e + 1), elements));
    forward("residual_add", traffic("residual_add", 2 * elements * e, elements * e, elements));
  }
  if (fw.dropout > 0)
    backward("dropout_backward", traffic("dropout_backward", elements * (e + 1), elements * e, elements));
  backward("residual_grad_add", traffic("residual_grad_add", 2 * elements * e, elements * e, elements));
}

void LayerKernels::gradient_handling(double params)
{
  const auto& fw = shape_.framework;
  const double e = element_bytes_;
  // main_grad += grad: read both, write fp32. Fused, the weight-gradient GEMM adds into main_grad itself.
  if (fw.grad_accumulation == "fp32" && !fw.gradient_accumulation_fusion)
    backward("main_grad_accumulate", BandwidthKernel{"grad_accumulate", params * (e + 4), params * 4, params, "fp32"},
             true);
  if (fw.grad_cast_predivide) { // FSDP: cast the unsharded gradient to the reduce dtype (if it differs), then
                                // divide it in place before reducing
    const std::string rd = fw.reduce_dtype_for(model_.dtype);
    const double r = dtype_bytes(rd), cast = rd != model_.dtype ? params * (e + r) : 0.0;
    backward("grad_cast_predivide",
             BandwidthKernel{"grad_cast", cast * e / (e + r) + params * r, cast * r / (e + r) + params * r, params, rd},
             true);
  }
}

} // namespace cs
