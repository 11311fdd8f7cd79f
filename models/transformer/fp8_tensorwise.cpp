// Per-tensor current scaling (Transformer Engine's Float8CurrentScaling; Megatron-Core --fp8-recipe tensorwise,
// Megatron-Bridge's "FP8-CS"): each tensor's scale comes from its own amax, found by a pass over it just before the
// cast, so every quantisation reads its input twice. E4M3 for activations and weights, E5M2 for gradients.
#include "models/transformer/fp8_recipe.hpp"

namespace cs {

class TensorwiseFp8 : public Fp8Recipe {
public:
  std::string name() const override { return "tensorwise"; }
  double quantised_bytes() const override { return 2.0; } // one FP8 byte per layout; one scale per tensor
  bool amax_pass() const override { return true; }
};

CS_REGISTER_FP8_RECIPE(
    TensorwiseFp8, "tensorwise",
    "per-tensor current scaling: each tensor scaled by its own amax, found by a pass before the cast "
    "(Transformer Engine Float8CurrentScaling; Megatron-Bridge FP8-CS)");

} // namespace cs
