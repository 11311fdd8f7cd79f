// The one training builder: a stage-cost source's stages, placed on GPUs, run by a pipeline schedule (pp = 1 is a
// pipeline of one stage), with gradient synchronisation and ZeRO through the sync policy, and the optimizer step.
#pragma once

#include "core/task_graph.hpp"
#include "models/collectives/lowering.hpp"
#include "models/cost/kernel_cost_model.hpp"
#include "models/moe/moe_policy.hpp"
#include "platform/stragglers.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "policies/sync/gradient_sync.hpp"
#include "workloads/training/moe_stats.hpp"
#include "workloads/training/stage_costs.hpp"

#include <vector>

namespace cs {

/** Everything the builder needs, in one place. */
struct TrainingPlan {
  const TrainingParams* params = nullptr;
  const StageSet* stages = nullptr;
  const PipelineSchedule* schedule = nullptr;
  const GradientSync* sync = nullptr;
  const PlatformSpec* platform = nullptr;
  const KernelCostModel* cost = nullptr; // the optimizer step
  ParallelLayout parallel;               // the resolved degrees and where ranks run
  GradientOverlap overlap = GradientOverlap::DURING_BACKWARD;
  // Data-parallel replicas see the same network on an idle non-blocking fabric: simulate replica 0 alone; the
  // collectives whose other members are left out are then priced by their closed forms (the planner's estimate).
  bool one_replica = false;
  // MoE under routing that differs by EP group: the replicas of EP group 0 alone (0: all, or one_replica), running
  // the routing of group `routing_group` (the slowest), whose own routing goes to group 0's place; the other groups'
  // all-to-alls are counted (traffic, statistics) but not simulated.
  int replicas_built = 0;
  int routing_group = 0;
  // The same routing that differs by EP group, folded to replica 0 alone (one_replica): each MoE step runs the
  // expert work of its group's slowest rank, since a layer's combine holds every rank of the group until the slowest
  // has sent; the group runs group `routing_group`'s routing, and the other groups' all-to-alls are counted.
  bool slowest_rank = false;
  // Each device's speed before any fold (cluster.stragglers, a TP group at its slowest rank's): the slowest rank is
  // the one whose expert work at its own speed takes longest. Null: every device at the catalog's speed.
  const StragglerModel* device_speeds = nullptr;
  /** Replicas the builder simulates: all dp, replica 0 alone (one_replica), or one EP group's (replicas_built). */
  int replicas_to_build() const { return one_replica ? 1 : replicas_built > 0 ? replicas_built : parallel.dp; }
  // MoE models: how tokens choose experts and the placement/pipelining policy; the run's seed for the routing.
  const RoutingModel* routing = nullptr;
  MoePolicy* moe = nullptr;
  std::uint64_t seed = 0;
  // The analytical backend prices MoE all-to-all-v by its closed form: list-scheduled per-pair flows serialise where
  // SimGrid shares links (docs/moe.md, "Backends").
  bool alltoall_v_closed_form = false;
  int device_sms = 0; // the GPU's SMs (a dispatcher that reserves SMs takes its share of them)
};

/** What the builder made, beyond the graph: the facts metrics, memory and the summary need. */
struct TrainingGraph {
  TaskGraph graph;      // with COLLECTIVE tasks until lower_training
  int ranks = 0;        // GPUs: dp x tp x pp
  int microbatches = 0; // per replica per iteration
  int pipeline_stages = 1, tensor_parallel = 1, chunks = 1;
  std::vector<std::vector<int>> optimizer_tasks; // [iteration][simulated device]
  std::vector<int> compute_streams;              // per simulated device
  double parameters = 0;
  int buckets = 0; // gradient buckets per iteration over all stages
  double model_flops_per_iteration = 0, hardware_flops_per_iteration = 0;
  double samples_per_iteration = 0, tokens_per_iteration = 0;
  double tp_seconds_per_iteration = 0;        // TP collectives folded into a device's passes, per iteration
  int context_parallel = 1;                   // cp: the ranks each sample's sequence is split over
  double cp_seconds_per_iteration = 0;        // CP key/value exchanges folded into them (exposed), per iteration
  double tp_bytes_per_iteration = 0;          // what those collectives move, over every TP group of the cluster
  double cp_intra_bytes_per_iteration = 0;    // what the CP exchanges move inside nodes, over every CP group
  double cp_inter_bytes_per_iteration = 0;    // and between nodes
  std::vector<int> in_flight_per_device;      // most microbatch-chunks of activations each device holds (replica 0)
  std::vector<std::vector<PipelineOp>> order; // the schedule's ops per pipeline device, one iteration
  std::vector<int> layers_per_device;
  int replicas_built = 1;    // data-parallel replicas simulated (the others, symmetric, are not; their transfers are
                             // counted as replica 0's)
  int routing_group = -1;    // an EP group fold: the group whose routing the simulated group ran (-1: none)
  bool slowest_rank = false; // that group folded to one replica running its slowest rank's expert work
  double closed_form_intra_bytes = 0, closed_form_inter_bytes = 0; // collectives priced by their closed forms
  std::vector<double> closed_form_link_bytes;                      // the same per link (empty: none)
  double closed_form_expansion_tasks = 0;                          // tasks their expansions would have added
  MoeStats moe;                                                    // MoE models: what the expert layers did
};

/** Builds `plan.params->iterations` iterations. Replica r's pipeline device d is TP rank 0 of its group, on host
 *  plan.parallel.host(r, d); the other TP ranks do the same work and are not simulated. Throws std::invalid_argument
 *  when the batch does not divide or the schedule cannot run. */
TrainingGraph build_training(const TrainingPlan& plan);

/** Lowers the graph's collectives (models/collectives/lowering.hpp) and remaps the task ids it holds. */
void lower_training(TrainingGraph& training, const PlatformSpec& platform, CollectivePricing pricing);
/** Replaces the graph by `lowered`, made from it by lower_collectives, and remaps the task ids it holds. */
void adopt_lowering(TrainingGraph& training, LoweredGraph lowered);

} // namespace cs
