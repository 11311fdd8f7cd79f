// MLP kinds: the feed-forward block of a transformer layer (and of each expert), one registered file each: GeLU's
// up-activation-down, SwiGLU's gated product.
#pragma once

#include "base/registry.hpp"

#include <memory>
#include <string>

namespace cs {

class LayerKernels;
struct ModelParams;

/** One kind of MLP over `inner` units between `hidden` ones. */
class MlpKind {
public:
  virtual ~MlpKind() = default;
  /** Weights of its matrices (hidden x inner each). */
  virtual double weights(double hidden, double inner) const = 0;
  /** Biases of its inner-side outputs (the down projection's hidden-sized bias is counted apart). */
  virtual double inner_biases(double inner) const = 0;
  /** Activation bytes per token it keeps for backward, in 16-bit units of `inner` (Korthikanti et al.: GeLU's input
   *  and output, 4; SwiGLU's gate, up and product, 6). */
  virtual double activation_units() const = 0;
  /** Appends its kernels over `tokens` tokens with `inner` units on this rank (already split over TP), with biases or
   *  not. */
  virtual void emit(LayerKernels& out, double tokens, double inner, bool bias) const = 0;
};

/** An MLP of two matrices, up and down, with an elementwise activation between them and no gate (GeLU, squared ReLU):
 *  it keeps the activation's input and output for backward (4 units). A kind appends only its activation's kernels. */
class UngatedMlp : public MlpKind {
public:
  double weights(double hidden, double inner) const override { return 2.0 * hidden * inner; }
  double inner_biases(double inner) const override { return inner; }
  double activation_units() const override { return 4.0; }
  void emit(LayerKernels& out, double tokens, double inner, bool bias) const override;

protected:
  /** Appends the activation over `elements` inner units (and the up projection's bias, when `bias`). */
  virtual void activation(LayerKernels& out, double elements, bool bias) const = 0;
};

/** The MLP kind registered as `name`; throws std::out_of_range listing the names. Kinds are stateless: one instance
 *  each, made on first use. */
const MlpKind& mlp_kind(const std::string& name);
/** The MLP kind of `model` (model.mlp). */
const MlpKind& mlp_kind_of(const ModelParams& model);

/** Registers `Type` as MLP kind `name` at static-initialisation time. */
#define CS_REGISTER_MLP_KIND(Type, name, description)                                                                  \
  static const bool cs_registered_mlp_##Type = ::cs::Registry<::cs::MlpKind>::instance().add(                          \
      name, description, [] { return std::unique_ptr<::cs::MlpKind>(new Type()); })

} // namespace cs
