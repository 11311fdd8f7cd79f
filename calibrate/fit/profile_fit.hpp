// Fitting a device profile to measurements by least squares, and scoring a cost model against measurements.
#pragma once

#include "calibrate/fit/measurements.hpp"
#include "models/cost/kernel_cost_model.hpp"

#include <string>
#include <vector>

namespace cs {

struct FitOptions {
  int holdout_every = 4;    // every n-th measurement (sorted by kernel description) is held out of the fit
  bool with_tables = false; // also store the training measurements as profiled tables
  /** A profile whose parameters the measurements do not determine are kept (a peer-copy bandwidth where one GPU
   *  was measured, the curve of a kernel not run); nullptr: those stay at their defaults. */
  const DeviceProfile* base = nullptr;
};

/** One kernel's prediction against its measurement. */
struct Residual {
  std::string kernel; // describe_kernel()
  std::string family;
  std::string model; // which model answered
  double measured = 0;
  double predicted = 0;
  double relative_error = 0; // (predicted - measured) / measured
  bool held_out = false;
};

struct FitResult {
  DeviceProfile profile;
  std::vector<Residual> residuals; // every measurement, held-out ones flagged
  std::string gemm_choice;         // which tile set and CTAs per SM won
  std::string attention_choice;    // the attention curves fitted, or ""
};

/** Fits launch overhead, per-dtype compute efficiency, memory efficiency and copy bandwidths by weighted least
 *  squares on relative error (Eigen), for GPUs the GEMM tile set, CTAs per SM and the tiles' prologue and
 *  epilogue (in K-steps) by grid search on the training residual, and the attention curves (FlashAttention-2's and
 *  cuDNN's, attention_fit.hpp) from attention measurements. Throws std::invalid_argument when the measurements
 *  cannot determine a parameter or imply an efficiency above 1 (faster than the catalog's peak). */
FitResult fit_profile(const Measurements& measurements, const DeviceSpec& device, const FitOptions& options);

/** Predicts every measurement with `model`. */
std::vector<Residual> evaluate(const KernelCostModel& model, const Measurements& measurements);

/** Median and 90th percentile of |relative error|, and the median of the signed error (a uniform slowdown shows
 *  there even when every |error| is small). */
struct ErrorStats {
  int count = 0;
  double median = 0;
  double p90 = 0;
  double bias = 0;
};
ErrorStats error_stats(const std::vector<Residual>& residuals);

} // namespace cs
