// FP8 training recipes (Transformer Engine's, as Megatron-Core's --fp8-recipe names them): which GEMMs of a layer run
// in FP8, the quantisation kernels around them, and the FP8 copies they keep. One registered file per recipe.
#pragma once

#include "base/registry.hpp"
#include "models/devices/device_catalog.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cs {

class LayerKernels;
struct NamedKernel;

/** A recipe prices a transformer layer's linear layers in FP8: the forward (x . W), input-gradient (dy . W^T) and
 *  weight-gradient (x^T . dy) GEMMs in FP8, and what it takes to quantise their operands. The activations, the
 *  attention core, the norms and the output layer stay in the model's dtype (bf16), as in Megatron-Core. */
class Fp8Recipe : public Configurable {
public:
  virtual std::string name() const = 0;
  /** Appends linear `name`'s kernels for x (tokens x k) times W (k x n), in FP8, to `b`. `from_norm`: x is the output
   *  of a norm fused with the linear (Transformer Engine's LayerNormLinear), which casts it itself where the recipe
   *  lets it (quantises_in_norm). */
  void linear(LayerKernels& b, const std::string& name, double tokens, double n, double k, bool bias,
              bool from_norm = false) const;
  /** The once-per-step casts of `weights` GEMM weights (bf16, `element_bytes` each) to their FP8 copies in both
   *  layouts, which Transformer Engine then caches over the step's microbatches: an amax pass first where the scale
   *  is the tensor's own. */
  std::vector<NamedKernel> weight_casts(double weights, double element_bytes) const;
  /** Whether a norm fused with the next linear writes its output in FP8 itself: the scale is known before the tensor
   *  is (delayed scaling), so the norm kernel casts as it writes and no cast of its own follows. */
  virtual bool quantises_in_norm() const { return false; }
  /** Bytes per element written when a bf16 tensor is quantised for both GEMM layouts (rowwise for one GEMM,
   *  columnwise for the other), scales included. */
  virtual double quantised_bytes() const = 0;
  /** Whether the scale of a tensor is its own amax, found by a pass of its own before the cast (current scaling),
   *  rather than one fused into the cast (delayed scaling, block scaling). */
  virtual bool amax_pass() const = 0;
  /** Bytes per GEMM weight the recipe keeps besides the bf16 weight: its FP8 copies for the two layouts, cached
   *  across the microbatches of a step. */
  double weight_copy_bytes() const { return quantised_bytes(); }
  /** How its GEMMs apply the scales (GemmKernel::scaling): "" per tensor. */
  virtual std::string gemm_scaling() const { return ""; }
  /** Bytes per element of a linear layer's input saved for the backward (its FP8 copy for the weight gradient). */
  virtual double saved_input_bytes() const { return 1.0; }
  /** Why `device` cannot run this recipe, or "". */
  virtual std::string device_problem(const DeviceSpec& device) const;
};

/** A new instance of registered recipe `name`; throws std::out_of_range listing the names. */
std::shared_ptr<Fp8Recipe> make_fp8_recipe(const std::string& name);
/** The registered recipes' names. */
std::vector<std::string> fp8_recipe_names();

/** Registers `Type` as FP8 recipe `name` at static-initialisation time. */
#define CS_REGISTER_FP8_RECIPE(Type, name, description)                                                                \
  static const bool cs_registered_fp8_##Type = ::cs::Registry<::cs::Fp8Recipe>::instance().add(                        \
      name, description, [] { return std::unique_ptr<::cs::Fp8Recipe>(new Type()); })

} // namespace cs
