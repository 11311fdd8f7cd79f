// Metrics of the MoE layers of a training run: all-to-all time and its exposed share, token load balance, dropped
// tokens, expert placement changes.
#pragma once

#include "core/run_metrics.hpp"
#include "core/timeline.hpp"
#include "workloads/training/training_builder.hpp"

namespace cs {

/** alltoall_time_s: per iteration, on the GPU that spends longest in them, the time from when it is ready to send
 *  an expert all-to-all until it holds the result (waiting for the others included), over the union of its
 *  all-to-alls; alltoall_exposed_fraction: the share of that time it does not compute. expert_load_imbalance
 *  (mean over steps of the busiest GPU's expert tokens over the mean; per layer in the breakdown) and its max,
 *  tokens_dropped (per iteration) and their share of the routed, expert_placement_changes and expert_moved_bytes
 *  (per iteration), moe_partitions (mean pipelined chunks per step). */
void add_moe_metrics(RunMetrics& metrics, const TrainingGraph& training, const Timeline& timeline);

} // namespace cs
