// Metrics of a training run, computed from its timeline: iteration time, throughput, traffic, where time went.
#pragma once

#include "core/common_metrics.hpp"
#include "core/run_metrics.hpp"
#include "core/timeline.hpp"
#include "platform/platform_spec.hpp"
#include "workloads/training/training_builder.hpp"

#include <map>
#include <string>

namespace cs {
namespace metric {

CS_METRIC(throughput_samples_per_s, PER_SECOND, "samples trained per second, all replicas together");
CS_METRIC(tokens_per_s, PER_SECOND, "tokens trained per second, all replicas together");
CS_METRIC(network_bytes_intra_node, BYTES, "bytes per iteration between GPUs of one node");
CS_METRIC(network_bytes_inter_node, BYTES, "bytes per iteration between nodes");
CS_METRIC(tflops_per_gpu, TFLOPS, "model FLOPs per iteration (no recomputation) per GPU per second");
CS_METRIC(hardware_tflops_per_gpu, TFLOPS, "FLOPs executed per iteration (recomputation included) per GPU per second");
CS_METRIC(mfu, FRACTION, "model FLOPs utilisation: tflops_per_gpu over the dtype's dense peak");
CS_METRIC(parameter_count, COUNT, "parameters of the model");
CS_METRIC(gradient_bucket_count, COUNT, "gradient buckets synchronised per iteration");
CS_METRIC(replicas_simulated, COUNT, "data-parallel replicas built in the task graph (the others folded)");
CS_METRIC(slowest_gpu_speed, RATIO, "speed of the slowest GPU relative to the catalog's (cluster.stragglers)");
CS_METRIC(bubble_fraction, RATIO, "pipeline runs: (iteration - busiest GPU's compute) over that compute");
CS_METRIC(pipeline_bubble_step_fraction, FRACTION, "the schedule's own idle on its busiest device, share of the step");
CS_METRIC(other_idle_step_fraction, FRACTION, "idle not due to the schedule (exposed communication, waits), of step");
CS_METRIC(time_to_train_s, SECONDS, "workload.tokens over tokens_per_s");
CS_METRIC(peak_memory_bytes, BYTES, "peak memory per GPU: weights, gradients, optimizer, activations, buffers");
CS_METRIC(memory_capacity_bytes, BYTES, "the device's memory");
CS_METRIC(fits_in_memory, FLAG, "peak_memory_bytes within the device's memory less workload.memory_reserve");

} // namespace metric

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
