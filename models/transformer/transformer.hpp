// A dense GPT-style transformer: the kernels of one layer, parameter counts and the Megatron FLOP formula.
#pragma once

#include "models/kernels/kernel.hpp"
#include "models/transformer/model_params.hpp"

#include <utility>
#include <vector>

namespace cs {

/** A kernel of a layer, with the name the timeline shows. */
struct NamedKernel {
  std::string name;
  Kernel kernel;
};

/** The forward kernels of one transformer layer for `micro` samples: QKV, flash-style attention, output
 *  projection, two FFN GEMMs, two layer norms, GeLU, residual adds. Attention counts the full s x s score
 *  matrix (no causal halving), as the Megatron formula does. */
std::vector<NamedKernel> layer_forward_kernels(const ModelParams& m, int micro);
/** The forward kernels of one layer split Megatron-style over `tp` tensor-parallel ranks, as the two blocks that
 *  each end in an all-reduce: attention (layernorm, column-parallel QKV, heads / tp, row-parallel output
 *  projection, residual) and MLP (layernorm, column-parallel up projection, GeLU, row-parallel down projection,
 *  residual). Norms and residuals are replicated. With tp = 1 the two blocks together are layer_forward_kernels. */
std::pair<std::vector<NamedKernel>, std::vector<NamedKernel>>
layer_forward_blocks(const ModelParams& m, int micro, int tp, bool sequence_parallel = false);

/** The output head: logits GEMM over the vocabulary and the softmax cross-entropy. */
std::vector<NamedKernel> head_forward_kernels(const ModelParams& m, int micro);
/** The backward kernels of a forward pass: each GEMM (m, n, k) becomes its input-gradient GEMM (m, k, n) and
 *  weight-gradient GEMM (k, n, m); fused attention runs twice (twice the forward work, as in the Megatron FLOP
 *  count); a memory-bound op moves 1.5x its forward traffic (output gradient and saved tensor in, input
 *  gradient out). */
std::vector<NamedKernel> backward_kernels(const std::vector<NamedKernel>& forward);

/** The optimizer step over `parameters` with mixed-precision Adam: reads the 16-bit weight and gradient and the
 *  fp32 master weight, momentum and variance (16 B), writes all but the gradient (14 B), ~10 FLOPs each. */
NamedKernel adam_kernel(double parameters);

/** GEMM weights of one layer: queries, keys and values (kv_heads of them), output projection, and the FFN's two
 *  (gelu) or three (swiglu) matrices. */
double layer_gemm_weights(const ModelParams& m);
/** Parameters of one layer: GEMM weights, their biases, two norms (layernorm: weight and bias; rmsnorm: weight). */
double layer_parameters(const ModelParams& m);
/** Embedding (vocab x hidden) plus the final norm. */
double embedding_parameters(const ModelParams& m);
/** The output layer's own weights: none when tied with the embedding, vocab x hidden otherwise. */
double head_parameters(const ModelParams& m);
double total_parameters(const ModelParams& m);

/** Model FLOPs per iteration as in Narayanan et al. (SC'21, eq. 3): 72 B s l h^2 (1 + s/6h + V/16lh), i.e. three
 *  passes; with full recomputation the hardware does 4/3 of that, but model FLOPs stay the same. For other shapes
 *  (ffn != 4h, grouped-query attention, SwiGLU) the same count term by term: 6 FLOPs per GEMM weight per token,
 *  12 s h per token and layer for attention, 4.5 V h per token for the logits. */
double megatron_model_flops(const ModelParams& m, double global_batch);

} // namespace cs
