// MXFP8 (the OCP Microscaling format; Transformer Engine's MXFP8BlockScaling, Megatron-Core --fp8-recipe mxfp8):
// 32-element blocks sharing a power-of-two (E8M0) scale, applied by the tensor cores themselves, which only
// Blackwell's have: a device runs it when its catalog entry lists an mxfp8 peak.
#include "models/transformer/fp8_recipe.hpp"

#include <fmt/format.h>

namespace cs {

class Mxfp8 : public Fp8Recipe {
public:
  std::string name() const override { return "mxfp8"; }
  double quantised_bytes() const override { return 2.0 * (1.0 + 1.0 / 32); } // a one-byte scale per 32 elements
  bool amax_pass() const override { return false; }
  std::string device_problem(const DeviceSpec& device) const override
  {
    return device.peak("mxfp8") > 0
               ? ""
               : fmt::format("{} has no block-scaled (MX) tensor cores: mxfp8 needs Blackwell", device.name);
  }
};

CS_REGISTER_FP8_RECIPE(Mxfp8, "mxfp8",
                       "OCP MXFP8: 32-element blocks with a shared power-of-two scale applied by the tensor cores "
                       "(Blackwell only)");

} // namespace cs
