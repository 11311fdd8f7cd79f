#include "workloads/training/layer_graph_training.hpp"

#include "workloads/training/pipeline_graph.hpp"
#include "workloads/training/pipeline_training.hpp"

#include <stdexcept>

namespace cs {

LayerGraphTraining build_layer_graph_training(const TrainingParams& w, const KernelCostModel& cost, int dp, int pp,
                                              const std::string& schedule_name, const PipelineSchedule& schedule,
                                              const GradientSync& sync, const PlatformSpec& platform)
{
  const auto& graph = w.model.graph;
  if (graph.empty())
    throw std::invalid_argument("the layer graph is empty");
  if (w.batch.global % (dp * w.batch.micro) != 0)
    throw std::invalid_argument("global batch does not divide into data-parallel ranks x micro batch");
  LayerGraphTraining out;
  TrainingGraph& t = out.training;
  t.microbatches = w.batch.global / (dp * w.batch.micro);
  t.ranks = dp * pp;
  t.pipeline_stages = pp;
  t.samples_per_iteration = w.batch.global;
  t.tokens_per_iteration = double(w.batch.global) * w.model.seq;
  double flops = 0;
  for (const auto& l : graph) {
    t.parameters += l.params;
    flops += l.flops;
  }
  t.model_flops_per_iteration = 3.0 * flops * w.batch.global;
  t.gradient_bytes = t.parameters * dtype_bytes(w.model.dtype);

  const auto seconds = layer_forward_seconds(graph, cost, w.batch.micro, w.model.dtype);
  std::vector<double> pass(seconds.size());
  for (std::size_t i = 0; i < seconds.size(); ++i)
    pass[i] = 3 * seconds[i]; // forward + backward, what the partitioners balance
  out.stages = schedule_name == "graph-pipeline" ? graph_stages(graph, pass, pp) : chain_stages(graph, pass, pp);
  std::vector<StageCost> costs(pp);
  out.stage_params.assign(pp, 0.0);
  out.stage_activation_bytes.assign(pp, 0.0);
  const bool dag = schedule_name == "graph-pipeline";
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const int s = out.stages.stage_of[i];
    costs[s].forward_s += seconds[i];
    costs[s].backward_s += 2 * seconds[i];
    out.stage_params[s] += graph[i].params;
    out.stage_activation_bytes[s] += graph[i].activations.value;
  }
  for (int s = 0; s < pp; ++s) {
    costs[s].model = "roofline";
    if (dag) {
      costs[s].successors = out.stages.successors[s];
      for (double b : out.stages.edge_bytes[s])
        costs[s].successor_bytes.push_back(b * w.batch.micro);
    } else if (!out.stages.edge_bytes[s].empty()) {
      costs[s].activation_bytes = out.stages.edge_bytes[s][0] * w.batch.micro;
    }
  }
  for (int s = 0; s < pp; ++s)
    t.layers_per_stage.push_back(0);
  for (int s : out.stages.stage_of)
    ++t.layers_per_stage[s];
  append_pipeline_iterations(t, w, cost, dp, pp, 1, schedule, sync, platform, costs, out.stage_params);
  out.stage_in_flight = t.in_flight_per_device; // one stage per device: replica 0's peak under the schedule
  t.graph.finalize();
  return out;
}

} // namespace cs
