// A GPT-style transformer: the kernels of its layers, head and embedding under a framework profile, parameter
// counts and the Megatron FLOP formula.
#pragma once

#include "models/kernels/kernel.hpp"
#include "models/parallel/parallel_layout.hpp"
#include "models/transformer/framework.hpp"
#include "models/transformer/model_params.hpp"

#include <vector>

namespace cs {

/** A kernel with the name the timeline shows. In a backward pass, `weight` marks the weight-gradient kernels (which
 *  zero-bubble schedules run as their own pass). */
struct NamedKernel {
  std::string name;
  Kernel kernel;
  bool weight = false;
};

/** The kernels of a forward pass and of its backward pass (input and weight gradients, and what the framework adds:
 *  bias-gradient reductions, gradient accumulation, casts). */
struct PassKernels {
  std::vector<NamedKernel> forward, backward;
};

/** Where a layer runs: `micro` samples on one rank of `parallel` (Megatron's column and row splits over its tp ranks,
 *  with sequence parallelism or not; 1/cp of each sample's sequence under context parallelism), under `framework`. */
struct LayerShape {
  int micro = 1;
  ParallelLayout parallel;
  FrameworkProfile framework;
  bool mlp = true; // false: an MoE layer, whose experts are priced apart (models/moe/moe_layer_cost.hpp)

  /** The tokens one rank holds: its micro-batch's samples, each cut to 1/cp of the sequence. */
  double tokens(const ModelParams& model) const { return double(micro) * model.seq / parallel.cp; }
};

/** One transformer layer: layernorm, QKV projection (and its bias gradient), attention (fused flash-style, or the
 *  score GEMM, softmax, dropout and value GEMM of materialised attention, with their layout copies), output
 *  projection, bias-dropout-residual (fused or not), layernorm, the MLP (GeLU or SwiGLU), and in backward the
 *  residual gradient adds; Megatron's fp32 main_grad accumulation or FSDP's cast and pre-division of the layer's
 *  gradients. */
PassKernels layer_kernels(const ModelParams& model, const LayerShape& shape);
/** One expert's MLP over `tokens` tokens with inner size `ffn` (already split over expert-TP ranks), no biases: the
 *  up (or fused gate and up) GEMM, the activation, the down GEMM, and their backward. */
PassKernels expert_mlp_kernels(const ModelParams& model, double tokens, double ffn, const FrameworkProfile& framework);
/** The output layer on one TP rank: final norm, the vocabulary-parallel logits GEMM, the fp32 cross-entropy, and (tied
 *  embeddings) the add of the head's weight gradient into the embedding's. */
PassKernels head_kernels(const ModelParams& model, const LayerShape& shape);
/** A multi-token prediction module's own kernels before its layer, on one TP rank: the lookup of the next tokens'
 *  embeddings, the two input norms, their concatenation and the column-parallel 2 h to h projection
 *  [recon: the projection's output gather under TP is not priced]. */
PassKernels mtp_entry_kernels(const ModelParams& model, const LayerShape& shape);
/** The input embedding: the lookup, and in backward the zeroed vocabulary-sized gradient and its scatter-add. */
PassKernels embedding_kernels(const ModelParams& model, const LayerShape& shape);

/** The forward kernels of one layer with tp = 1 under the default framework (for FLOP checks). */
std::vector<NamedKernel> layer_forward_kernels(const ModelParams& model, int micro);

/** The mixed-precision optimizer step over `parameters`, as the framework's traffic per parameter, less what a
 *  precision-aware optimizer's narrower state saves for `model`'s dtype and FP8 recipe. */
NamedKernel optimizer_kernel(double parameters, const FrameworkProfile& framework, const ModelParams& model);

/** A dense layer's tensor-parallel projections, by the name its GEMM kernels carry: Transformer Engine's layer name
 *  for them (its userbuffers' qkv, proj, fc1, fc2) and whether it is column-parallel (its input gathered under
 *  sequence parallelism, and the norm before it fused into it in Megatron-Core's TE spec). */
struct TpProjection {
  const char* gemm;
  const char* te_layer;
  bool column;
};
/** The projection `gemm` names (exactly, or with a suffix such as _dgrad when `prefix`), or nullptr. */
const TpProjection* tp_projection(const std::string& gemm, bool prefix = false);

/** GEMM weights of one layer: queries, keys and values (kv_heads of them), output projection, and the FFN's two
 *  (gelu) or three (swiglu) matrices. */
double layer_gemm_weights(const ModelParams& model);
/** Parameters of one layer: GEMM weights, their biases (if any), two norms (layernorm: weight and bias; rmsnorm or
 *  no biases: weight). */
double layer_parameters(const ModelParams& model);
/** Parameters of layer `l`: layer_parameters for a dense layer; for an MoE layer the MLP's are replaced by the
 *  router's, every routed expert's and the shared experts'. */
double layer_parameters_at(const ModelParams& model, int l);
/** Of those, the routed experts' (0 for a dense layer). */
double routed_expert_parameters_at(const ModelParams& model, int l);
/** GEMM weights one token goes through in layer `l` (an MoE layer: router, top_k experts and the shared ones). */
double active_gemm_weights_at(const ModelParams& model, int l);
/** Embedding (vocab x hidden) plus the final norm. */
double embedding_parameters(const ModelParams& model);
/** The output layer's own weights: none when tied with the embedding, vocab x hidden otherwise. */
double head_parameters(const ModelParams& model);
/** The multi-token prediction modules' own weights (mtp_depth of them: the projection of 2 h to h, its two input
 *  norms, a layer like the last and the norm before the shared output layer); the embedding and output layer they
 *  use are the model's. */
double mtp_parameters(const ModelParams& model);
/** Everything: layers, embedding, untied output layer, MTP modules. */
double total_parameters(const ModelParams& model);

/** Model FLOPs per iteration as in Narayanan et al. (SC'21, eq. 3): 72 B s l h^2 (1 + s/6h + V/16lh), i.e. three
 *  passes, whatever the recomputation (model FLOPs). For other shapes (ffn != 4h, grouped-query attention, SwiGLU)
 *  the same count term by term: 6 FLOPs per GEMM weight per token, 12 s h per token and layer for attention, 4.5 V h
 *  per token for the logits. */
double megatron_model_flops(const ModelParams& model, double global_batch);
/** The FLOPs the hardware does: model FLOPs plus the forward pass again under full recomputation (the 96 instead of
 *  72 of Narayanan et al.), or the attention block again under selective recomputation. */
double hardware_model_flops(const ModelParams& model, double global_batch);
/** The same when full recomputation covers only `recomputed_share` of the layers (block recomputation). */
double hardware_model_flops(const ModelParams& model, double global_batch, double recomputed_share);

} // namespace cs
