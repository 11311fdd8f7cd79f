// Megatron-Core's precision-aware optimizer: the dtypes its Adam keeps master weights, main gradients and moments in.
#pragma once

#include <string>

namespace cs {

class ObjectReader;

/** Megatron-Core's --use-precision-aware-optimizer with --main-params-dtype, --main-grads-dtype, --exp-avg-dtype and
 *  --exp-avg-sq-dtype (OptimizerConfig; Transformer Engine's FusedAdam keeps the state in them). Off, everything is
 *  fp32, as Megatron-Core requires. */
struct OptimizerPrecision {
  bool enabled = false;
  std::string main_params = "fp32";   // fp32 | fp16
  std::string main_grads = "fp32";    // fp32 | bf16
  std::string exp_avg = "fp32";       // fp32 | fp16 | bf16 | fp8
  std::string exp_avg_sq = "fp32";    // the same
  bool store_param_remainders = true; // an fp32 master weight of a bf16 parameter kept as its low 16 bits (TE >= 2.1)

  /** Bytes of the master weight a parameter of `param_dtype` has under `fp8_recipe` ("" = none). */
  double master_bytes(const std::string& param_dtype, const std::string& fp8_recipe) const;
  /** Bytes of optimizer state per parameter: the master weight and both Adam moments. */
  double state_bytes(const std::string& param_dtype, const std::string& fp8_recipe) const;
  /** Bytes per parameter the Adam step moves fewer than with every state in fp32: each state is read and written
   *  once a step and the main gradient read once. */
  double step_bytes_saved(const std::string& param_dtype, const std::string& fp8_recipe) const;
};

/** Reads the framework's use_precision_aware_optimizer, main_params_dtype, main_grads_dtype, exp_avg_dtype,
 *  exp_avg_sq_dtype and store_param_remainders; a dtype other than fp32 without the optimizer fails at its key. */
void read_optimizer_precision(ObjectReader& r, OptimizerPrecision& p);

} // namespace cs
