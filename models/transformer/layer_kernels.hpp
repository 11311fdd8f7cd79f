// The verbs a piece of a transformer layer (an attention kind, an MLP kind, the norms and residuals around them) uses
// to append its forward and backward kernels on one tensor-parallel rank.
#pragma once

#include "models/transformer/transformer.hpp"

#include <string>

namespace cs {

/** Kernels of one pass under construction for `model` on one rank of `shape`, in the model's activation dtype. */
class LayerKernels {
public:
  LayerKernels(const ModelParams& model, const LayerShape& shape);

  const ModelParams& model() const { return model_; }
  const LayerShape& shape() const { return shape_; }
  /** Bytes of one activation element. */
  double element_bytes() const { return element_bytes_; }

  void forward(const std::string& name, Kernel kernel);
  /** `weight`: a weight-gradient kernel (zero-bubble schedules run these as their own pass). */
  void backward(const std::string& name, Kernel kernel, bool weight = false);
  /** A memory-bound kernel reading `in` and writing `out` bytes with `flops` of arithmetic, in the model's dtype. */
  Kernel traffic(const char* op, double in, double out, double flops = 0) const;
  /** A linear layer x (tokens x k) times W (k x n): forward, its input gradient and its weight gradient (with the bias
   *  gradient, a reduction over the tokens, when the layer has a bias). Under the model's FP8 recipe its GEMMs run in
   *  FP8 with their quantisation, unless `fp8_eligible` is false (the output layer stays in bf16, as in Megatron). */
  void linear(const std::string& name, double tokens, double n, double k, bool bias, bool fp8_eligible = true);
  /** The model's norm (LayerNorm or RMSNorm) over `rows` x `cols`: its backward reads the input and the output
   *  gradient and writes the input gradient. */
  void norm(double rows, double cols);
  /** An RMSNorm named `name` (its backward `name`_backward), whatever the model's norm (QK-norm); under PyTorch eager
   *  (framework.fused_rmsnorm false) its composite's passes. */
  void rms_norm(double rows, double cols, const std::string& name);
  /** The end of a block: bias, dropout and the residual add over `elements`, fused or not as the framework does it;
   *  in backward the dropout gradient and the add of the branch's gradient into the residual's. */
  void residual(double elements);
  /** Rotary position embedding of `heads` query and `kv_heads` key heads of `rotary_dim` each on this rank's tokens:
   *  one pass each way when the framework fuses it, else the unfused rotate-half passes. */
  void rope(double heads, double kv_heads, double rotary_dim);
  /** The fused attention core (FlashAttention-2, Triton's or cuDNN's, as the model says) of `heads` query and
   *  `kv_heads` key/value heads on this rank, queries and keys `head_dim` wide and values `v_head_dim` (0: the same),
   *  over the rank's share of the sequence under context parallelism; with the framework's layout copies. */
  void fused_attention(double heads, double kv_heads, double head_dim, double v_head_dim = 0);
  /** Ring attention's merges of its steps' partial outputs and gradients (context parallelism over p2p). */
  void ring_attention_merges(double tokens, double heads, double kv_heads, double head_dim, double v);
  /** What the framework does with `params` fresh weight gradients every microbatch (fp32 main_grad accumulation,
   *  FSDP's cast and pre-division). */
  void gradient_handling(double params);

  /** The kernels built, leaving this builder empty. */
  PassKernels take() { return std::move(out_); }

private:
  const ModelParams& model_;
  const LayerShape& shape_;
  double element_bytes_;
  PassKernels out_;
};

} // namespace cs
