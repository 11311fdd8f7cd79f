// The stage-cost source of a generic layer graph (workload.model.graph).
#include "models/collectives/collective_model.hpp"
#include "models/transformer/layer_graph.hpp"
#include "workloads/training/stage_costs.hpp"

#include <stdexcept>

namespace cs {
namespace {

// [recon] Megatron's split generalised to any layer: each TP rank runs 1/tp of its flops and bytes and holds 1/tp
// of its parameters, and the layer's output is all-reduced over the TP group once per pass.
std::vector<GraphLayerParams> split_over_tp(std::vector<GraphLayerParams> graph, int tp)
{
  for (auto& l : graph) {
    l.flops /= tp;
    l.bytes.value /= tp;
    l.params /= tp;
    if (l.kernel)
      l.kernel = scale_kernel(*l.kernel, 1.0 / tp);
  }
  return graph;
}

} // namespace

StageSet layer_graph_stages(const TrainingParams& params, const KernelCostModel& cost, const PlatformSpec& platform,
                            const StageShape& shape)
{
  const auto& whole = params.model.graph;
  if (whole.empty())
    throw std::invalid_argument("the layer graph is empty");
  const int pp = shape.map.devices(), tp = shape.parallel.tp, micro = params.batch.micro;
  const auto graph = tp > 1 ? split_over_tp(whole, tp) : whole;
  StageSet out;
  out.map = shape.map;
  double flops = 0;
  for (const auto& l : whole) {
    out.parameters += l.params;
    flops += l.flops;
  }
  out.model_flops_per_iteration = 3.0 * flops * params.batch.global;
  out.hardware_flops_per_iteration = out.model_flops_per_iteration;
  auto seconds = layer_forward_seconds(graph, cost, micro, params.model.dtype);
  std::vector<double> tp_seconds(graph.size(), 0.0);
  if (tp > 1) {
    std::vector<int> group(tp);
    for (int k = 0; k < tp; ++k)
      group[k] = k;
    const GroupShape g = group_shape(platform, group);
    for (std::size_t i = 0; i < graph.size(); ++i)
      tp_seconds[i] = choose_collective("all-reduce", "auto", whole[i].activations.value * micro, g).seconds;
  }
  std::vector<double> pass(seconds.size());
  for (std::size_t i = 0; i < seconds.size(); ++i)
    pass[i] = 3 * seconds[i] + 2 * tp_seconds[i]; // forward + backward, what the partitioners balance
  const LayerStages stages = shape.graph_pipeline ? graph_stages(graph, pass, pp) : chain_stages(graph, pass, pp);
  out.stages.assign(pp, StageCost{});
  std::vector<double> activation_bytes(pp, 0.0); // per stage, per sample: the outputs its layers keep
  out.layers_per_stage.assign(pp, 0);
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const int s = stages.stage_of[i];
    StageCost& c = out.stages[s];
    const double f = seconds[i] + tp_seconds[i], b = 2 * seconds[i] + tp_seconds[i];
    c.forward_s += f;
    c.backward_s += b;
    c.weight_s += seconds[i];
    c.params += graph[i].params;
    c.segments.push_back({"layer", static_cast<int>(i), f, b, seconds[i], graph[i].params, false});
    activation_bytes[s] += graph[i].activations.value / tp;
    ++out.layers_per_stage[s];
  }
  out.tp_seconds_per_layer = 0;
  for (std::size_t i = 0; i < graph.size(); ++i) { // per layer on average, as the transformer reports it
    out.tp_seconds_per_layer += 2 * tp_seconds[i] / graph.size();
    out.tp_bytes_per_layer += tp > 1 ? 2 * 2.0 * (tp - 1) * whole[i].activations.value * micro / graph.size() : 0.0;
  }
  for (int s = 0; s < pp; ++s) {
    StageCost& c = out.stages[s];
    c.model = "roofline";
    if (shape.graph_pipeline) {
      c.successors = stages.successors[s];
      for (double b : stages.edge_bytes[s])
        c.successor_bytes.push_back(b * micro / tp);
    } else if (!stages.edge_bytes[s].empty()) {
      c.activation_bytes = stages.edge_bytes[s][0] * micro / tp;
    }
  }
  // Per device (one stage each): weights, gradients and Adam state (16 bytes per parameter in 16-bit mixed
  // precision, sharded by ZeRO as for transformers), its layers' outputs per sample x micro x microbatches held,
  // and the gradient bucket.
  const double e = dtype_bytes(params.model.dtype), bucket = params.gradient_bucket.value;
  const int zero = shape.parallel.zero, dp = shape.parallel.shard_dp(); // the replicas ZeRO shards over
  std::vector<double> stage_params;
  for (const auto& c : out.stages)
    stage_params.push_back(c.params);
  out.memory = [stage_params, activation_bytes, e, bucket, zero, dp, micro](int device, int in_flight,
                                                                            const MoeMemoryUse&) {
    MemoryFootprint f;
    const double p = stage_params[device];
    f.parameters = p * e / (zero >= 3 ? dp : 1);
    f.gradients = p * e / (zero >= 2 ? dp : 1);
    f.optimizer = p * 12.0 / (zero >= 1 ? dp : 1);
    f.activations = activation_bytes[device] * micro * in_flight;
    f.buffers = bucket;
    return f;
  };
  return out;
}

} // namespace cs
