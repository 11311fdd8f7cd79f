// Emits a pipeline schedule into a task graph: every op (forward, backward, or split backward passes) of every
// microbatch on every virtual stage, as one task or piece by piece, with point-to-point transfers between devices.
#pragma once

#include "models/collectives/collective.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "workloads/training/stage_costs.hpp"
#include "workloads/training/training_extension.hpp"

#include <functional>
#include <vector>

namespace cs {

/** The stage DAG of `costs` (successors per stage), or an empty vector when no stage names successors (a chain). */
std::vector<std::vector<int>> stage_dag(const std::vector<StageCost>& costs);

/** The tasks of one op. A piece-by-piece op has one task per non-empty piece: a run of segments ending in one that
 *  takes time (segments of no time join the next piece, or the last one). */
struct OpTasks {
  int first = -1, last = -1;
  std::vector<int> pieces;                         // tasks, in execution order
  std::vector<std::pair<int, int>> piece_segments; // per piece: [begin, end) in execution order of the segments
  std::vector<int> piece_first;                    // per piece: its first task (an MoE layer is a chain of tasks)
};

/** The tasks of one pipeline appended to a graph. */
struct PipelineTasks {
  std::vector<std::vector<PipelineOp>> order; // per device
  std::vector<std::vector<OpTasks>> ops;      // per device, per op of `order`
  std::vector<double> busy_s;                 // per device
};

/** What append_pipeline needs: the schedule's shape and costs, where devices run, and which ops run in pieces. */
struct PipelineInput {
  const PipelineSchedule* schedule = nullptr;
  StageMap map; // the schedule's placement of the virtual stages on the devices
  int microbatches = 0;
  const std::vector<StageCost>* costs = nullptr;             // one per virtual stage of `map`
  std::vector<int> hosts;                                    // per device
  std::vector<int> compute_streams;                          // per device
  std::vector<int> ready;                                    // per device: its first op waits for this task (-1 = none)
  TaskLabels labels;                                         // iteration and (for traces) the rest
  std::function<bool(int device, std::size_t op)> in_pieces; // empty = every op is one task
  bool blocking_sends = false;       // a device's next op waits for its sends (Megatron synchronises after each p2p)
  bool sends_wait_same_pass = false; // with blocking sends: the next op of the same pass waits, not the next op
  /** The ops each device runs (null: the schedule's order): the builder's, which may pair ops (combined 1F1B). */
  const std::vector<std::vector<PipelineOp>>* order = nullptr;
  /** The extensions that emit the segments they claim (training_extension.hpp); ops with claimed segments always run
   *  piece by piece. `replica`: the replica these devices belong to. */
  std::vector<TrainingExtension*> extensions;
  int replica = 0;
};

/** Segment indices of virtual stage `costs` in the order `pass` runs them (forward order, or reversed). */
std::vector<int> segment_order(const StageCost& cost, Pass pass);

/** Forward of a microbatch on virtual stage k waits for its forward on k - 1; the gradient-sending backward on k
 *  waits for that on k + 1 (the last stage's for its own forward); a weight pass waits for its input pass. With a
 *  stage DAG, forward waits for every predecessor and backward for every successor. Activations and their
 *  gradients travel on p2p streams (channels 500 and 501). */
PipelineTasks append_pipeline(TaskGraph& graph, StreamPool& pool, const PipelineInput& in);

struct PipelineGraph {
  TaskGraph graph;
  int devices = 0, chunks = 0, microbatches = 0;
  std::vector<int> compute_streams;           // per device
  std::vector<std::vector<PipelineOp>> order; // the schedule, per device
  std::vector<double> busy_s;                 // per device: its compute time
};

/** One iteration of a pipeline alone (hosts[d] runs device d), finalized; for schedule tests. Throws
 *  std::logic_error if the schedule deadlocks. */
PipelineGraph build_pipeline(const PipelineSchedule& schedule, int devices, int vpp, int microbatches,
                             const std::vector<StageCost>& costs, const std::vector<int>& hosts);

/** Megatron's bubble fraction: (iteration time - the busiest device's compute) / that compute. */
double bubble_fraction(const PipelineGraph& p, double iteration_time);
/** Per device, the most microbatch-chunks whose activations it holds at once. */
std::vector<int> peak_in_flight(const PipelineGraph& p);

} // namespace cs
