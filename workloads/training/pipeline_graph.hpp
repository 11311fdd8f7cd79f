// Builds the task graph of one pipeline-parallel iteration from a schedule: every F and B of every microbatch
// on every (virtual) stage is a task, with point-to-point activation transfers between devices.
#pragma once

#include "core/task_graph.hpp"
#include "models/collectives/collective.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"

#include <string>
#include <vector>

namespace cs {

/** Cost of one virtual stage (a model chunk on one device) for one microbatch. */
struct StageCost {
  double forward_s = 0;
  double backward_s = 0;
  double activation_bytes = 0; // sent to the next virtual stage (and its gradient back); 0 = no transfer
  std::string model;           // the cost model that answered (for traces); "" = given
  // Stage DAGs (graph pipelines, one stage per device): the stages this one feeds and the bytes each edge carries
  // per microbatch. Left empty on every stage, the stages form a chain with activation_bytes between neighbours.
  std::vector<int> successors;
  std::vector<double> successor_bytes;
};

/** The stage DAG of `costs` (successors per stage), or an empty vector when no stage names successors (a chain). */
std::vector<std::vector<int>> stage_dag(const std::vector<StageCost>& costs);

struct PipelineGraph {
  TaskGraph graph;
  int devices = 0, chunks = 0, microbatches = 0;
  std::vector<int> compute_streams;           // per device
  std::vector<std::vector<PipelineOp>> order; // the schedule, per device
  std::vector<std::vector<int>> op_tasks;     // per device, the task of each op in `order`
  std::vector<double> busy_s;                 // per device: its compute time
};

/** The tasks of one pipeline appended to a graph. */
struct PipelineTasks {
  std::vector<std::vector<PipelineOp>> order; // per device
  std::vector<std::vector<int>> op_tasks;     // per device, the task of each op in `order`
  std::vector<double> busy_s;                 // per device
};

/** Appends one pipeline iteration to `graph`: ops on `compute_streams[d]`, activation transfers on p2p streams
 *  from `pool` (channel 500), each device's first op after `ready[d]` (-1 = none). */
PipelineTasks append_pipeline(TaskGraph& graph, StreamPool& pool, const PipelineSchedule& schedule, int devices,
                              int vpp, int microbatches, const std::vector<StageCost>& costs,
                              const std::vector<int>& hosts, const std::vector<int>& compute_streams,
                              const std::vector<int>& ready, TaskLabels labels);

/** `hosts[d]` runs pipeline device d; `costs[c * devices + d]` is virtual stage c * devices + d. Forward of a
 *  microbatch on virtual stage k waits for its forward on k - 1; backward on k waits for its backward on k + 1
 *  (and the last stage's backward for its own forward). When the costs name successors (a stage DAG), forward
 *  waits for every predecessor and backward for every successor, sinks' backward for their own forward. Throws
 *  std::logic_error if the schedule deadlocks. */
PipelineGraph build_pipeline(const PipelineSchedule& schedule, int devices, int vpp, int microbatches,
                             const std::vector<StageCost>& costs, const std::vector<int>& hosts);

/** Megatron's bubble fraction: (iteration time - the busiest device's compute) / that compute. */
double bubble_fraction(const PipelineGraph& p, double iteration_time);
/** Per device, the most microbatch-chunks whose forward has run and backward has not (activations held). */
std::vector<int> peak_in_flight(const PipelineGraph& p);

} // namespace cs
