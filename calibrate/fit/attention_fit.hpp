// Fitting a device profile's attention curve (share of peak against sequence, pass, causal mask and head size) to
// measured attention kernels.
#pragma once

#include "models/cost/device_profile.hpp"
#include "models/devices/device_catalog.hpp"
#include "models/kernels/kernel.hpp"

#include <vector>

namespace cs {

/** One measured attention kernel. */
struct AttentionSample {
  AttentionKernel kernel;
  double seconds = 0;
};

/** The curve that best explains `samples` (all of one kernel: FlashAttention-2's or cuDNN's) as launch + FLOPs /
 *  (peak x share), by minimising the squared relative error: the forward and backward asymptotes in closed form,
 *  the half-way sequences, the causal scales and the head-size half-point by grid search. Causal scales stay 1
 *  without causal samples, and the head-size term 0 with one head size. Throws std::invalid_argument without
 *  samples of both passes or when a fitted asymptote exceeds the peak. */
AttentionEfficiency fit_attention_curve(const std::vector<AttentionSample>& samples, const DeviceSpec& device,
                                        double launch_overhead);

} // namespace cs
