// Delayed scaling (Transformer Engine's DelayedScaling, Megatron-Core --fp8-recipe delayed, the default of
// --fp8-format hybrid before 2025): a tensor's scale comes from the amax history of earlier steps, and the cast
// records this step's amax as it goes, so a quantisation is one pass, and a norm fused with the linear after it can
// write its output in FP8 directly.
#include "models/transformer/fp8_recipe.hpp"

namespace cs {

class DelayedFp8 : public Fp8Recipe {
public:
  std::string name() const override { return "delayed"; }
  double quantised_bytes() const override { return 2.0; }
  bool amax_pass() const override { return false; }
  bool quantises_in_norm() const override { return true; }
};

CS_REGISTER_FP8_RECIPE(DelayedFp8, "delayed",
                       "per-tensor delayed scaling: scales from the amax history of earlier steps, one pass per cast "
                       "(Transformer Engine DelayedScaling)");

} // namespace cs
