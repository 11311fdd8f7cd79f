// Builds the task graph of data-parallel transformer training: forward, backward, bucketed gradient sync, optimizer.
#pragma once

#include "core/task_graph.hpp"
#include "models/cost/kernel_cost_model.hpp"
#include "policies/sync/gradient_sync.hpp"
#include "workloads/training/training_params.hpp"

#include <vector>

namespace cs {

/** What the builder made, beyond the graph: the facts metrics need. */
struct TrainingGraph {
  TaskGraph graph;
  int ranks = 0;
  int microbatches = 0;                          // per rank per iteration
  std::vector<std::vector<int>> optimizer_tasks; // [iteration][rank]
  std::vector<int> compute_streams;              // per rank

  double parameters = 0;
  double gradient_bytes = 0; // per rank per iteration
  int buckets = 0;
  double model_flops_per_iteration = 0;
  double samples_per_iteration = 0;
  double tokens_per_iteration = 0;
  int pipeline_stages = 1;
  double tp_seconds_per_iteration = -1; // pipeline builds fold TP all-reduces into passes: their time per GPU
  int tensor_parallel = 1;
  int chunks = 1;                        // model chunks per pipeline device
  int max_layers_per_device = 0;         // pipelines: the most layers any device holds (its chunks together)
  std::vector<int> layers_per_stage;     // pipelines: layers of each virtual stage
  int in_flight_peak = 1;                // most microbatch-chunks whose activations a pipeline device holds at once
  std::vector<int> in_flight_per_device; // pipelines: that peak per device (replica 0)
  std::vector<int> layers_per_device;    // pipelines: layers each device holds (its chunks together)
};

/** One rank per GPU (host index = rank). Each rank runs its microbatches' forward and backward passes layer by
 *  layer, each layer's time the sum of its kernels' costs under `cost`; during the last microbatch's backward pass,
 * gradients fill buckets of `workload.gradient_bucket` bytes that `sync` reduces on the communication stream while
 * backward goes on (PyTorch DDP-style overlap, no_sync on earlier microbatches); the optimizer step waits for every
 * bucket. Requires tp = pp = 1 and global batch divisible by dp x micro (checked by the scenario checks). */
/** `one_replica`: build only replica 0 (its TP ranks) and price every collective (gradient sync, ZeRO gathers,
 *  TP all-reduces) by its closed form as a delay: the planner's fast estimate, exact for the replica's compute,
 *  approximate for communication and the sync policy (always an all-reduce here). */
TrainingGraph build_data_parallel_training(const TrainingParams& workload, const KernelCostModel& cost, int ranks,
                                           const GradientSync& sync, const PlatformSpec& platform,
                                           bool one_replica = false);

} // namespace cs
