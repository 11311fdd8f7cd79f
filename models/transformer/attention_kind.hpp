// Attention kinds: the piece of a transformer layer from its normed input to the attention block's output (the
// projections and the attention core), one registered file each: multi-head and grouped-query attention, multi-head
// latent attention (MLA), sliding-window attention.
#pragma once

#include "base/registry.hpp"
#include "models/transformer/model_params.hpp"

#include <memory>
#include <string>

namespace cs {

class LayerKernels;

/** Per token, over all heads, the widths one attention block works in. */
struct AttentionWidths {
  double query = 0;  // queries (and the keys they are dotted with): heads x query head size
  double key = 0;    // keys as computed and kept: kv_heads x head size (grouped-query attention shares them)
  double value = 0;  // values as computed and kept
  double output = 0; // the attention core's output, the output projection's input: heads x value head size
};

/** One kind of attention. A kind reads its own parameters (configure: the keys under `model.<name>`; the default
 *  kind has none) and answers for one layer of `model`; everything it returns is for the whole layer (not one TP
 *  rank) unless it says so. */
class AttentionKind : public Configurable {
public:
  /** The name it is registered and chosen by. */
  virtual std::string name() const = 0;
  virtual AttentionWidths widths(const ModelParams& model) const = 0;
  /** Weights of its projections (and of any norms inside the block). */
  virtual double weights(const ModelParams& model) const = 0;
  /** Biases of its projections when the model has biases. */
  virtual double biases(const ModelParams& model) const = 0;
  /** Weights of the norms inside the block (QK-norm's per-head scales), not GEMM weights. */
  virtual double norm_parameters(const ModelParams& model) const { return 0.0; }
  /** Appends the block's kernels on one TP rank of out.shape(): projections, the attention core, the output
   *  projection (the norm before and the residual after are the layer's). */
  virtual void emit(LayerKernels& out) const = 0;
  /** Activation bytes per token it keeps for backward that tensor parallelism splits, in 16-bit units of the hidden
   *  size (Korthikanti et al.'s count: queries, keys, values and the output projection's input, 2 bytes each). */
  virtual double activation_units(const ModelParams& model) const;
  /** Activation bytes per token it keeps, in the same units, that tensor parallelism leaves whole on every rank (only
   *  sequence parallelism splits them): MLA's compressed latents. */
  virtual double replicated_units(const ModelParams& model) const { return 0.0; }
  /** Attention scores it keeps per token for backward, in the same units on a rank of `tp` (materialised attention:
   *  scores, softmax and dropout mask; fused attention: none). */
  virtual double score_units(const ModelParams& model, bool dropout, double tp) const { return 0.0; }
  /** Forward FLOPs of the attention core per token (the score and value products over the whole sequence, as
   *  Megatron counts them: no causal discount). */
  virtual double core_forward_flops_per_token(const ModelParams& model) const;
  /** Forward FLOPs per token that its own recompute modules (MLA's mla_up_proj) run again in backward, when the
   *  model selects them. */
  virtual double rerun_flops_per_token(const ModelParams& model) const { return 0.0; }
  /** Why `tp` ranks cannot split it (e.g. heads that do not divide), or "". */
  virtual std::string tp_problem(const ModelParams& model, int tp) const = 0;
  /** Fails at the offending key of its block (`block`, read by configure) when its parameters do not fit the model's
   *  shape; called once the whole model is read. */
  virtual void check(const ObjectReader& block, const ModelParams& model) const {}
};

/** The attention kind of `model`: the one it was configured with, else multi-head / grouped-query attention. */
const AttentionKind& attention_kind_of(const ModelParams& model);
/** A new instance of the registered kind `name` (not configured); throws std::out_of_range listing the names. */
std::shared_ptr<AttentionKind> make_attention_kind(const std::string& name);

/** Reads the attention kind a `model:` map names by giving its block (`model.<kind>: {...}`; none: the default), and
 *  documents every kind's block in describe mode. At most one block; fails at the second. */
void read_attention_kind(ObjectReader& model_reader, ModelParams& model);

/** Registers `Type` as attention kind `name` at static-initialisation time. */
#define CS_REGISTER_ATTENTION_KIND(Type, name, description)                                                            \
  static const bool cs_registered_attention_##Type = ::cs::Registry<::cs::AttentionKind>::instance().add(              \
      name, description, [] { return std::unique_ptr<::cs::AttentionKind>(new Type()); })

} // namespace cs
