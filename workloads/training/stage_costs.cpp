#include "workloads/training/stage_costs.hpp"

#include "models/collectives/collective_model.hpp"
#include "models/transformer/pass_cost.hpp"
#include "models/transformer/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs {

double StageCost::seconds(int pass) const
{
  switch (pass) {
  case 0:
    return forward_s;
  case 1:
    return backward_s;
  case 2:
    return backward_s - weight_s;
  default:
    return weight_s;
  }
}

std::vector<int> partition_layers(int layers, int pp, int v, double layer_s, double head_s, bool balanced)
{
  const int stages = pp * v;
  std::vector<int> out(stages, layers / stages);
  if (!balanced || pp == 1) {
    for (int s = 0; s < layers % stages; ++s)
      ++out[s];
    return out;
  }
  // Uniform layers, and the last device also runs the output layer: choose how many layers that device keeps so
  // that the slowest device is fastest (ties: the more even split); the other devices share the rest.
  int best_last = v;
  double best = INFINITY;
  for (int last = v; last <= layers - (pp - 1) * v; ++last) {
    const double others = std::ceil(double(layers - last) / (pp - 1)) * layer_s;
    const double slowest = std::max(others, last * layer_s + head_s);
    if (slowest <= best + 1e-15) {
      best = std::min(best, slowest);
      best_last = last;
    }
  }
  std::vector<int> device(pp);
  const int rest = layers - best_last;
  for (int d = 0; d < pp - 1; ++d)
    device[d] = rest / (pp - 1) + (d < rest % (pp - 1) ? 1 : 0);
  device[pp - 1] = best_last;
  // Device d's chunks are virtual stages d, d + pp, ...; earlier chunks take any remainder.
  for (int d = 0; d < pp; ++d)
    for (int c = 0; c < v; ++c)
      out[c * pp + d] = device[d] / v + (c < device[d] % v ? 1 : 0);
  return out;
}

double tp_block_collective_seconds(const ModelParams& m, int micro, int tp, bool sequence_parallel,
                                   const PlatformSpec& platform)
{
  if (tp <= 1)
    return 0.0;
  std::vector<int> group(tp);
  for (int k = 0; k < tp; ++k)
    group[k] = k;
  const GroupShape shape = group_shape(platform, group);
  const double bytes = double(micro) * m.seq * m.hidden * dtype_bytes(m.dtype);
  return sequence_parallel ? choose_collective("reduce-scatter", "auto", bytes, shape).seconds +
                                 choose_collective("all-gather", "auto", bytes, shape).seconds
                           : choose_collective("all-reduce", "auto", bytes, shape).seconds;
}

namespace {

// The weight-gradient GEMMs of a backward pass.
std::vector<NamedKernel> weight_gradients(const std::vector<NamedKernel>& backward)
{
  std::vector<NamedKernel> out;
  for (const auto& k : backward)
    if (k.name.size() > 6 && k.name.compare(k.name.size() - 6, 6, "_wgrad") == 0)
      out.push_back(k);
  return out;
}

// A layer pass of one microbatch on one TP rank, with its TP collectives and (full recomputation) its rerun forward.
struct LayerTimes {
  double forward = 0, backward = 0, weight = 0, head_forward = 0, head_backward = 0, head_weight = 0, tp = 0;
  std::string model;
};

LayerTimes layer_times(const TrainingParams& w, const KernelCostModel& cost, const PlatformSpec& platform)
{
  const ModelParams& m = w.model;
  const int tp = w.parallel.tp;
  const bool sp = w.parallel.sequence_parallel && tp > 1;
  const auto [attn, mlp] = layer_forward_blocks(m, w.batch.micro, tp, sp);
  auto layer = attn;
  layer.insert(layer.end(), mlp.begin(), mlp.end());
  const auto head = head_forward_kernels(m, w.batch.micro);
  const PassCost forward = pass_cost(cost, layer);
  LayerTimes t;
  t.model = forward.model;
  t.tp = tp_block_collective_seconds(m, w.batch.micro, tp, sp, platform);
  t.forward = forward.seconds + 2 * t.tp;
  const auto backward = backward_kernels(layer);
  t.backward = pass_cost(cost, backward).seconds + 2 * t.tp;
  t.weight = pass_cost(cost, weight_gradients(backward)).seconds;
  if (m.recompute == "full") // the forward pass runs again inside backward
    t.backward += t.forward;
  // The output layer is vocabulary-parallel in Megatron: each TP rank computes 1/tp of the logits.
  const auto head_backward = backward_kernels(head);
  t.head_forward = pass_cost(cost, head).seconds / tp;
  t.head_backward = pass_cost(cost, head_backward).seconds / tp;
  t.head_weight = pass_cost(cost, weight_gradients(head_backward)).seconds / tp;
  return t;
}

} // namespace

StageSet transformer_stages(const TrainingParams& w, const KernelCostModel& cost, const PlatformSpec& platform,
                            const StageShape& shape)
{
  const ModelParams& m = w.model;
  const int pp = shape.pp, v = shape.chunks, stages = pp * v, tp = w.parallel.tp;
  if (w.parallel.stage_layers.empty() && w.parallel.partition == "even" && m.layers % stages != 0)
    throw std::invalid_argument("layers do not divide into pp x vpp stages");
  if (m.layers < stages)
    throw std::invalid_argument("fewer layers than pp x vpp stages");
  const LayerTimes t = layer_times(w, cost, platform);
  StageSet out;
  out.parameters = total_parameters(m);
  out.model_flops_per_iteration = megatron_model_flops(m, w.batch.global);
  // TP collectives per layer and microbatch: 2 forward, 2 backward, 2 more when full recomputation reruns forward.
  const int collectives = m.recompute == "full" ? 6 : 4;
  out.tp_seconds_per_layer = collectives * t.tp;
  // A ring all-reduce (or reduce-scatter plus all-gather) of S bytes moves 2 (tp - 1) / tp S from each of tp ranks.
  out.tp_bytes_per_layer =
      tp > 1 ? collectives * 2.0 * (tp - 1) * double(w.batch.micro) * m.seq * m.hidden * dtype_bytes(m.dtype) : 0.0;
  out.layers_per_stage = partition_layers(m.layers, pp, v, t.forward + t.backward, t.head_forward + t.head_backward,
                                          w.parallel.partition == "balanced");
  if (!w.parallel.stage_layers.empty()) {
    if (static_cast<int>(w.parallel.stage_layers.size()) != stages)
      throw std::invalid_argument("stage_layers needs one entry per virtual stage");
    out.layers_per_stage = w.parallel.stage_layers;
  }
  const double activation = double(w.batch.micro) * m.seq * m.hidden * dtype_bytes(m.dtype);
  int first_layer = 0;
  for (int vs = 0; vs < stages; ++vs) {
    StageCost c;
    const int here = out.layers_per_stage[vs];
    const bool last = vs == stages - 1;
    c.forward_s = here * t.forward + (last ? t.head_forward : 0.0);
    c.backward_s = here * t.backward + (last ? t.head_backward : 0.0);
    c.weight_s = here * t.weight + (last ? t.head_weight : 0.0);
    c.params = here * layer_parameters(m) / tp;
    c.activation_bytes = activation / tp; // Megatron's scatter/gather: each TP rank sends its 1/tp
    c.model = t.model;
    if (vs == 0) { // the embedding (tied with the head) is reduced with the first stage
      c.params += embedding_parameters(m) / tp;
      // ZeRO-3 gathers it once per microbatch, for the lookup and (tied) the logits, and keeps it for backward.
      c.segments.push_back({"embedding", -1, 0, 0, 0, embedding_parameters(m) / tp, true});
    }
    for (int l = 0; l < here; ++l)
      c.segments.push_back(
          {"layer", first_layer + l, t.forward, t.backward, t.weight, layer_parameters(m) / tp, false});
    if (last) { // an untied output layer is the last stage's own
      c.params += head_parameters(m) / tp;
      c.segments.push_back(
          {"head", m.layers, t.head_forward, t.head_backward, t.head_weight, head_parameters(m) / tp, true});
    }
    first_layer += here;
    out.stages.push_back(std::move(c));
  }
  const auto stage_layers = out.layers_per_stage;
  const TrainingParams params = w;
  const int dp = shape.dp;
  out.memory = [stage_layers, params, dp, pp, v](int device, int in_flight) {
    MemoryLayout layout;
    layout.dp = dp;
    layout.pp = pp;
    layout.tp = params.parallel.tp;
    layout.zero = params.parallel.zero;
    layout.sequence_parallel = params.parallel.sequence_parallel && params.parallel.tp > 1;
    layout.bucket_bytes = params.gradient_bucket.value;
    layout.layers_on_device = 0;
    for (int c = 0; c < v; ++c)
      layout.layers_on_device += stage_layers[c * pp + device];
    layout.in_flight_microbatches = (in_flight + v - 1) / v;
    return transformer_memory(params.model, params.batch.micro, layout);
  };
  return out;
}

} // namespace cs
