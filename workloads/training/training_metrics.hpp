// Metrics of a training run, computed from its timeline: iteration time, throughput, traffic, where time went.
#pragma once

#include "core/run_metrics.hpp"
#include "core/timeline.hpp"
#include "platform/platform_spec.hpp"
#include "workloads/training/training_builder.hpp"

#include <map>
#include <string>

namespace cs {

/** iteration_time_s is the mean spacing of iteration ends (an iteration ends with its last optimizer step);
 *  with one iteration it is that iteration's end. Breakdown figures are per iteration, for the busiest rank:
 *  compute_s (kernel time), communication_s (time during which some gradient bucket is being synchronised),
 *  link_busy_busiest_rank_s (time that rank's own sends occupy its comm stream), exposed_communication_s
 *  (iteration time not covered by compute) and overlap_fraction (share of communication hidden by compute).
 *  By kind (gradient_sync, p2p, parameter_gather, tp), on the busiest rank: communication_<kind>_s, the time
 *  some transfer of that kind it sends is moving, and hidden_<kind>_fraction, the share of it during which the
 *  rank also computes. */
RunMetrics training_metrics(const TrainingGraph& training, const Timeline& timeline, const PlatformSpec& platform);

} // namespace cs
