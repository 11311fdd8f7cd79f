// Builds pipeline- and data-parallel transformer training: pp stages inside a replica, dp replicas across.
#pragma once

#include "policies/pipeline/pipeline_schedule.hpp"
#include "workloads/training/data_parallel_training.hpp"
#include "workloads/training/pipeline_graph.hpp"

namespace cs {

/** Replica r's stage s runs on host r * pp + s (pipeline stages share a node first, data parallelism spans
 *  nodes; see pipeline_host for the other placement). Each virtual stage holds layers / (pp x v) layers (the first also
 * the embedding, the last the head) costed by `cost`; activations of micro x seq x hidden travel between stages on p2p
 * streams. After a device's last backward pass of a chunk, that chunk's gradients are synchronised over its
 * data-parallel group in buckets; the device's Adam step waits for all of them. Throws std::invalid_argument when the
 * layers do not divide into the stages or the schedule cannot run the microbatches. */
/** Layers per virtual stage (pp devices x v chunks; stage c * pp + d is chunk c of device d). Even: layers / stages
 *  each, any remainder to the first stages. Balanced: the last device, which also runs the output layer (head_s per
 *  microbatch), keeps the number of layers that makes the slowest device fastest; the other devices share the
 *  rest; each device spreads its layers over its chunks. layer_s and head_s are forward + backward seconds. */
std::vector<int> partition_layers(int layers, int pp, int v, double layer_s, double head_s, bool balanced);

/** One of Megatron's blocking TP collectives after a block pass (micro x seq x hidden activations over a TP group
 *  inside a node), by the tuner's closed form: an all-reduce, or a reduce-scatter and an all-gather with sequence
 *  parallelism. 0 when tp = 1. */
double tp_block_collective_seconds(const ModelParams& model, int micro, int tp, bool sequence_parallel,
                                   const PlatformSpec& platform);

/** The first GPU (TP rank 0) of pipeline stage `stage` of data-parallel replica `replica`. TP groups are always
 *  consecutive GPUs inside a node; placement tp-pp-dp (the default) puts a replica's stages next, so pipelines
 *  share a node and data parallelism spans nodes; tp-dp-pp puts the replicas of a stage next instead. */
int pipeline_host(const ParallelParams& parallel, int dp, int replica, int stage);

/** Appends `workload.iterations` iterations of dp pipeline replicas with these per-stage costs (pp devices,
 * costs.size() / pp chunks each, or a stage DAG when the costs name successors) to out.graph: replica r's device s on
 * host (r * pp + s) * tp; after a device's last backward of a stage, that stage's gradients (stage_params[vs]
 *  parameters) are synchronised over its data-parallel group in buckets; the device's Adam step waits for them.
 *  Needs out.microbatches. */
void append_pipeline_iterations(TrainingGraph& out, const TrainingParams& workload, const KernelCostModel& cost, int dp,
                                int pp, int tp, const PipelineSchedule& schedule, const GradientSync& sync,
                                const PlatformSpec& platform, const std::vector<StageCost>& costs,
                                const std::vector<double>& stage_params, bool one_replica = false);

/** `one_replica`: replica 0 only, gradient sync priced by the all-reduce closed form (see
 *  build_data_parallel_training). */
TrainingGraph build_pipeline_training(const TrainingParams& workload, const KernelCostModel& cost, int dp, int pp,
                                      const PipelineSchedule& schedule, const GradientSync& sync,
                                      const PlatformSpec& platform, bool one_replica = false);

} // namespace cs
