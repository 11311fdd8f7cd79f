// Block-wise scaling (DeepSeek-V3, §3.3.2; Megatron-Core --fp8-recipe blockwise): activations and gradients scaled per
// 1 x 128 tile, weights per 128 x 128 block, an fp32 scale for each, found inside the cast. The GEMMs apply the scales
// as they accumulate, at the share of the per-tensor rate the device profile gives block scaling (gemm.scaling_rate:
// measured on the lent H200, cuBLAS 13.1 through PyTorch's scaled_mm, 0.87 of tensor-wise over 8 transformer shapes).
#include "models/transformer/fp8_recipe.hpp"

namespace cs {

class BlockwiseFp8 : public Fp8Recipe {
public:
  std::string name() const override { return "blockwise"; }
  double quantised_bytes() const override { return 2.0 * (1.0 + 4.0 / 128); } // an fp32 scale per 128 elements
  bool amax_pass() const override { return false; }
  std::string gemm_scaling() const override { return "blockwise"; }
};

CS_REGISTER_FP8_RECIPE(BlockwiseFp8, "blockwise",
                       "DeepSeek-V3's block-wise scaling: 1 x 128 tiles for activations and gradients, 128 x 128 "
                       "blocks for weights, scales found inside the cast");

} // namespace cs
