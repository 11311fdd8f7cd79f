// Metrics of the MoE layers of a training run: all-to-all time and its exposed share, token load balance, dropped
// tokens, expert placement changes.
#pragma once

#include "base/statistics.hpp"
#include "core/run_metrics.hpp"
#include "core/timeline.hpp"
#include "workloads/training/training_builder.hpp"

#include <map>

namespace cs {

/** alltoall_time_s: per iteration, on the GPU that spends longest in them, the time from when it is ready to send
 *  an expert all-to-all until it holds the result (waiting for the others included), over the union of its
 *  all-to-alls; alltoall_exposed_fraction: the share of that time it does not compute. expert_load_imbalance
 *  (mean over steps of the busiest GPU's expert tokens over the mean; per layer in the breakdown) and its max,
 *  tokens_dropped (per iteration) and their share of the routed, expert_placement_changes and expert_moved_bytes
 *  (per iteration), moe_partitions (mean pipelined chunks per step). */
void add_moe_metrics(RunMetrics& metrics, const TrainingGraph& training, const Timeline& timeline);

/** Per host (only `host` when >= 0), its expert all-to-alls as spans from each one's first task's start to its last
 *  task's end: the time the GPU is inside them (NCCL runs one as a kernel), waiting for its peers included. */
std::map<int, Intervals> alltoall_spans(const TaskGraph& graph, const Timeline& timeline, int host = -1);

} // namespace cs
