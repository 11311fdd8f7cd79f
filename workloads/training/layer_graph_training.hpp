// Builds pipeline- and data-parallel training of a generic layer graph (workload.model.graph).
#pragma once

#include "models/transformer/layer_graph.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "workloads/training/data_parallel_training.hpp"

namespace cs {

/** What a layer-graph build adds: how its layers were staged and each stage's activations per sample. */
struct LayerGraphTraining {
  TrainingGraph training;
  LayerStages stages;
  std::vector<double> stage_params;           // per stage
  std::vector<double> stage_activation_bytes; // per stage, per sample: the outputs its layers keep for backward
  std::vector<int> stage_in_flight;           // per stage, microbatches held at the peak (replica 0)
};

/** pp stages (one per device) of dp replicas, replica r's stage s on host r * pp + s. Each layer is one
 *  roofline-costed kernel (flops and bytes for `micro` samples); backward costs twice its forward (input and
 *  weight gradients). Chain schedules cut the layers contiguously in file order; `graph-pipeline` cuts them by
 *  branch (graph_stages) and runs the stage DAG. Model FLOPs are 3 x the layers' forward FLOPs per sample.
 *  Throws std::invalid_argument when the stages cannot be formed or the batch does not divide. */
LayerGraphTraining build_layer_graph_training(const TrainingParams& workload, const KernelCostModel& cost, int dp,
                                              int pp, const std::string& schedule_name,
                                              const PipelineSchedule& schedule, const GradientSync& sync,
                                              const PlatformSpec& platform);

} // namespace cs
