// Metrics of the MoE layers of a training run: all-to-all time and its exposed share, token load balance, dropped
// tokens, expert placement changes.
#pragma once

#include "base/statistics.hpp"
#include "core/run_metrics.hpp"
#include "core/timeline.hpp"
#include "workloads/training/training_builder.hpp"

#include <map>

namespace cs {
namespace metric {

CS_METRIC(alltoall_time_s, SECONDS, "per iteration, the expert all-to-all time of the GPU inside them longest");
CS_METRIC(alltoall_exposed_fraction, FRACTION, "share of alltoall_time_s during which that GPU does not compute");
CS_METRIC(expert_load_imbalance, RATIO, "mean over steps of the busiest GPU's expert tokens over the mean");
CS_METRIC(expert_load_imbalance_max, RATIO, "largest expert_load_imbalance of any step");
CS_METRIC(tokens_dropped, COUNT, "tokens dropped by expert capacity per iteration");
CS_METRIC(tokens_dropped_fraction, FRACTION, "dropped tokens over routed tokens");
CS_METRIC(expert_placement_changes, COUNT, "expert placement changes (dynamic placement policies)");
CS_METRIC(expert_moved_bytes, BYTES, "expert weights moved per iteration by placement changes");
CS_METRIC(moe_partitions, COUNT, "mean pipelined chunks per MoE layer step");

} // namespace metric

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
