#include "models/transformer/optimizer_precision.hpp"

#include "base/yaml_reader.hpp"
#include "models/kernels/kernel.hpp"

#include <fmt/format.h>

namespace cs {

// Megatron-Core hands the master weights to Transformer Engine's FusedAdam unless they are fp32 under an FP8 recipe
// other than delayed scaling (OptimizerConfig.use_precision_aware_optimizer_no_fp8_or_ds_fp8; it keeps them itself
// then, to cast them to the FP8 primary weights). FusedAdam given an fp32 master for a bf16 parameter keeps only the
// 16 bits the parameter lacks (store_param_remainders, Megatron-Core's default from TE 2.1).
double OptimizerPrecision::master_bytes(const std::string& param_dtype, const std::string& fp8_recipe) const
{
  if (!enabled)
    return 4;
  if (main_params == "fp16")
    return 2;
  const bool te_keeps_master = fp8_recipe.empty() || fp8_recipe == "delayed";
  return te_keeps_master && store_param_remainders && param_dtype == "bf16" ? 2 : 4;
}

double OptimizerPrecision::state_bytes(const std::string& param_dtype, const std::string& fp8_recipe) const
{
  if (!enabled)
    return 12;
  return master_bytes(param_dtype, fp8_recipe) + dtype_bytes(exp_avg) + dtype_bytes(exp_avg_sq);
}

double OptimizerPrecision::step_bytes_saved(const std::string& param_dtype, const std::string& fp8_recipe) const
{
  if (!enabled)
    return 0;
  return 2 * (12 - state_bytes(param_dtype, fp8_recipe)) + (4 - dtype_bytes(main_grads));
}

void read_optimizer_precision(ObjectReader& r, OptimizerPrecision& p)
{
  r.field("use_precision_aware_optimizer", p.enabled,
          "Megatron-Core --use-precision-aware-optimizer: Transformer Engine's FusedAdam keeps the master weights, "
          "main gradients and moments in the dtypes below")
      .choice("main_params_dtype", p.main_params, {"fp32", "fp16"},
              "dtype of the optimizer's master weights (--main-params-dtype); an fp32 master of a bf16 parameter that "
              "FusedAdam keeps takes 2 bytes under store_param_remainders")
      .choice("main_grads_dtype", p.main_grads, {"fp32", "bf16"},
              "dtype of the gradients the optimizer step reads (--main-grads-dtype)")
      .choice("exp_avg_dtype", p.exp_avg, {"fp32", "fp16", "bf16", "fp8"},
              "dtype of Adam's first moment (--exp-avg-dtype)")
      .choice("exp_avg_sq_dtype", p.exp_avg_sq, {"fp32", "fp16", "bf16", "fp8"},
              "dtype of Adam's second moment (--exp-avg-sq-dtype)")
      .field("store_param_remainders", p.store_param_remainders,
             "an fp32 master weight of a bf16 parameter is kept as the 16 bits the parameter lacks (Megatron-Core's "
             "OptimizerConfig.store_param_remainders, with Transformer Engine 2.1 or later)");
  if (p.enabled)
    return;
  for (const auto& [key, dtype] : {std::pair<const char*, const std::string&>{"main_params_dtype", p.main_params},
                                   {"main_grads_dtype", p.main_grads},
                                   {"exp_avg_dtype", p.exp_avg},
                                   {"exp_avg_sq_dtype", p.exp_avg_sq}})
    r.require(dtype == "fp32", key,
              fmt::format("{} can only be fp32 without the precision-aware optimizer (use_precision_aware_optimizer: "
                          "true), as Megatron-Core asserts",
                          key));
}

} // namespace cs
